import type { SharedAllowance } from '../load/index.ts';
import { DEFAULT_MAX_WAIT_MS, isAnswerOfItsOwn, num, parsePolicy, type RateBudget } from './budget.ts';
import { QuotaExhaustedError } from './errors.ts';
import { sleep as abortableSleep } from './sleep.ts';

/** As in budget.ts: the server's window boundary and the catalog's are not the same instant. */
const RESET_MARGIN_MS = 250;

export interface SharedBudgetOptions {
  host: string;
  allowance: SharedAllowance;
  maxWaitMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A failure to report an answer to the catalog (the next take still works from what it holds). */
  onError?: (error: unknown) => void;
}

/**
 * The rate budget of a worker that shares a catalog with others: every request takes its compute units
 * from the catalog's count for the host (one window for all workers), and every answer's `ratelimit-*`
 * headers correct that count. Until the first answer tells the allowance, a worker sends one request at
 * a time, as the local budget does; a host whose answers carry no such headers is paced by the
 * pipeline's concurrency alone.
 */
export function createSharedBudget(options: SharedBudgetOptions): RateBudget {
  const { host, allowance } = options;
  const sleep = options.sleep ?? abortableSleep;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  let probing = false;
  let untold = false;
  let waitedMs = 0;
  let limit: number | undefined;
  // Reports go out in order, so an older answer never overwrites a newer one.
  let reported: Promise<void> = Promise.resolve();

  return {
    async acquire(cost, signal) {
      for (;;) {
        const take = await allowance.take(host, cost);
        if (take.kind === 'taken') return;
        if (take.kind === 'unknown') {
          if (!probing || untold) {
            probing = true;
            return;
          }
          await sleep(20, signal);
          continue;
        }
        limit = take.limit;
        const waitMs = take.ms + RESET_MARGIN_MS;
        if (waitMs > maxWaitMs)
          throw new QuotaExhaustedError(host, take.limit, take.windowSeconds, new Date(Date.now() + waitMs));
        waitedMs += waitMs;
        await sleep(waitMs, signal);
      }
    },

    settle(_cost, status, headers) {
      probing = false;
      const headerLimit = num(headers['ratelimit-limit']);
      const remaining = num(headers['ratelimit-remaining']);
      const resetSeconds = num(headers['ratelimit-reset']);
      // A 429 without ratelimit headers (a proxy, an injected fault) says nothing about the window.
      if (headerLimit === undefined || remaining === undefined || resetSeconds === undefined) {
        if (isAnswerOfItsOwn(status)) untold = true;
        return;
      }
      limit = headerLimit;
      const windowSeconds =
        parsePolicy(headers['ratelimit-policy']).find((p) => p.limit === headerLimit)?.windowSeconds ??
        Math.max(1, Math.ceil(resetSeconds));
      reported = reported
        .then(() =>
          allowance.learn(host, {
            limit: headerLimit,
            remaining: status === 429 ? 0 : remaining,
            resetSeconds,
            windowSeconds,
          }),
        )
        .catch((error: unknown) => options.onError?.(error));
      if (status === 429 && resetSeconds * 1000 > maxWaitMs)
        throw new QuotaExhaustedError(
          host,
          headerLimit,
          windowSeconds,
          new Date(Date.now() + resetSeconds * 1000),
        );
    },

    stats: () => ({ waitedMs, ...(limit !== undefined ? { limit } : {}) }),
  };
}
