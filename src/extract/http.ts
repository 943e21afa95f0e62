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

/** Keep-alive connection pools, one per origin; the only place that touches the network. */
export function createHttpClient(options: HttpOptions): HttpClient {
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
