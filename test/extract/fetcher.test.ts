import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateBudget } from '../../src/extract/budget.ts';
import {
  connectionFailureOf,
  DeadHostError,
  FinalError,
  QuotaExhaustedError,
  RetryableError,
} from '../../src/extract/errors.ts';
import { createFetcher, retryAfterOf } from '../../src/extract/fetcher.ts';
import { apiKeyProblem, createHttpClient } from '../../src/extract/http.ts';
import { sleep } from '../../src/extract/sleep.ts';

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

  it('says what an answer that is not JSON was, and what a server error said', async () => {
    const once = createFetcher({ http, retries: 0, sleep: async () => {} });
    const failure = (path: string) =>
      once({ url: `${base}${path}`, cost: 0, at: {} }).then(
        () => 'answered',
        (e: unknown) => (e as Error).message,
      );
    scripts.set('/html', [
      (_q, r) => {
        r.writeHead(200, { 'content-type': 'text/html' });
        r.end('<html>\n  <body>Service temporarily down for maintenance</body></html>');
      },
    ]);
    expect(await failure('/html')).toBe(
      `the answer was not complete JSON (69 bytes, text/html, starting "<html> <body>Service temporarily down for maintenance</body></html>") (GET ${base}/html)`,
    );
    scripts.set('/gzip', [
      (_q, r) => {
        r.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        r.end(Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0]));
      },
    ]);
    expect(await failure('/gzip')).toMatch(/content-encoding gzip, which avalake does not ask for\)/);
    scripts.set('/maintenance', [(_q, r) => reply(r, 503, { message: 'down for maintenance until 14:00' })]);
    expect(await failure('/maintenance')).toBe(
      `server error 503: down for maintenance until 14:00 (GET ${base}/maintenance)`,
    );
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
    ['behind', -1],
    ['ahead of', 1],
  ])('waits the 2 s a retry-after date asks when this host is ten minutes %s the server', async (_, sign) => {
    // The server's clock; this host's reads ten minutes off it (before NTP steps it right).
    const serverNow = () => Date.now() - sign * 10 * 60_000;
    const limited = (_q: IncomingMessage, r: ServerResponse) => {
      const at = Math.floor(serverNow() / 1000) * 1000;
      reply(
        r,
        429,
        { message: 'slow down' },
        {
          date: new Date(at).toUTCString(),
          'retry-after': new Date(at + 2000).toUTCString(),
        },
      );
    };
    scripts.set('/skewed', [limited, (_q, r) => reply(r, 200, { ok: 1 })]);
    sleeps.length = 0;
    // Before, behind: a wait of 10 min 2 s, more than a run waits (a spent quota); ahead: none at all.
    expect(await fetcher({ url: `${base}/skewed`, cost: 0, at: {} })).toEqual({ ok: 1 });
    expect(sleeps).toEqual([2000]);
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

describe('a key an HTTP header cannot carry', () => {
  it.each([
    [`${KEY}\r`, 'a carriage return at the end (the file it came from may have Windows line endings)'],
    [`${KEY}\nx`, 'a line break at character 26 of 27'],
    [`${KEY}é`, 'a non-ASCII character (U+00E9) at the end (copied from a formatted document?)'],
  ])('is refused when the client is made, naming what is wrong and not the key (%#)', (apiKey, what) => {
    expect(apiKeyProblem(apiKey)).toContain(`has ${what};`);
    const made = () => createHttpClient({ userAgent: 'avalake/test', apiKey, keyedOrigins: [base] });
    expect(made).toThrow(`the API key has ${what};`);
    expect(made).not.toThrow(KEY);
  });

  it('takes a key of visible ASCII', () => {
    expect(apiKeyProblem(KEY)).toBeUndefined();
  });

  it('fails a request the client refuses to send at once, without retrying', async () => {
    let attempts = 0;
    const refusing = {
      send: async () => {
        attempts++;
        throw Object.assign(new Error('invalid x-data-api-key header'), { code: 'UND_ERR_INVALID_ARG' });
      },
      close: async () => {},
    };
    const slept: number[] = [];
    const f = createFetcher({ http: refusing, sleep: async (ms) => void slept.push(ms) });
    const error = await f({ url: `${base}/never`, cost: 0, at: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FinalError);
    expect((error as Error).message).toContain(
      'the request could not be sent: invalid x-data-api-key header',
    );
    expect([attempts, slept]).toEqual([1, []]);
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

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('unreachable hosts', () => {
  it('declares a host that refuses every connection dead, and fails every later request to it at once', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1/x`;
    const attempts: number[] = [];
    const f = createFetcher({
      http,
      deadHostAttempts: 3,
      deadHostAfterMs: 0,
      sleep: async (ms) => {
        attempts.push(ms);
      },
    });
    const error = await f({ url, cost: 0, at: { stream: 's' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadHostError);
    expect((error as DeadHostError).code).toBe('ECONNREFUSED');
    expect((error as DeadHostError).attempts).toBe(3);
    expect((error as Error).message).toMatch(
      /^connection to http:\/\/127\.0\.0\.1:\d+ failed \(connection refused, ECONNREFUSED; 3 attempts in .* s, none answered\): is the service up, and is the URL right\?$/,
    );
    // Two waits (after attempts 1 and 2), not the eight retries of the policy.
    expect(attempts).toHaveLength(2);
    const again = await f({ url: `${url}?page=2`, cost: 0, at: {} }).catch((e: unknown) => e);
    expect(again).toBe(error);
    expect(attempts).toHaveLength(2);
  });

  it('ends the waits of other requests to that host as soon as it is declared dead', async () => {
    const origin = `http://127.0.0.1:${await closedPort()}`;
    const f = createFetcher({ http, deadHostAttempts: 4, deadHostAfterMs: 0, baseDelayMs: 60_000 });
    const started = Date.now();
    // Each request's first retry waits up to a minute; together they reach four refusals, and the host is dead.
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => f({ url: `${origin}/p${i}`, cost: 0, at: {} }).catch((e: unknown) => e)),
    );
    expect(results.every((e) => e instanceof DeadHostError)).toBe(true);
    expect(new Set(results).size).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('lets as many requests as it is given at once wait on one host without a MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const paths = Array.from({ length: 32 }, (_, i) => `/busy${i}`);
      for (const path of paths) scripts.set(path, [(_q, r) => reply(r, 503, { message: 'busy' })]);
      // The real wait, on the host's signal, made long enough that all 32 retries wait at once.
      const f = createFetcher({
        http,
        requestsAtOnce: 32,
        sleep: (_ms, ...signals) => sleep(300, ...signals),
      });
      const results = await Promise.all(paths.map((path) => f({ url: `${base}${path}`, cost: 0, at: {} })));
      expect(results).toEqual(paths.map(() => ({ ok: true })));
      // Node emits the warning on the next tick.
      await sleep(10);
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('keeps the full retry policy for a host that answered once, even if it then refuses', async () => {
    const server = createServer((_q, r) => reply(r, 200, { ok: true }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const waits: number[] = [];
    const f = createFetcher({
      http: createHttpClient({ userAgent: 'avalake/test' }),
      retries: 6,
      deadHostAttempts: 2,
      deadHostAfterMs: 0,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(await f({ url: `${origin}/a`, cost: 0, at: {} })).toEqual({ ok: true });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const error = await f({ url: `${origin}/b`, cost: 0, at: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as Error).message).toContain('ECONNREFUSED');
    expect(waits).toHaveLength(6);
  });

  it('lets a host that comes up within the grace period answer (a restart as the run starts)', async () => {
    const port = await closedPort();
    const f = createFetcher({ http, deadHostAttempts: 2, deadHostAfterMs: 60_000, baseDelayMs: 50 });
    const server = createServer((_q, r) => reply(r, 200, { up: true }));
    setTimeout(() => server.listen(port, '127.0.0.1'), 400);
    try {
      expect(await f({ url: `http://127.0.0.1:${port}/x`, cost: 0, at: {} })).toEqual({ up: true });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each([
    [
      'refused',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      'ECONNREFUSED',
    ],
    [
      'unresolved',
      Object.assign(new Error('getaddrinfo ENOTFOUND x.invalid'), { code: 'ENOTFOUND' }),
      'ENOTFOUND',
    ],
    [
      'TLS',
      Object.assign(new Error('wrong version number'), { code: 'ERR_SSL_WRONG_VERSION_NUMBER' }),
      'ERR_SSL_WRONG_VERSION_NUMBER',
    ],
    [
      'certificate',
      Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' }),
      'CERT_HAS_EXPIRED',
    ],
    [
      'both addresses refused',
      new AggregateError([Object.assign(new Error('a'), { code: 'ECONNREFUSED' })]),
      'ECONNREFUSED',
    ],
    [
      'reset (a flapping host)',
      Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
      undefined,
    ],
    [
      'connect timeout (packets dropped)',
      Object.assign(new Error('timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' }),
      'UND_ERR_CONNECT_TIMEOUT',
    ],
    [
      'headers timeout (connected, a slow answer)',
      Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
      undefined,
    ],
    [
      'body timeout (answered, then stalled)',
      Object.assign(new Error('Body Timeout Error'), { code: 'UND_ERR_BODY_TIMEOUT' }),
      undefined,
    ],
    ['reset by peer', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), undefined],
  ])('counts a %s error as a connection failure: %s', (_name, error, code) => {
    expect(connectionFailureOf(error)).toBe(code);
  });
});

type Answer = { status: number; text: string; headers?: Record<string, string> };

describe('hung services and outsized answers', () => {
  const timeout = () =>
    Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' });
  /** An HTTP client whose answers are scripted per call: an error to throw, or an answer. */
  const scripted = (steps: (Error | Answer)[]) => ({
    sends: 0,
    async send() {
      const step = steps[Math.min(this.sends++, steps.length - 1)] as Error | Answer;
      if (step instanceof Error) throw step;
      return { headers: {}, ...step };
    },
    async close() {},
  });

  it('declares a host dead once requests to it time out again and again and it never answered', async () => {
    let t = 0;
    const client = scripted([timeout()]);
    const f = createFetcher({
      http: client,
      deadHostTimeouts: 3,
      deadHostTimeoutsAfterMs: 60_000,
      now: () => t,
      sleep: async () => {
        t += 30_000;
      },
    });
    const error = await f({ url: 'http://hung.test/v1/x', cost: 0, at: { stream: 's' } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeadHostError);
    expect((error as DeadHostError).code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect((error as Error).message).toMatch(
      /^requests to http:\/\/hung\.test failed \(connected, but no whole answer within the time allowed, UND_ERR_HEADERS_TIMEOUT; 3 attempts in 60\.0 s, none answered\): is the service answering/,
    );
    // Three attempts, not the nine of the retry policy; the next request fails at once.
    expect(client.sends).toBe(3);
    await expect(f({ url: 'http://hung.test/v1/y', cost: 0, at: {} })).rejects.toBe(error);
    expect(client.sends).toBe(3);
  });

  it('declares a host dead that answered, then hung: its requests time out in a row for a minute', async () => {
    let t = 0;
    const client = scripted([{ status: 200, text: '{"ok":true}' }, timeout()]);
    const f = createFetcher({
      http: client,
      deadHostTimeouts: 3,
      deadHostTimeoutsAfterMs: 60_000,
      now: () => t,
      sleep: async () => {
        t += 30_000;
      },
    });
    expect(await f({ url: 'http://hung.test/a', cost: 0, at: {} })).toEqual({ ok: true });
    const error = await f({ url: 'http://hung.test/b', cost: 0, at: { stream: 's' } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeadHostError);
    expect((error as Error).message).toBe(
      'requests to http://hung.test failed (connected, but no whole answer within the time allowed, UND_ERR_HEADERS_TIMEOUT; ' +
        '3 attempts in 60.0 s, none answered, though it answered earlier in this run): it stopped answering ' +
        '(a hung service or proxy accepts and never answers)',
    );
    // The answer and three attempts, not the nine of the retry policy; the next request fails at once.
    expect(client.sends).toBe(1 + 3);
    await expect(f({ url: 'http://hung.test/c', cost: 0, at: {} })).rejects.toBe(error);
    expect(client.sends).toBe(1 + 3);
  });

  it('declares a host dead that answered, then refused connections for a minute (it went away)', async () => {
    let t = 0;
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' });
    const client = scripted([{ status: 200, text: '{"ok":true}' }, refused]);
    const f = createFetcher({
      http: client,
      deadHostTimeouts: 3,
      deadHostTimeoutsAfterMs: 60_000,
      now: () => t,
      sleep: async () => {
        t += 30_000;
      },
    });
    expect(await f({ url: 'http://gone.test/a', cost: 0, at: {} })).toEqual({ ok: true });
    const error = await f({ url: 'http://gone.test/b', cost: 0, at: { stream: 's' } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeadHostError);
    expect((error as DeadHostError).code).toBe('ECONNREFUSED');
    expect((error as Error).message).toMatch(
      /^connection to http:\/\/gone\.test failed \(.*ECONNREFUSED; 3 attempts in 60\.0 s, none answered, though it answered earlier in this run\): it went away during the run for more than a minute/,
    );
    // The answer and three attempts, not the nine of the retry policy; the next request fails at once.
    expect(client.sends).toBe(1 + 3);
    await expect(f({ url: 'http://gone.test/c', cost: 0, at: {} })).rejects.toBe(error);
  });

  it('never declares a slow host dead while answers come between its timeouts', async () => {
    let t = 0;
    const ok = { status: 200, text: '{"ok":true}' };
    // Two timeouts, then an answer, five times over: never three timeouts in a row.
    const client = scripted(Array.from({ length: 5 }, () => [timeout(), timeout(), ok]).flat());
    const f = createFetcher({
      http: client,
      deadHostTimeouts: 3,
      deadHostTimeoutsAfterMs: 0,
      now: () => t,
      sleep: async () => {
        t += 30_000;
      },
    });
    for (const path of ['a', 'b', 'c', 'd', 'e'])
      expect(await f({ url: `http://slow.test/${path}`, cost: 0, at: {} })).toEqual({ ok: true });
    expect(client.sends).toBe(15);
  });

  it('keeps the full retry policy for timeouts that span less than the time allowed', async () => {
    const client = scripted([{ status: 200, text: '{"ok":true}' }, timeout()]);
    const f = createFetcher({
      http: client,
      deadHostTimeouts: 2,
      deadHostTimeoutsAfterMs: 60_000,
      sleep: async () => {},
    });
    expect(await f({ url: 'http://slow.test/a', cost: 0, at: {} })).toEqual({ ok: true });
    const error = await f({ url: 'http://slow.test/b', cost: 0, at: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableError);
    expect((error as Error).message).toBe(
      'the answer from http://slow.test did not come whole (Headers Timeout Error) (GET http://slow.test/b)',
    );
    expect(client.sends).toBe(1 + 9);
  });

  it('fails an answer over the size limit at once, without retrying it', async () => {
    const tooLarge = Object.assign(
      new Error('the answer is larger than 64 MiB, more than any page of the services'),
      {
        code: 'AVALAKE_ANSWER_TOO_LARGE',
      },
    );
    const client = scripted([tooLarge]);
    const f = createFetcher({ http: client, sleep: async () => {} });
    const error = await f({ url: 'http://big.test/v1/x', cost: 0, at: { stream: 'metrics' } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FinalError);
    expect((error as Error).message).toContain('the answer is larger than 64 MiB');
    expect((error as Error).message).toContain('GET http://big.test/v1/x');
    expect(client.sends).toBe(1);
  });

  it('ends the run as a spent quota when a 429 asks to wait longer than the budget ever waits', async () => {
    const waits: number[] = [];
    scripts.set('/v1/hours', [(_q, r) => reply(r, 429, { message: 'quota' }, { 'retry-after': '7200' })]);
    const f = createFetcher({ http, sleep: async (ms) => void waits.push(ms) });
    const error = await f({ url: `${base}/v1/hours`, cost: 0, at: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuotaExhaustedError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^${base.replace(/\./g, '\\.')} answers 429 and asks to wait until \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: its quota is spent$`,
      ),
    );
    expect(waits).toEqual([]);
  });
});

describe('a service that answers 429 for ever, each asking for a short wait', () => {
  const limited = { status: 429, text: '{"message":"slow down"}', headers: { 'retry-after': '30' } };
  const ok = { status: 200, text: '{"ok":true}' };
  /** A fetcher on a fake clock that each wait moves on, waiting at most five minutes for an allowance. */
  const fetcherOf = (steps: (Error | Answer)[]) => {
    let sends = 0;
    let t = 0;
    const client = {
      async send() {
        const step = steps[Math.min(sends++, steps.length - 1)] as Error | Answer;
        if (step instanceof Error) throw step;
        return { headers: {}, ...step };
      },
      async close() {},
    };
    const f = createFetcher({
      http: client,
      maxRateWaitMs: 300_000,
      now: () => t,
      sleep: async (ms) => {
        t += ms;
      },
    });
    return { f, sends: () => sends, now: () => t };
  };

  it('takes its quota as spent once it has answered nothing but 429 for longer than five minutes', async () => {
    const { f, sends, now } = fetcherOf([limited]);
    // One request spends its nine attempts in four minutes, and fails as before.
    const first = await f({ url: 'http://limited.test/a', cost: 0, at: {} }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(RetryableError);
    expect(now()).toBe(240_000);
    // The next reaches five minutes of 429s at its fourth attempt: a spent quota, the run ends cleanly.
    const second = await f({ url: 'http://limited.test/b', cost: 0, at: {} }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(QuotaExhaustedError);
    expect((second as Error).message).toBe(
      'http://limited.test has answered nothing but 429 for 330 s, longer than a run waits for its allowance: its quota is taken as spent',
    );
    expect(sends()).toBe(9 + 4);
    // Every later request to it fails at once, without a request.
    await expect(f({ url: 'http://limited.test/c', cost: 0, at: {} })).rejects.toBe(second);
    expect(sends()).toBe(9 + 4);
  });

  it.each([
    ['a 200 starts the five minutes over', ok, 'answers'],
    ['a 404 starts the five minutes over', { status: 404, text: '{}' }, 'answers'],
    // An outage between two 429s fails as one, not as a spent quota that exits 0.
    ["a gateway's 503 too", { status: 503, text: '{}' }, 'answers'],
    ['a dropped connection too', Object.assign(new Error('reset'), { code: 'ECONNRESET' }), 'answers'],
  ])('%s', async (_name, between, outcome) => {
    // Four minutes of 429s, the answer between, then four more minutes of 429s and a 200.
    const fours = Array.from({ length: 8 }, () => limited);
    const { f } = fetcherOf([...fours, between, ...fours, ok]);
    const results: unknown[] = [];
    for (const path of ['a', 'b', 'c'])
      results.push(await f({ url: `http://limited.test/${path}`, cost: 0, at: {} }).catch((e: unknown) => e));
    if (outcome === 'answers') expect(results.at(-1)).toEqual({ ok: true });
    else expect(results.at(-1)).toBeInstanceOf(QuotaExhaustedError);
  });
});

describe('sleep', () => {
  it('rejects with the abort reason as soon as any of its signals aborts', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const started = Date.now();
    const waiting = sleep(60_000, a.signal, b.signal).catch((e: unknown) => e);
    const reason = new Error('interrupted by a signal');
    setTimeout(() => b.abort(reason), 20);
    expect(await waiting).toBe(reason);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(sleep(10, a.signal)).resolves.toBeUndefined();
    a.abort(reason);
    await expect(sleep(60_000, a.signal)).rejects.toBe(reason);
  });

  it('ends a rate-budget wait on abort', async () => {
    const budget = createRateBudget({ host: 'h' });
    await budget.acquire(100);
    budget.settle(100, 200, {
      'ratelimit-limit': '100',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '60',
    });
    const stop = new AbortController();
    const waiting = budget.acquire(100, stop.signal).catch((e: unknown) => e);
    const reason = new Error('interrupted');
    setTimeout(() => stop.abort(reason), 20);
    expect(await waiting).toBe(reason);
  });
});
