import pRetry, { AbortError } from 'p-retry';
import type { RateBudget } from './budget.ts';
import { FinalError, QuotaExhaustedError, type RequestLocation, RetryableError } from './errors.ts';
import type { HttpClient, HttpRequest } from './http.ts';

/** Attempts after the first before a request counts as failed (the run then exits 1, checkpoints kept). */
export const RETRY_COUNT = 8;
export const BASE_DELAY_MS = 250;
export const MAX_DELAY_MS = 30_000;
/** A 429 without `retry-after` or `ratelimit-reset` waits this long. */
export const DEFAULT_429_DELAY_MS = 1_000;

/** What the final statuses mean for the user, and what to do about them. */
const FINAL_ADVICE: Record<number, string> = {
  400: 'the service rejected the request parameters',
  401: 'the API key was not accepted: check --api-key or AVALAKE_API_KEY',
  403: 'the API key may not use this endpoint: use a key whose plan includes it',
  404: 'the service does not know this resource: check the chain id, address or network in the pipeline',
};

export interface FetchRequest extends HttpRequest {
  /** Compute units this request costs (0 for the node RPC). */
  cost: number;
  budget?: RateBudget;
  at: Omit<RequestLocation, 'request'>;
}

export interface FetcherOptions {
  http: HttpClient;
  log?: (event: Record<string, unknown>) => void;
  retries?: number;
  baseDelayMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export type Fetcher = (request: FetchRequest) => Promise<unknown>;

/**
 * The one retry policy: every request of every stream goes through here. It spends CUs from the
 * host's budget, classifies the answer (retryable or final), waits as the server asks on 429 and
 * backs off exponentially with full jitter otherwise.
 */
export function createFetcher(options: FetcherOptions): Fetcher {
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const baseDelayMs = options.baseDelayMs ?? BASE_DELAY_MS;

  return (request) => {
    const at: RequestLocation = { ...request.at, request: `${request.method ?? 'GET'} ${request.url}` };
    const attempt = async () => {
      if (request.budget) await request.budget.acquire(request.cost, request.signal);
      let answer: Awaited<ReturnType<HttpClient['send']>>;
      try {
        answer = await options.http.send(request);
      } catch (error) {
        request.budget?.settle(request.cost, 0, {});
        if (request.signal?.aborted) throw new AbortError(request.signal.reason ?? (error as Error));
        const origin = new URL(request.url).origin;
        throw new RetryableError(
          `connection to ${origin} failed (${(error as Error).message}): is the service up, and is the URL in the pipeline or --base-url/--metrics-url/--node-url right?`,
          at,
          {},
          { cause: error },
        );
      }
      try {
        request.budget?.settle(request.cost, answer.status, answer.headers);
      } catch (error) {
        if (error instanceof QuotaExhaustedError) throw new AbortError(error);
        throw error;
      }
      return classify(answer, at);
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
        await sleep(delayMs, request.signal);
      },
    }).catch((error: unknown) => {
      // p-retry wraps what AbortError carried; hand the original (quota, abort reason) back.
      throw error instanceof AbortError ? error.originalError : error;
    });
  };
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
        `the answer was not complete JSON (${answer.text.length} bytes)`,
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
  if (status >= 500 || status === 408) throw new RetryableError(`server error ${status}`, at, { status });
  const serverMessage = messageOf(answer.text);
  const advice = FINAL_ADVICE[status] ?? `unexpected status ${status}`;
  throw new FinalError(`${advice}${serverMessage ? `: ${serverMessage}` : ''}`, at, status);
}

/** `retry-after` as seconds or an HTTP date, else `ratelimit-reset` seconds. */
export function retryAfterOf(
  headers: Record<string, string | undefined>,
  now = Date.now(),
): number | undefined {
  const value = headers['retry-after'] ?? headers['ratelimit-reset'];
  if (value === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
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
