/**
 * Runs `body` with a signal that the first SIGINT or SIGTERM aborts, so that the command stops as
 * interrupted (exit 130) at its next safe point. The handlers are set as this is called, before `body`'s
 * first await, which is where commands.js hands over a signal held while the CLI started; they are gone
 * when `body` ends. A second signal gets node's default and ends the process at once.
 */
export async function untilSignal<T>(body: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort(new Error('interrupted by a signal'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await body(interrupt.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
