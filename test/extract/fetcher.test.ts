import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateBudget } from '../../src/extract/budget.ts';
import { FinalError, QuotaExhaustedError, RetryableError } from '../../src/extract/errors.ts';
import { createFetcher, retryAfterOf } from '../../src/extract/fetcher.ts';
import { createHttpClient } from '../../src/extract/http.ts';

const KEY = 'test-key-0123456789abcdef';

/** A scripted server: each path answers from its own list of replies, one per attempt. */
type Script = ((req: IncomingMessage, res: ServerResponse) => void)[];
const scripts = new Map<string, Script>();
const seen: IncomingMessage[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req);
    const script = scripts.get(req.url ?? '') ?? [];
    const step = script.shift() ?? ((_q, r) => reply(r, 200, { ok: true }));
    step(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

const http = createHttpClient({ userAgent: 'avalake/test', apiKey: KEY, keyedOrigins: [] });
const sleeps: number[] = [];
const fetcher = createFetcher({
  http,
  sleep: async (ms) => {
    sleeps.push(ms);
  },
});

describe('fetcher', () => {
  it('retries 500, 502, 503 and a dropped connection, then returns the body', async () => {
    scripts.set('/flaky', [
      (_q, r) => reply(r, 500, { message: 'boom' }),
      (_q, r) => reply(r, 502, { message: 'bad gateway' }),
      (_q, r) => r.socket?.destroy(),
      (_q, r) => reply(r, 503, { message: 'unavailable' }),
      (_q, r) => reply(r, 200, { items: [1, 2, 3] }),
    ]);
    sleeps.length = 0;
    const body = await fetcher({ url: `${base}/flaky`, cost: 0, at: { stream: 's' } });
    expect(body).toEqual({ items: [1, 2, 3] });
    expect(sleeps).toHaveLength(4);
  });

  it('treats a body cut short as retryable', async () => {
    scripts.set('/truncated', [
      (_q, r) => {
        r.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        r.write('{"items":[1,2', () => r.destroy());
      },
      (_q, r) => reply(r, 200, { items: [9] }),
    ]);
    expect(await fetcher({ url: `${base}/truncated`, cost: 0, at: {} })).toEqual({ items: [9] });
  });

  it('waits as retry-after says on 429, in seconds or as a date', async () => {
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    scripts.set('/limited', [
      (_q, r) => reply(r, 429, { message: 'slow down' }, { 'retry-after': '3' }),
      (_q, r) => reply(r, 429, { message: 'slow down' }, { 'retry-after': inTwoSeconds }),
      (_q, r) => reply(r, 200, { ok: 1 }),
    ]);
    sleeps.length = 0;
    await fetcher({ url: `${base}/limited`, cost: 0, at: {} });
    expect(sleeps[0]).toBe(3000);
    expect(sleeps[1]).toBeGreaterThan(0);
    expect(sleeps[1]).toBeLessThanOrEqual(2000);
    expect(retryAfterOf({ 'ratelimit-reset': '7' })).toBe(7000);
  });

  it.each([
    [400, 'rejected the request parameters: pageSize must not be greater than 100'],
    [401, 'API key was not accepted'],
    [403, 'may not use this endpoint'],
    [404, 'does not know this resource'],
  ])('makes %i final at once, with advice and the server message', async (status, text) => {
    scripts.set(`/final${status}`, [
      (_q, r) => reply(r, status, { message: ['pageSize must not be greater than 100'] }),
    ]);
    const before = seen.length;
    const error = await fetcher({
      url: `${base}/final${status}`,
      cost: 0,
      at: { stream: 'rewards', partition: 'p1' },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FinalError);
    expect((error as FinalError).message).toContain(text);
    expect((error as FinalError).message).toContain('stream rewards, partition p1');
    expect(seen.length - before).toBe(1);
  });

  it('gives up after the retry count with a retryable error naming the request', async () => {
    scripts.set(
      '/down',
      Array.from({ length: 20 }, () => (_q: IncomingMessage, r: ServerResponse) => reply(r, 503, {})),
    );
    const few = createFetcher({ http, retries: 2, sleep: async () => {} });
    const error = await few({ url: `${base}/down`, cost: 0, at: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as Error).message).toContain(`GET ${base}/down`);
  });

  it('sends both key headers and the user-agent to keyed origins only, and never puts the key in errors', async () => {
    const keyed = createHttpClient({ userAgent: 'avalake/9.9.9', apiKey: KEY, keyedOrigins: [base] });
    const f = createFetcher({ http: keyed, sleep: async () => {} });
    scripts.set('/keyed', [(_q, r) => reply(r, 401, { message: 'The API key is not valid' })]);
    const error = (await f({ url: `${base}/keyed`, cost: 0, at: {} }).catch((e: unknown) => e)) as Error;
    const req = seen.at(-1) as IncomingMessage;
    expect(req.headers['x-data-api-key']).toBe(KEY);
    expect(req.headers['x-glacier-api-key']).toBe(KEY);
    expect(req.headers['user-agent']).toBe('avalake/9.9.9');
    expect(`${error.message} ${error.stack}`).not.toContain(KEY);
    await f({ url: `${base}/unkeyed-metrics`, cost: 0, at: {} }).catch(() => undefined);
    await keyed.close();
  });
});

describe('rate budget', () => {
  const headers = (remaining: number, reset: number, limit = 300) => ({
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(remaining),
    'ratelimit-reset': String(reset),
    'ratelimit-policy': '300;w=60, 5000;w=86400',
  });

  it('waits for the reset when the window allowance would run out, before any 429', async () => {
    let t = 0;
    const waits: number[] = [];
    const budget = createRateBudget({
      host: 'h',
      now: () => t,
      sleep: async (ms) => {
        waits.push(ms);
        t += ms;
      },
    });
    await budget.acquire(100);
    budget.settle(100, 200, headers(200, 30));
    await budget.acquire(100);
    budget.settle(100, 200, headers(100, 30));
    await budget.acquire(100);
    budget.settle(100, 200, headers(0, 30));
    expect(waits).toEqual([]);
    await budget.acquire(100);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(30_000);
  });

  it('ends with a quota error naming the window when the reset is hours away', async () => {
    const budget = createRateBudget({ host: 'data-api', now: () => 0, sleep: async () => {} });
    await budget.acquire(100);
    expect(() => budget.settle(100, 429, headers(0, 40_000, 5000))).toThrow(QuotaExhaustedError);
    const error = await budget.acquire(100).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuotaExhaustedError);
    expect((error as Error).message).toContain('daily compute-unit quota of data-api (5000 CUs)');
  });

  it('does not let a waiter that wakes late restore an allowance already spent', async () => {
    let t = 0;
    const timers: { at: number; wake: () => void }[] = [];
    const budget = createRateBudget({
      host: 'h',
      now: () => t,
      sleep: (ms) => new Promise<void>((wake) => timers.push({ at: t + ms, wake })),
    });
    const tick = async (to: number) => {
      t = to;
      for (const timer of timers.filter((x) => x.at <= to)) {
        timers.splice(timers.indexOf(timer), 1);
        timer.wake();
      }
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    };
    await budget.acquire(100);
    budget.settle(100, 200, headers(0, 5));
    let granted = false;
    void budget.acquire(100).then(() => {
      granted = true;
    });
    // Before the waiter wakes, another answer (from the next window) says that window is spent too.
    await tick(5_100);
    await budget.acquire(0);
    budget.settle(0, 200, headers(0, 5));
    await tick(5_300);
    expect(granted).toBe(false);
    await tick(10_400);
    expect(granted).toBe(true);
  });
});
