// undici's Pool alone: its index loads every part of undici (fetch, WebSocket, mocks, caches), 60 ms of
// every run's start-up against 20 for the pool (built CLI, 2026-11-28). See undici-pool.d.ts.
import type { Dispatcher, Pool } from 'undici';
import PoolClass from 'undici/lib/dispatcher/pool.js';

/** One answer, body read in full as text. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}

export interface HttpRequest {
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  signal?: AbortSignal;
}

export interface HttpClient {
  send(request: HttpRequest): Promise<HttpAnswer>;
  close(): Promise<void>;
}

export interface HttpOptions {
  userAgent: string;
  /** Sent as both `x-data-api-key` (the spec) and `x-glacier-api-key` (the OpenAPI) to data-service hosts. */
  apiKey?: string;
  /** Origins that receive the key; the metrics service and node take none. */
  keyedOrigins?: readonly string[];
  connectionsPerHost?: number;
  connectTimeoutMs?: number;
  /** Time to the first byte of headers, and between body chunks. */
  readTimeoutMs?: number;
  /** The longest a request may take in all, its body included (default REQUEST_DEADLINE_MS). */
  requestDeadlineMs?: number;
  /** The largest answer read (default MAX_ANSWER_BYTES). */
  maxAnswerBytes?: number;
}

/**
 * The longest one request may take, from its start to the answer's last byte. The read timeout alone
 * never ends a body that trickles in (a byte every few seconds): an answer of 40 KB would take hours,
 * and the run holds the data directory's lock all the while.
 */
export const REQUEST_DEADLINE_MS = 120_000;

/**
 * The largest answer read. A page of the services is tens of kilobytes and the node's largest answers a
 * few megabytes; past this it is not an answer to read (a misrouted download, a server gone wrong), and
 * holding it would take the memory the extract is held to.
 */
export const MAX_ANSWER_BYTES = 64 * 2 ** 20;

/** A request the client ended itself: over its deadline (retryable), or an answer too large (final). */
export class AnswerStoppedError extends Error {
  override name = 'AnswerStoppedError';
  constructor(
    readonly code: 'AVALAKE_REQUEST_DEADLINE' | 'AVALAKE_ANSWER_TOO_LARGE',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Why an API key cannot be sent (it travels as an HTTP header value), or undefined. Names the kind of
 * character and where it is, never the key. Keys are printable ASCII; a stray character is nearly
 * always from the file or the copy it came from.
 */
export function apiKeyProblem(key: string): string | undefined {
  const at = key.search(/[^\x20-\x7e]|^ | $/);
  if (at < 0) return undefined;
  const code = key.codePointAt(at) as number;
  const where =
    key.slice(at + 1).trim() === ''
      ? 'at the end'
      : at === 0
        ? 'at the start'
        : `at character ${at + 1} of ${key.length}`;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  const what =
    code === 0x0d
      ? `a carriage return ${where} (the file it came from may have Windows line endings)`
      : code === 0x0a
        ? `a line break ${where}`
        : code === 0x20
          ? `a space ${where}`
          : code === 0xfeff
            ? `a byte-order mark (${hex}) ${where} (the file it came from was saved with one)`
            : code < 0x20 || code === 0x7f
              ? `a control character (${hex}) ${where}`
              : `a non-ASCII character (${hex}) ${where} (copied from a formatted document?)`;
  return `has ${what}; a key is sent as an HTTP header and holds only printable ASCII characters: remove it. The key itself is not shown.`;
}

/** Keep-alive connection pools, one per origin; the only place that touches the network. */
export function createHttpClient(options: HttpOptions): HttpClient {
  // undici refuses such a header on every request, and a pool that refused some hangs later requests
  // (undici 7.30): refuse the key once, here, rather than retry for ever. The configuration says it first.
  const keyProblem = options.apiKey === undefined ? undefined : apiKeyProblem(options.apiKey);
  if (keyProblem) throw new Error(`the API key ${keyProblem}`);
  const pools = new Map<string, Pool>();
  const poolFor = (origin: string) => {
    let pool = pools.get(origin);
    if (!pool) {
      pool = new PoolClass(origin, {
        connections: options.connectionsPerHost ?? 4,
        connectTimeout: options.connectTimeoutMs ?? 10_000,
        headersTimeout: options.readTimeoutMs ?? 30_000,
        bodyTimeout: options.readTimeoutMs ?? 30_000,
        keepAliveTimeout: 20_000,
      });
      pools.set(origin, pool);
    }
    return pool;
  };

  return {
    async send({ url, method = 'GET', body, signal }) {
      const u = new URL(url);
      const headers: Record<string, string> = { 'user-agent': options.userAgent, accept: 'application/json' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (options.apiKey && options.keyedOrigins?.includes(u.origin)) {
        headers['x-data-api-key'] = options.apiKey;
        headers['x-glacier-api-key'] = options.apiKey;
      }
      return dispatchForText(
        poolFor(u.origin),
        {
          path: `${u.pathname}${u.search}`,
          method,
          headers,
          ...(body !== undefined ? { body } : {}),
          ...(signal ? { signal } : {}),
        },
        {
          deadlineMs: options.requestDeadlineMs ?? REQUEST_DEADLINE_MS,
          maxBytes: options.maxAnswerBytes ?? MAX_ANSWER_BYTES,
        },
      );
    },
    async close() {
      await Promise.all([...pools.values()].map((p) => p.close()));
      pools.clear();
    },
  };
}

/**
 * One request through undici's dispatch, its body gathered as bytes and decoded once at the end: what
 * `request` and `body.text()` do, without a stream per answer in between (a fifth less CPU a request).
 */
function dispatchForText(
  pool: Dispatcher,
  request: Dispatcher.DispatchOptions & { signal?: AbortSignal },
  limits: { deadlineMs: number; maxBytes: number },
): Promise<HttpAnswer> {
  const { signal } = request;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let status = 0;
    let flat: Record<string, string | undefined> = {};
    const chunks: Buffer[] = [];
    let bytes = 0;
    let onAbort: (() => void) | undefined;
    let deadline: NodeJS.Timeout | undefined;
    const settled = () => {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      clearTimeout(deadline);
    };
    pool.dispatch(request, {
      onRequestStart(controller) {
        // It starts once a connection is free: the signal may have aborted while it waited for one.
        if (signal?.aborted) return controller.abort(signal.reason);
        deadline = setTimeout(
          () =>
            controller.abort(
              new AnswerStoppedError(
                'AVALAKE_REQUEST_DEADLINE',
                `no whole answer within ${limits.deadlineMs / 1000} s`,
              ),
            ),
          limits.deadlineMs,
        );
        if (!signal) return;
        onAbort = () => controller.abort(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      },
      onResponseStart(_controller, statusCode, headers) {
        // A 1xx answer comes before the real one.
        if (statusCode < 200) return;
        status = statusCode;
        flat = {};
        for (const [k, v] of Object.entries(headers)) flat[k] = Array.isArray(v) ? v.join(', ') : v;
      },
      onResponseData(controller, chunk) {
        bytes += chunk.length;
        if (bytes > limits.maxBytes)
          return controller.abort(
            new AnswerStoppedError(
              'AVALAKE_ANSWER_TOO_LARGE',
              `the answer is larger than ${limits.maxBytes / 2 ** 20} MiB, more than any page of the services`,
            ),
          );
        chunks.push(chunk);
      },
      onResponseEnd() {
        settled();
        const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        // A byte-order mark (some proxies add one) is no part of the text, as body.text() drops it too.
        const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
        resolve({ status, headers: flat, text: bytes.toString('utf8', bom) });
      },
      onResponseError(_controller, error) {
        settled();
        reject(error);
      },
    });
  });
}
