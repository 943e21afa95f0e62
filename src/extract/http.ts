import { Pool } from 'undici';

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
}

/**
 * Why `value` cannot be an HTTP header's value (visible ASCII, spaces and tabs), or undefined when it
 * can. A key read from a file with Windows line endings ends in a carriage return, the most common case.
 */
export function headerValueProblem(value: string): string | undefined {
  if (value.endsWith('\r')) return 'it ends with a carriage return (a file with Windows line endings?)';
  const bad = /[^\t\x20-\x7e]/.exec(value);
  if (!bad) return undefined;
  const code = bad[0].codePointAt(0) ?? 0;
  const what = code < 0x20 || code === 0x7f ? 'a control character' : 'a character outside ASCII';
  return `it holds ${what} (U+${code.toString(16).toUpperCase().padStart(4, '0')}) at position ${bad.index + 1}`;
}

/** Keep-alive connection pools, one per origin; the only place that touches the network. */
export function createHttpClient(options: HttpOptions): HttpClient {
  // undici refuses such a header on every request, and a pool that refused some hangs later requests
  // (undici 7.30): refuse the key once, here, rather than retry for ever. The configuration says it first.
  const keyProblem = options.apiKey === undefined ? undefined : headerValueProblem(options.apiKey);
  if (keyProblem) throw new Error(`the API key cannot be sent in an HTTP header: ${keyProblem}`);
  const pools = new Map<string, Pool>();
  const poolFor = (origin: string) => {
    let pool = pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
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
      const res = await poolFor(u.origin).request({
        path: `${u.pathname}${u.search}`,
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(signal ? { signal } : {}),
      });
      const text = await res.body.text();
      const flat: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(res.headers)) flat[k] = Array.isArray(v) ? v.join(', ') : v;
      return { status: res.statusCode, headers: flat, text };
    },
    async close() {
      await Promise.all([...pools.values()].map((p) => p.close()));
      pools.clear();
    },
  };
}
