import { request } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { createEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.ts';

/** 2026-11-02 00:00 UTC: tests run on a fixed clock so the world is the same every time. */
export const TEST_EPOCH = 1_793_577_600;

/** An in-process emulator on a fixed clock with rate limits off, unless the test says otherwise. */
export function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  return createEmulator({ clock: `fixed:${TEST_EPOCH}`, rateLimit: 'off', seed: 7, ...options });
}

/**
 * The test file's emulator: `const emulator = useEmulator();` at its top starts one before the file's
 * tests and closes it after them. What it returns stands for the emulator once started, so it is used
 * inside tests and hooks, not at the file's top level.
 */
export function useEmulator(options: EmulatorOptions = {}): Emulator {
  let started: Emulator | undefined;
  beforeAll(async () => {
    started = await startEmulator(options);
  });
  afterAll(() => started?.close());
  return new Proxy({} as Emulator, {
    get(_, key) {
      if (!started) throw new Error('the emulator starts before the tests: use it inside a test or a hook');
      const value = Reflect.get(started, key, started);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}

export interface JsonResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T;
}

/** GET (or POST with a JSON body) and parse the answer, whatever its status. */
export async function fetchJson<T = any>(
  url: string,
  init: { method?: 'GET' | 'POST'; body?: unknown; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const res = await request(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body !== undefined
      ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }
      : {}),
  });
  const text = await res.body.text();
  const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)]));
  return { status: res.statusCode, headers, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** Walks a listing to its end by `nextPageToken`; returns every item of `field` in order and the page count. */
export async function walk<T = any>(
  url: string,
  field: string,
  options: { maxPages?: number } = {},
): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let pages = 0;
  let token: string | undefined;
  do {
    const u = new URL(url);
    if (token) u.searchParams.set('pageToken', token);
    const res = await fetchJson<Record<string, unknown>>(u.toString());
    if (res.status !== 200) throw new Error(`walk ${u}: status ${res.status} ${JSON.stringify(res.body)}`);
    items.push(...((res.body[field] as T[]) ?? []));
    token = res.body.nextPageToken as string | undefined;
    pages++;
    if (options.maxPages !== undefined && pages >= options.maxPages) break;
  } while (token);
  return { items, pages };
}
