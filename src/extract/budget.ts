import { QuotaExhaustedError } from './errors.ts';
import { sleep as abortableSleep } from './sleep.ts';

/**
 * A compute-unit budget shared by every request to one host. It reads the `ratelimit-*` headers of each
 * answer, so it knows before the server does when the window's allowance will run out, and waits for
 * the window's reset instead of bouncing off 429s. A wait longer than `maxWaitMs` means a long-window
 * quota (the per-day one) is spent: that ends the run cleanly instead of sleeping for hours.
 */
export interface RateBudget {
  /** Waits until `cost` CUs can be spent; resolves to a release for `settle`. */
  acquire(cost: number, signal?: AbortSignal): Promise<void>;
  /** Records an answer's headers (any status) for a request of `cost` that `acquire` let through. */
  settle(cost: number, status: number, headers: Readonly<Record<string, string | undefined>>): void;
  /** Snapshot for the run summary and benchmarks. */
  stats(): { waitedMs: number; limit?: number; remaining?: number };
}

export interface BudgetOptions {
  host: string;
  /** Longest wait for a window reset before it counts as an exhausted quota. */
  maxWaitMs?: number;
  /**
   * Milliseconds for measuring waits; a monotonic clock by default, so a wall clock stepped back (NTP)
   * while the run waits for its window does not make a per-minute wait look like a spent daily quota.
   */
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Safety margin after a reset: the server's window boundary and ours are not the same instant. */
const RESET_MARGIN_MS = 250;
/** The longest a run waits for a host's allowance; a longer wait is a spent quota, and ends the run. */
export const DEFAULT_MAX_WAIT_MS = 5 * 60_000;

interface Policy {
  limit: number;
  windowSeconds: number;
}

/** `6000;w=60, 1200000;w=86400` → windows, smallest first. */
export function parsePolicy(header: string | undefined): Policy[] {
  if (!header) return [];
  return header
    .split(',')
    .map((part) => /^\s*(\d+)\s*;\s*w=(\d+)/.exec(part))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ limit: Number(m[1]), windowSeconds: Number(m[2]) }))
    .sort((a, b) => a.windowSeconds - b.windowSeconds);
}

export function createRateBudget(options: BudgetOptions): RateBudget {
  const now = options.now ?? (() => performance.now());
  // The quota's reset as a date, on the wall clock (the same as `now` where a test gives it).
  const dateIn = (ms: number) => new Date((options.now ?? Date.now)() + ms);
  const sleep = options.sleep ?? abortableSleep;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;

  let known = false;
  // An answer came without the headers: this host does not tell its allowance (api-surfaces.md does not
  // promise them, and a gateway may strip them), so the pipeline's concurrency alone sets the pace.
  let untold = false;
  let limit: number | undefined;
  let remaining = 0;
  let resetAt = 0;
  let windowSeconds: number | undefined;
  let inFlight = 0;
  let reserved = 0;
  let waitedMs = 0;

  const exhausted = (waitMs: number) =>
    new QuotaExhaustedError(options.host, limit ?? 0, windowSeconds, dateIn(waitMs));

  return {
    async acquire(cost, signal) {
      for (;;) {
        // Until the first answer tells the allowance (or tells there is none), one request at a time.
        if (!known) {
          if (inFlight === 0 || untold) break;
          await sleep(20, signal);
          continue;
        }
        const t = now();
        if (t >= resetAt && limit !== undefined && resetAt !== 0) {
          remaining = limit;
          resetAt = 0;
        }
        if (remaining - reserved >= cost) break;
        if (inFlight > 0 && resetAt === 0) {
          // Answers in flight will refresh the headers; wait for them rather than guess.
          await sleep(20, signal);
          continue;
        }
        const waitMs = Math.max(0, resetAt - t) + RESET_MARGIN_MS;
        if (waitMs > maxWaitMs) throw exhausted(waitMs);
        waitedMs += waitMs;
        await sleep(waitMs, signal);
        // Note: no refill here. Waiters wake at different moments (resets are whole seconds); one that
        // wakes late must not restore an allowance that earlier wakers have already spent. The check at
        // the top of the loop refills once per window.
      }
      inFlight++;
      reserved += cost;
    },

    settle(cost, status, headers) {
      inFlight--;
      reserved -= cost;
      const headerLimit = num(headers['ratelimit-limit']);
      const headerRemaining = num(headers['ratelimit-remaining']);
      const headerReset = num(headers['ratelimit-reset']);
      if (headerLimit === undefined || headerRemaining === undefined || headerReset === undefined) {
        // A 429 without ratelimit headers (a proxy, an injected fault) says nothing about the window.
        if (isAnswerOfItsOwn(status)) untold = true;
        return;
      }
      const newResetAt = now() + headerReset * 1000;
      const sameWindow = known && Math.abs(newResetAt - resetAt) < 1500 && limit === headerLimit;
      known = true;
      limit = headerLimit;
      windowSeconds = parsePolicy(headers['ratelimit-policy']).find(
        (p) => p.limit === headerLimit,
      )?.windowSeconds;
      // Answers to concurrent requests arrive out of order: within one window the smallest count is newest.
      remaining = sameWindow ? Math.min(remaining, headerRemaining) : headerRemaining;
      if (status === 429) remaining = 0;
      resetAt = newResetAt;
      if (status === 429 && headerReset * 1000 > maxWaitMs) throw exhausted(headerReset * 1000);
    },

    stats: () => ({ waitedMs, ...(limit !== undefined ? { limit, remaining } : {}) }),
  };
}

/**
 * Whether an answer without `ratelimit-*` headers tells that its host does not send them: one the host
 * gave (2xx-4xx), not a failure to connect (status 0), a gateway's 5xx or a 429, which may come from a
 * proxy in front of a host that does.
 */
export const isAnswerOfItsOwn = (status: number): boolean => status >= 200 && status < 500 && status !== 429;

/** A header's number; undefined when absent or not a number. */
export const num = (v: string | undefined): number | undefined => {
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};
