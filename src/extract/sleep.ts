/**
 * The one wait of the code base: resolves after `ms`, or rejects with the abort reason as soon as any of
 * `signals` aborts (Ctrl-C, a spent quota, a host declared unreachable), so no wait outlives its run.
 */
export function sleep(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = signals.find((s) => s?.aborted);
    if (aborted) return reject(aborted.reason);
    const cleanup = () => {
      clearTimeout(timer);
      for (const s of signals) s?.removeEventListener('abort', onAbort);
    };
    const onAbort = (event: Event) => {
      cleanup();
      reject((event.target as AbortSignal).reason);
    };
    const timer = setTimeout(() => {
      cleanup();
      resolve();
    }, ms);
    for (const s of signals) s?.addEventListener('abort', onAbort, { once: true });
  });
}
