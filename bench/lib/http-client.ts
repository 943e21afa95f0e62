import { Pool } from 'undici';

/** One keep-alive connection to a local emulator; every answer is timed including the JSON parse. */
export interface JsonClient {
  get(path: string): Promise<{ body: Record<string, unknown>; ms: number }>;
  close(): Promise<void>;
}

export function createJsonClient(origin: string): JsonClient {
  const url = new URL(origin);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost')
    throw new Error(`benchmarks only talk to a local emulator; got ${origin}`);
  const pool = new Pool(origin, { connections: 1 });
  return {
    async get(path) {
      const started = performance.now();
      const res = await pool.request({ path, method: 'GET' });
      const text = await res.body.text();
      const ms = performance.now() - started;
      if (res.statusCode !== 200)
        throw new Error(`GET ${path}: status ${res.statusCode}: ${text.slice(0, 300)}`);
      return { body: JSON.parse(text) as Record<string, unknown>, ms };
    },
    close: () => pool.close(),
  };
}
