// @ts-check

/**
 * SIGINT and SIGTERM that arrive while the CLI starts (yargs, then the command's modules) are held
 * rather than left to kill the process. A command that stops on a signal (`run`, `extract`) has its own
 * handlers once it has started; `releaseSignals` then hands it the held signal, and it ends as
 * interrupted (exit 130, its report printed) instead of dying with 143 and no output. A command without
 * handlers gets node's default, as if nothing had been held.
 *
 * Note: plain JavaScript, like main.js and commands.js, which hold and release.
 */

const SIGNALS = /** @type {const} */ (['SIGINT', 'SIGTERM']);

/** @type {NodeJS.Signals | undefined} */
let held;

/** @param {NodeJS.Signals} signal */
const hold = (signal) => {
  held ??= signal;
};

export function holdSignals() {
  for (const signal of SIGNALS) process.on(signal, hold);
}

/** Stops holding; a signal held meanwhile is sent again, to whoever handles it now. */
export function releaseSignals() {
  for (const signal of SIGNALS) process.off(signal, hold);
  const signal = held;
  held = undefined;
  if (signal) process.kill(process.pid, signal);
}
