import { EventEmitter, setMaxListeners } from 'node:events';

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

/**
 * Lets `waiters` waits at once listen to `signal` (a sleep above, a request in flight in http.ts) without
 * Node's MaxListenersExceededWarning, which it gives past 10 listeners as a sign of a leak. Each wait
 * removes its listener as it ends, so one per concurrent request is the signal's use, not a leak; more
 * than `waiters` is still reported.
 */
export function allowWaiters(signal: AbortSignal, waiters: number): void {
  setMaxListeners(Math.max(EventEmitter.defaultMaxListeners, waiters), signal);
}
