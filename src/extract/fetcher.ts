import pRetry, { AbortError } from 'p-retry';
import { processLimitOf } from '../load/index.ts';
import { DEFAULT_MAX_WAIT_MS, type RateBudget } from './budget.ts';
import {
  connectionFailureOf,
  DeadHostError,
  FinalError,
  QuotaExhaustedError,
  type RequestLocation,
  RetryableError,
  timeoutOf,
} from './errors.ts';
import type { HttpAnswer, HttpClient, HttpRequest } from './http.ts';
import { sleep as abortableSleep, allowWaiters } from './sleep.ts';

/** Attempts after the first before a request counts as failed (the run then exits 1, checkpoints kept). */
export const RETRY_COUNT = 8;
export const BASE_DELAY_MS = 250;
export const MAX_DELAY_MS = 30_000;
/** A 429 without `retry-after` or `ratelimit-reset` waits this long. */
export const DEFAULT_429_DELAY_MS = 1_000;
/**
 * A host is declared unreachable once this many connection attempts, spread over at least
 * DEAD_HOST_AFTER_MS, all failed before it answered (refused, unresolved, TLS) and none ever succeeded.
 * The span lets a service that is restarting as the run starts come up; once it answered, refusals keep
 * the full retry policy for the rest of the run (a restart mid-run).
 */
export const DEAD_HOST_ATTEMPTS = 4;
export const DEAD_HOST_AFTER_MS = 4_000;
/**
 * Requests that connected and got no whole answer in time (errors.ts, timeoutOf) declare a host dead
 * too, whether or not it answered earlier in the run, and so do connections refused (or unresolved,
 * unroutable, failing TLS) after its first answer: this many in a row with no answer of its own in
 * between, the first of them at least DEAD_HOST_TIMEOUTS_AFTER_MS before the last. At the read timeout of
 * 30 s that is a minute or two, where the full retry policy cost every partition of a hung service about
 * five minutes, one after another. Any answer starts the count over, so a host that answers anything at
 * least once a minute, however slowly, is never declared dead, and a restart shorter than a minute is
 * waited out.
 */
export const DEAD_HOST_TIMEOUTS = 6;
export const DEAD_HOST_TIMEOUTS_AFTER_MS = 60_000;

/** What the final statuses mean for the user, and what to do about them. */
const FINAL_ADVICE: Record<number, string> = {
  400: 'the service rejected the request parameters',
  401: 'the API key was not accepted: check --api-key or AVALAKE_API_KEY',
  403: 'the API key may not use this endpoint: use a key whose plan includes it',
  404: "the service does not know this resource: check the chain id, address or network in the pipeline, and that the base URL (--base-url, --metrics-url, --node-url or urls in the pipeline) is the service's",
};

export interface FetchRequest extends HttpRequest {
  /** Compute units this request costs (0 for the node RPC). */
  cost: number;
  budget?: RateBudget;
  at: Omit<RequestLocation, 'request'>;
  /** The source's clock (ms), from the `Date` header of a successful answer. */
  onDate?(ms: number): void;
}

export interface FetcherOptions {
  http: HttpClient;
  log?: (event: Record<string, unknown>) => void;
  retries?: number;
  baseDelayMs?: number;
  /** Must reject with the abort reason of any signal given, at once (see sleep.ts). */
  sleep?: (ms: number, ...signals: (AbortSignal | undefined)[]) => Promise<void>;
  deadHostAttempts?: number;
  deadHostAfterMs?: number;
  deadHostTimeouts?: number;
  deadHostTimeoutsAfterMs?: number;
  /** The longest wait a 429 may ask for before it counts as a spent quota (the budget's, DEFAULT_MAX_WAIT_MS). */
  maxRateWaitMs?: number;
  /** Milliseconds for the spans above; a monotonic clock by default. */
  now?: () => number;
  /** The most requests it is given at once (the run's concurrency): each may wait on its host's signal. */
  requestsAtOnce?: number;
}

/** What the fetcher knows of one origin's reachability this run. */
interface OriginHealth {
  /** An HTTP answer (any status) came back at least once. */
  answered: boolean;
  failures: number;
  firstFailureAt: number;
  /**
   * Requests in a row that got no whole answer in time, since the host's last answer; once it answered,
   * refused connections too.
   */
  timeouts: number;
  firstTimeoutAt: number;
  dead?: DeadHostError;
  /** Since when the host has answered nothing but 429s; unset by anything else (an answer, a failure). */
  limitedSince?: number;
  /** Its 429s went on past the longest wait for an allowance (maxRateWaitMs): taken as a spent quota. */
  spent?: QuotaExhaustedError;
  /** Aborted with the DeadHostError or the spent quota: ends every wait of a request to this origin at once. */
  down: AbortController;
}

export type Fetcher = (request: FetchRequest) => Promise<unknown>;

/**
 * The one retry policy: every request of every stream goes through here. It spends CUs from the
 * host's budget, classifies the answer (retryable or final), waits as the server asks on 429 and
 * backs off exponentially with full jitter otherwise.
 */
export function createFetcher(options: FetcherOptions): Fetcher {
  const sleep = options.sleep ?? abortableSleep;
  const baseDelayMs = options.baseDelayMs ?? BASE_DELAY_MS;
  // Spans of failures and of 429s: a monotonic clock, so a wall clock stepped (NTP, a VM resumed) does
  // not turn two failures into a minute of them.
  const now = options.now ?? (() => performance.now());
  const deadAttempts = options.deadHostAttempts ?? DEAD_HOST_ATTEMPTS;
  const deadAfterMs = options.deadHostAfterMs ?? DEAD_HOST_AFTER_MS;
  const deadTimeouts = options.deadHostTimeouts ?? DEAD_HOST_TIMEOUTS;
  const deadTimeoutsAfterMs = options.deadHostTimeoutsAfterMs ?? DEAD_HOST_TIMEOUTS_AFTER_MS;
  const maxRateWaitMs = options.maxRateWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const health = new Map<string, OriginHealth>();
  const healthOf = (origin: string) => {
    let h = health.get(origin);
    if (!h) {
      h = {
        answered: false,
        failures: 0,
        firstFailureAt: 0,
        timeouts: 0,
        firstTimeoutAt: 0,
        down: new AbortController(),
      };
      allowWaiters(h.down.signal, options.requestsAtOnce ?? 0);
      health.set(origin, h);
    }
    return h;
  };
  /** Counts a failed connection or a request unanswered; returns the host's DeadHostError once it has earned one. */
  const connectionFailed = (origin: string, h: OriginHealth, error: unknown) => {
    if (h.dead) return h.dead;
    const declare = (code: string, attempts: number, since: number) => {
      const spanMs = now() - since;
      h.dead = new DeadHostError(origin, code, attempts, spanMs / 1000, {
        cause: error,
        answered: h.answered,
      });
      h.down.abort(h.dead);
    };
    const code = connectionFailureOf(error);
    if (code !== undefined && !h.answered) {
      if (h.failures++ === 0) h.firstFailureAt = now();
      if (h.failures >= deadAttempts && now() - h.firstFailureAt >= deadAfterMs)
        declare(code, h.failures, h.firstFailureAt);
    }
    // Once the host answered, a refused connection is a restart until it lasts: it counts by the slow
    // rule, with the requests that connected and got no answer.
    const lost = timeoutOf(error) ?? (h.answered ? code : undefined);
    if (lost !== undefined) {
      if (h.timeouts++ === 0) h.firstTimeoutAt = now();
      if (h.timeouts >= deadTimeouts && now() - h.firstTimeoutAt >= deadTimeoutsAfterMs)
        declare(lost, h.timeouts, h.firstTimeoutAt);
    }
    return h.dead;
  };
  /**
   * Tracks a host's run of 429s. Each may ask for a short wait, but one that answers nothing else for
   * longer than the run ever waits for an allowance has no allowance to give: without this, every
   * partition would spend its whole retry policy on it (minutes each), one after another. Returns the
   * host's spent quota once it is one.
   */
  const rateLimited = (origin: string, h: OriginHealth, answer: HttpAnswer) => {
    // Anything else (a 5xx of an outage too) ends the run of 429s: "nothing but 429" means just that,
    // and a run that meets an outage between two 429s must fail as one, not end as a spent quota.
    if (answer.status !== 429) {
      h.limitedSince = undefined;
      return undefined;
    }
    h.limitedSince ??= now();
    const forMs = now() - h.limitedSince;
    if (!h.spent && forMs > maxRateWaitMs) {
      const retryAfterMs = retryAfterOf(answer.headers) ?? DEFAULT_429_DELAY_MS;
      h.spent = new QuotaExhaustedError(
        origin,
        undefined,
        undefined,
        new Date(Date.now() + retryAfterMs),
        forMs,
      );
      h.down.abort(h.spent);
    }
    return h.spent;
  };

  return (request) => {
    const at: RequestLocation = { ...request.at, request: `${request.method ?? 'GET'} ${request.url}` };
    const origin = new URL(request.url).origin;
    const host = healthOf(origin);
    const attempt = async () => {
      const stopped = host.dead ?? host.spent;
      if (stopped) throw new AbortError(stopped);
      if (request.budget) await request.budget.acquire(request.cost, request.signal);
      let answer: Awaited<ReturnType<HttpClient['send']>>;
      try {
        answer = await options.http.send(request);
      } catch (error) {
        request.budget?.settle(request.cost, 0, {});
        if (request.signal?.aborted) throw new AbortError(request.signal.reason ?? (error as Error));
        // A request the client refuses to send as built (undici's invalid argument) fails the same way
        // every time: retrying it only waits, and undici's pools have hung on such retries.
        if ((error as { code?: unknown }).code === 'UND_ERR_INVALID_ARG')
          throw new AbortError(
            new FinalError(`the request could not be sent: ${(error as Error).message}`, at, undefined, {
              cause: error,
            }),
          );
        // An answer past any page's size fails the same way every time.
        if ((error as { code?: unknown }).code === 'AVALAKE_ANSWER_TOO_LARGE')
          throw new AbortError(new FinalError((error as Error).message, at, undefined, { cause: error }));
        // No connection this process may open (too many open files, no memory for the HTTP parser's
        // WebAssembly) is the process's limit, not the host's: not retried, and the run stops on it.
        if (processLimitOf(error) !== undefined) throw new AbortError(error as Error);
        host.limitedSince = undefined;
        const dead = connectionFailed(origin, host, error);
        if (dead) throw new AbortError(dead);
        throw new RetryableError(
          host.answered
            ? `the answer from ${origin} did not come whole (${(error as Error).message})`
            : `connection to ${origin} failed (${(error as Error).message}): is the service up, and is the URL in the pipeline or --base-url/--metrics-url/--node-url right?`,
          at,
          {},
          { cause: error },
        );
      }
      host.answered = true;
      // Any answer, even a 5xx, shows the host is not hung: its timeouts count from zero again.
      host.timeouts = 0;
      try {
        request.budget?.settle(request.cost, answer.status, answer.headers);
      } catch (error) {
        if (error instanceof QuotaExhaustedError) throw new AbortError(error);
        throw error;
      }
      const spent = rateLimited(origin, host, answer);
      if (spent) throw new AbortError(spent);
      const body = classifyOrStop(answer, at, origin, maxRateWaitMs);
      const date = Date.parse(answer.headers.date ?? '');
      if (!Number.isNaN(date)) request.onDate?.(date);
      return body;
    };
    return pRetry(attempt, {
      retries: options.retries ?? RETRY_COUNT,
      // Delays are ours (onFailedAttempt): p-retry has no hook to honour retry-after.
      minTimeout: 0,
      factor: 1,
      ...(request.signal ? { signal: request.signal } : {}),
      shouldRetry: ({ error }) => error instanceof RetryableError,
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        if (!(error instanceof RetryableError) || retriesLeft === 0) return;
        const delayMs =
          error.detail.status === 429
            ? (error.detail.retryAfterMs ?? DEFAULT_429_DELAY_MS)
            : Math.random() * Math.min(MAX_DELAY_MS, baseDelayMs * 2 ** (attemptNumber - 1));
        options.log?.({
          level: 'warn',
          msg: 'retrying',
          reason: error.message,
          status: error.detail.status,
          attempt: attemptNumber,
          delayMs: Math.round(delayMs),
          stream: at.stream,
          partition: at.partition,
        });
        // Note: the wait ends early on an interrupt, a spent quota, or this host declared unreachable.
        await sleep(delayMs, request.signal, host.down.signal);
      },
    }).catch((error: unknown) => {
      // p-retry wraps what AbortError carried; hand the original (quota, abort reason) back.
      throw error instanceof AbortError ? error.originalError : error;
    });
  };
}

/**
 * classify, where a 429 that asks for a wait longer than the budget ever waits (retry-after of hours,
 * no `ratelimit-*` headers to tell the budget) is a spent quota: the run ends cleanly, as the budget ends
 * it, instead of sleeping for hours while holding the data directory's lock.
 */
function classifyOrStop(answer: HttpAnswer, at: RequestLocation, origin: string, maxWaitMs: number) {
  try {
    return classify(answer, at);
  } catch (error) {
    const waitMs =
      error instanceof RetryableError && error.detail.status === 429 ? error.detail.retryAfterMs : 0;
    if (waitMs !== undefined && waitMs > maxWaitMs)
      throw new AbortError(
        new QuotaExhaustedError(origin, undefined, undefined, new Date(Date.now() + waitMs)),
      );
    throw error;
  }
}

function classify(
  answer: { status: number; headers: Record<string, string | undefined>; text: string },
  at: RequestLocation,
) {
  const { status } = answer;
  if (status >= 200 && status < 300) {
    try {
      return JSON.parse(answer.text) as unknown;
    } catch (cause) {
      throw new RetryableError(
        `the answer was not complete JSON (${describeBody(answer)})`,
        at,
        { status },
        { cause },
      );
    }
  }
  if (status === 429) {
    const retryAfterMs = retryAfterOf(answer.headers);
    throw new RetryableError('rate limited (429)', at, {
      status,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  const serverMessage = messageOf(answer.text);
  if (status >= 500 || status === 408)
    throw new RetryableError(`server error ${status}${serverMessage ? `: ${serverMessage}` : ''}`, at, {
      status,
    });
  const advice = FINAL_ADVICE[status] ?? `unexpected status ${status}`;
  throw new FinalError(`${advice}${serverMessage ? `: ${serverMessage}` : ''}`, at, status);
}

/**
 * `retry-after` as seconds or an HTTP date, else `ratelimit-reset` seconds. A date is a time on the
 * server's clock, so it is measured from the answer's own `Date` where there is one: from this host's
 * clock, ten minutes behind the server's, "retry at +2 s" read as a wait of 10 minutes (more than a run
 * waits: a spent quota, every run until NTP fixed it), and ten minutes ahead as no wait at all.
 */
export function retryAfterOf(
  headers: Record<string, string | undefined>,
  now = Date.now(),
): number | undefined {
  const value = headers['retry-after'] ?? headers['ratelimit-reset'];
  if (value === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  const sentAt = Date.parse(headers.date ?? '');
  return Math.max(0, date - (Number.isNaN(sentAt) ? now : sentAt));
}

/**
 * What an answer that is not JSON was: its size, and what the server said it is (a gateway's HTML page,
 * a compressed body avalake never asked for), with its start when it is text.
 */
function describeBody(answer: HttpAnswer): string {
  const type = answer.headers['content-type'];
  const encoding = answer.headers['content-encoding'];
  const parts = [`${answer.text.length} bytes`];
  if (encoding && encoding !== 'identity')
    parts.push(`content-encoding ${encoding}, which avalake does not ask for`);
  else {
    if (type) parts.push(type);
    const start = answer.text.trim().slice(0, 80).replace(/\s+/g, ' ');
    if (start) parts.push(`starting ${JSON.stringify(start)}`);
  }
  return parts.join(', ');
}

function messageOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (Array.isArray(body.message)) return body.message.join('; ');
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not an ErrorBody: fall through to the raw text, shortened.
  }
  return text.trim().slice(0, 200) || undefined;
}
