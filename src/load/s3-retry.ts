import { setTimeout as sleep } from 'node:timers/promises';
import type { S3ClientConfig } from '@aws-sdk/client-s3';

/**
 * How the lake's S3 client retries: every request gets its attempts (AWS_MAX_ATTEMPTS), each retry after
 * an exponential backoff with jitter, longer when the server throttles and at least as long as its
 * Retry-After; only throttling and transient failures (5xx, timeouts, dropped connections) are retried.
 *
 * Why not the SDK's standard strategy: it also keeps one retry quota per client (500 tokens; a retry
 * takes 14, given back if it succeeds, and a request that succeeds at once adds 1), a circuit breaker for
 * fleets of callers, where retrying through an outage only deepens it. avalake is one batch process with
 * a few requests in flight: when a burst of 5xx or dropped connections drains that quota (retries that
 * fail again keep their tokens), the SDK stops retrying every request, even one on its first failure,
 * and the run stops until the next cron. Backoff and the attempt limit already bound what a run adds to
 * an outage, so a run rides a burst out, or fails only after a request has had all its attempts.
 */

/** The SDK's retry strategy interface (v2), taken from the client's own configuration type. */
type RetryStrategyV2 = Extract<
  NonNullable<S3ClientConfig['retryStrategy']>,
  { acquireInitialRetryToken: unknown }
>;
type RetryToken = Awaited<ReturnType<RetryStrategyV2['acquireInitialRetryToken']>>;
export type RetryErrorInfo = Parameters<RetryStrategyV2['refreshRetryTokenForRetry']>[1];
export type RetryErrorType = RetryErrorInfo['errorType'];

/** The backoff's first step, and for throttling (the server asked for less traffic, so longer). */
const BASE_DELAY_MS = 100;
const THROTTLED_BASE_DELAY_MS = 1_000;
/** No wait between attempts is longer, whatever the step or the server's Retry-After. */
export const MAX_RETRY_DELAY_MS = 20_000;

/**
 * The wait before retry number `retry + 1`: the exponential step (doubling from the base, capped),
 * jittered between its half and its whole so that concurrent requests spread out yet each backs off;
 * never shorter than the server's Retry-After, never longer than the cap.
 */
export function retryDelay(
  retry: number,
  type: RetryErrorType,
  retryAfter?: Date,
  now = Date.now(),
  random: () => number = Math.random,
): number {
  const base = type === 'THROTTLING' ? THROTTLED_BASE_DELAY_MS : BASE_DELAY_MS;
  const step = Math.min(MAX_RETRY_DELAY_MS, base * 2 ** retry);
  const jittered = Math.floor(step / 2 + (random() * step) / 2);
  const asked = retryAfter ? retryAfter.getTime() - now : 0;
  return Math.min(MAX_RETRY_DELAY_MS, Math.max(jittered, asked));
}

const token = (retries: number, delay: number): RetryToken => ({
  getRetryCount: () => retries,
  getRetryDelay: () => delay,
});

/**
 * The strategy the S3 client runs each request through. The SDK classifies each failure (`errorType`)
 * and waits the token's delay itself (cut short if the request is aborted); a refusal here hands the
 * request's last error back to the caller.
 */
export function boundedRetryStrategy(
  maxAttempts: number,
  random: () => number = Math.random,
): RetryStrategyV2 {
  return {
    acquireInitialRetryToken: async () => token(0, 0),
    async refreshRetryTokenForRetry(previous, info) {
      const retries = previous.getRetryCount();
      if (info.errorType !== 'THROTTLING' && info.errorType !== 'TRANSIENT')
        throw new Error(`not retried: ${info.errorType}`);
      if (retries + 1 >= maxAttempts) throw new Error(`not retried: ${maxAttempts} attempts made`);
      // The SDK's own hint reads a Retry-After date against this host's clock: ours, from the error's
      // response, against the response's Date; the SDK's still serves a header we do not read.
      const retryAfter = retryAfterOf(info.error) ?? info.retryAfterHint;
      return token(retries + 1, retryDelay(retries, info.errorType, retryAfter, Date.now(), random));
    },
    recordSuccess: () => {},
  };
}

/** Error names and codes of failures worth another attempt, as the SDK sorts them. */
const THROTTLING_NAMES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
]);
const TRANSIENT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const TRANSIENT_STATUS = new Set([500, 502, 503, 504]);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** How deep `cause` chains are followed (a network error is often wrapped). */
const CAUSE_DEPTH = 5;

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  cause?: unknown;
  $retryable?: { throttling?: boolean };
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
}

/**
 * The SDK's categories for an error its retry middleware never classified: it does not retry a request
 * whose body is a stream (it cannot send the stream again), so `retryStreamed` does, with this.
 */
export function errorTypeOf(error: unknown, depth = 0): RetryErrorType {
  if (typeof error !== 'object' || error === null) return 'CLIENT_ERROR';
  const e = error as SdkErrorShape;
  if (e.name === 'AbortError') return 'CLIENT_ERROR';
  const status = e.$metadata?.httpStatusCode;
  if (status === 429 || THROTTLING_NAMES.has(String(e.name)) || e.$retryable?.throttling) return 'THROTTLING';
  if (
    e.$retryable !== undefined ||
    TRANSIENT_NAMES.has(String(e.name)) ||
    NETWORK_CODES.has(String(e.code)) ||
    (status !== undefined && TRANSIENT_STATUS.has(status))
  )
    return 'TRANSIENT';
  if (e.cause !== undefined && depth < CAUSE_DEPTH) {
    const cause = errorTypeOf(e.cause, depth + 1);
    if (cause !== 'CLIENT_ERROR') return cause;
  }
  return status !== undefined && status >= 500 ? 'SERVER_ERROR' : 'CLIENT_ERROR';
}

/**
 * The server's Retry-After (seconds or an HTTP date) on a failed response, as a time on this host's
 * clock. A date is a time on the server's clock, so it is measured from the response's own `Date` where
 * it has one: from this host's clock, ten minutes behind the server's, "retry at +2 s" read as a wait
 * of ten minutes (cut to MAX_RETRY_DELAY_MS, every retry), and ten minutes ahead as no wait at all.
 */
export function retryAfterOf(error: unknown, now = Date.now()): Date | undefined {
  const headers = (error as SdkErrorShape | undefined)?.$response?.headers ?? {};
  const header = (wanted: string) => {
    const name = Object.keys(headers).find((h) => h.toLowerCase() === wanted);
    return name === undefined ? undefined : headers[name]?.trim();
  };
  const value = header('retry-after');
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return new Date(now + Number(value) * 1000);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  const sentAt = Date.parse(header('date') ?? '');
  return new Date(now + at - (Number.isNaN(sentAt) ? now : sentAt));
}

/**
 * Runs a request whose body is a stream (made afresh by `attempt`) under the same strategy, since the SDK
 * gives such a request one attempt: the last error when the strategy refuses another.
 */
export async function retryStreamed<T>(strategy: RetryStrategyV2, attempt: () => Promise<T>): Promise<T> {
  let current = await strategy.acquireInitialRetryToken('');
  for (;;) {
    try {
      const result = await attempt();
      strategy.recordSuccess(current);
      return result;
    } catch (error) {
      const info: RetryErrorInfo = { errorType: errorTypeOf(error) };
      const retryAfterHint = retryAfterOf(error);
      if (retryAfterHint) info.retryAfterHint = retryAfterHint;
      try {
        current = await strategy.refreshRetryTokenForRetry(current, info);
      } catch {
        throw error;
      }
      await sleep(current.getRetryDelay());
    }
  }
}
