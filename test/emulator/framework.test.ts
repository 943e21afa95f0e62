import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClock, parseClockSpec } from '../../src/emulator/clock.ts';
import { createFaultInjector, parseFaultSpec } from '../../src/emulator/faults.ts';
import { badRequest } from '../../src/emulator/http/errors.ts';
import {
  createPageTokens,
  MAX_PAGE_TOKENS,
  PAGE_TOKEN_LIFETIME_SECONDS,
  sliceArray,
  withNextToken,
} from '../../src/emulator/http/paging.ts';
import { defineRoutes } from '../../src/emulator/http/route.ts';
import {
  createHttpServer,
  listenOn,
  MAX_BODY_BYTES,
  type ServerDeps,
} from '../../src/emulator/http/server.ts';
import { findKey, parseKeysSpec } from '../../src/emulator/keys.ts';
import { createRateLimiter, parseRateLimitSpec } from '../../src/emulator/limits.ts';
import { rpcRoutes } from '../../src/emulator/routes/rpc.ts';
import {
  ARGUMENT_MESSAGE,
  handleJsonRpc,
  RpcArgumentError,
  RpcError,
  type RpcMethod,
} from '../../src/emulator/rpc/jsonrpc.ts';
import type { World } from '../../src/emulator/world/index.ts';
import { parseNetwork } from '../../src/emulator/world/networks.ts';
import { fetchJson, TEST_EPOCH } from '../helpers/emulator.ts';

/**
 * The emulator's framework (router, errors, keys, CU rate limits, page tokens, faults, JSON-RPC envelope)
 * on a tiny route table of its own, so these tests hold whatever the world and the real routes become.
 */

const ITEMS = Array.from({ length: 25 }, (_, i) => ({ index: i }));

const testRoutes = defineRoutes([
  // 100 CUs in the published table.
  {
    service: 'data',
    method: 'GET',
    path: '/v1/networks/{network}/rewards',
    handle: (ctx) => {
      const network = parseNetwork(ctx.params.network as string);
      const page = ctx.page(ctx.query.pageSize(), sliceArray(ITEMS));
      return { network, historicalRewards: page.items, ...(page.nextPageToken ? page : {}) };
    },
  },
  // 1 CU.
  { service: 'data', method: 'GET', path: '/v1/chains', handle: () => ({ chains: [] }) },
  // 10 CUs.
  {
    service: 'data',
    method: 'GET',
    path: '/v1/chains/{chainId}/blocks',
    handle: (ctx) => {
      const since = ctx.query.int('startTimestamp', { min: 0 });
      if (ctx.params.chainId === 'nope') throw badRequest('chainId "nope" is not a supported chain');
      return { blocks: [], since: since ?? null };
    },
  },
  {
    service: 'data',
    method: 'GET',
    path: '/v1/boom',
    handle: () => {
      throw new Error('kaput');
    },
  },
  // 100 CUs, metrics service.
  {
    service: 'metrics',
    method: 'GET',
    path: '/v2/chains/{chainId}/metrics/{metric}',
    handle: () => ({ results: [] }),
  },
  ...rpcRoutes,
]);

interface Served {
  url: string;
  clock: ReturnType<typeof createClock>;
  /** The rate limiter's "real" time in seconds; tests move it by hand. */
  realTime: { now: number };
  requests: { method: string; path: string; status: number }[];
  close(): Promise<void>;
}

const open: Served[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  vi.restoreAllMocks();
});

async function serve(
  options: { seed?: number; rateLimit?: string; faults?: string; keys?: string } & Partial<
    Omit<ServerDeps, 'keys'>
  > = {},
): Promise<Served> {
  const { seed = 7, rateLimit, faults: faultSpec, keys, ...deps } = options;
  const clock = createClock(`fixed:${TEST_EPOCH}`);
  const realTime = { now: 1000 };
  const faults = createFaultInjector(seed, parseFaultSpec(faultSpec ?? ''));
  const requests: Served['requests'] = [];
  const server = createHttpServer({
    routes: testRoutes,
    world: {} as World,
    clock,
    tokens: createPageTokens(seed, () => clock.now()),
    limiter: createRateLimiter(parseRateLimitSpec(rateLimit ?? 'on'), () => realTime.now),
    keys: parseKeysSpec(keys ?? ''),
    decideFault: (key) => faults.decide(key),
    onRequest: (info) => requests.push(info),
    ...deps,
  });
  const address = await listenOn(server, '127.0.0.1', 0);
  const served: Served = {
    url: `http://127.0.0.1:${address.port}`,
    clock,
    realTime,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  open.push(served);
  return served;
}

const errorBody = (statusCode: number, error: string) => ({
  message: expect.anything(),
  error,
  statusCode,
});

describe('§7 errors carry the ErrorBody shape', () => {
  it('400 names the bad parameter', async () => {
    const s = await serve();
    const tooSmall = await fetchJson(`${s.url}/v1/networks/mainnet/rewards?pageSize=0`);
    expect(tooSmall.status).toBe(400);
    expect(tooSmall.body).toEqual({
      message: 'pageSize must not be less than 1, got 0',
      error: 'Bad Request',
      statusCode: 400,
    });
    const notNumber = await fetchJson(`${s.url}/v1/chains/43114/blocks?startTimestamp=yesterday`);
    expect(notNumber.status).toBe(400);
    expect(notNumber.body.message).toMatch(/^startTimestamp must be an integer number, got "yesterday"/);
    const badNetwork = await fetchJson(`${s.url}/v1/networks/devnet/rewards`);
    expect(badNetwork.status).toBe(400);
    expect(badNetwork.body.message).toContain('network must be one of the following values');
    expect(badNetwork.body.message).toContain('"devnet"');
    expect(badNetwork.headers['content-type']).toMatch(/^application\/json/);
  });

  it('401 for a key the service does not know, on either header', async () => {
    const s = await serve({ keys: 'k-pro:pro' });
    for (const name of ['x-data-api-key', 'x-glacier-api-key']) {
      const res = await fetchJson(`${s.url}/v1/chains`, { headers: { [name]: 'k-unknown' } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        message: 'The API key is not valid',
        error: 'Unauthorized',
        statusCode: 401,
      });
      expect(JSON.stringify(res.body)).not.toContain('k-unknown');
    }
  });

  it('403 for a valid key barred from a route, and only from that route', async () => {
    const s = await serve({ keys: 'k-free:free:deny=/v1/chains|/v1/signatureAggregator' });
    const barred = await fetchJson(`${s.url}/v1/chains`, { headers: { 'x-data-api-key': 'k-free' } });
    expect(barred.status).toBe(403);
    expect(barred.body).toEqual({
      message: 'The API key does not permit GET /v1/chains',
      error: 'Forbidden',
      statusCode: 403,
    });
    const allowed = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`, {
      headers: { 'x-data-api-key': 'k-free' },
    });
    expect(allowed.status).toBe(200);
  });

  it('413 with an ErrorBody for a body over 1 MiB, rather than a body silently cut', async () => {
    const s = await serve({ rateLimit: 'off' });
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'platform.getHeight',
      pad: 'x'.repeat(MAX_BODY_BYTES),
    });
    const res = await fetchJson(`${s.url}/ext/bc/P`, { method: 'POST', body: big });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      message: `The request body is ${Buffer.byteLength(big)} bytes; the largest accepted is ${MAX_BODY_BYTES} bytes`,
      error: 'Payload Too Large',
      statusCode: 413,
    });
    const small = await fetchJson(`${s.url}/ext/bc/P`, {
      method: 'POST',
      body: { jsonrpc: '2.0', id: 1, method: 'nope' },
    });
    expect(small.status).toBe(200);
  });

  it('404 for an unknown path or a data path with the wrong method', async () => {
    const s = await serve();
    const unknown = await fetchJson(`${s.url}/v1/nowhere`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'Cannot GET /v1/nowhere', error: 'Not Found', statusCode: 404 });
    const wrongMethod = await fetchJson(`${s.url}/v1/chains`, { method: 'POST', body: {} });
    expect(wrongMethod.status).toBe(404);
    expect(wrongMethod.body).toEqual(errorBody(404, 'Not Found'));
  });

  it('500 for a handler that throws something other than an HttpError', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const s = await serve();
    const res = await fetchJson(`${s.url}/v1/boom`);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      message: 'Internal server error',
      error: 'Internal Server Error',
      statusCode: 500,
    });
    expect(String(logged.mock.calls[0]?.at(-1))).toContain('kaput');
  });

  it('an HttpError thrown by a route keeps its status and message', async () => {
    const s = await serve();
    const res = await fetchJson(`${s.url}/v1/chains/nope/blocks`);
    expect(res.body).toEqual({
      message: 'chainId "nope" is not a supported chain',
      error: 'Bad Request',
      statusCode: 400,
    });
  });
});

describe('rate limits in compute units', () => {
  const SHORT = 'minute=1,day=3,perMinute=300,perDay=500';

  it('a 100-CU route spends exactly 100 of the allowance; a 1-CU route spends 1', async () => {
    const s = await serve();
    const first = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`);
    expect(first.headers['ratelimit-limit']).toBe('6000');
    expect(first.headers['ratelimit-remaining']).toBe('5900');
    expect(first.headers['ratelimit-policy']).toBe('6000;w=60, 1200000;w=86400');
    expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    expect(Number(first.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    const second = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`);
    expect(second.headers['ratelimit-remaining']).toBe('5800');
    const cheap = await fetchJson(`${s.url}/v1/chains`);
    expect(cheap.headers['ratelimit-remaining']).toBe('5799');
    const blocks = await fetchJson(`${s.url}/v1/chains/43114/blocks`);
    expect(blocks.headers['ratelimit-remaining']).toBe('5789');
  });

  it("a configured key gets its tier's higher allowance, in its own bucket, on either header", async () => {
    const s = await serve({ keys: 'k-pro:pro,k-free:free' });
    const anonymous = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`);
    const pro = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`, {
      headers: { 'x-data-api-key': 'k-pro' },
    });
    const proAgain = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`, {
      headers: { 'x-glacier-api-key': 'k-pro' },
    });
    const free = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`, {
      headers: { 'x-glacier-api-key': 'k-free' },
    });
    expect([anonymous, pro, proAgain, free].map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(anonymous.headers['ratelimit-limit']).toBe('6000');
    expect(pro.headers['ratelimit-limit']).toBe('20000');
    expect(pro.headers['ratelimit-remaining']).toBe('19900');
    // Both header names reach the same key, so the second request spends from the same bucket.
    expect(proAgain.headers['ratelimit-remaining']).toBe('19800');
    expect(free.headers['ratelimit-limit']).toBe('8000');
    expect(free.headers['ratelimit-remaining']).toBe('7900');
  });

  it('429 with retry-after once the per-minute allowance is spent; the next window allows again', async () => {
    const s = await serve({ rateLimit: SHORT });
    const url = `${s.url}/v1/networks/mainnet/rewards`;
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetchJson(url);
      expect(res.status).toBe(200);
      remaining.push(res.headers['ratelimit-remaining'] as string);
    }
    expect(remaining).toEqual(['200', '100', '0']);
    const refused = await fetchJson(url);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      message: 'Rate limit exceeded: the per-minute compute-unit allowance (300 CUs) is spent; retry in 1 s',
      error: 'Too Many Requests',
      statusCode: 429,
    });
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit-limit']).toBe('300');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.headers['ratelimit-policy']).toBe('300;w=1, 500;w=3');
    // The minute is spent to the last CU, so even a 1-CU route waits.
    expect((await fetchJson(`${s.url}/v1/chains`)).status).toBe(429);

    s.realTime.now += 1;
    const nextMinute = await fetchJson(url);
    expect(nextMinute.status).toBe(200);
    // 400 of the day's 500 are spent (the two refused requests cost nothing): the day allowance now
    // binds and the headers report it.
    expect(nextMinute.headers['ratelimit-limit']).toBe('500');
    expect(nextMinute.headers['ratelimit-remaining']).toBe('100');
  });

  it('429 naming the daily allowance once the day is spent, lifted only by the next day', async () => {
    const s = await serve({ rateLimit: SHORT });
    const url = `${s.url}/v1/networks/mainnet/rewards`;
    for (let i = 0; i < 3; i++) expect((await fetchJson(url)).status).toBe(200);
    s.realTime.now += 1; // t = 1001: a new minute, the same day (days are [999, 1002))
    for (let i = 0; i < 2; i++) expect((await fetchJson(url)).status).toBe(200);
    const refused = await fetchJson(url);
    expect(refused.status).toBe(429);
    expect(refused.body.message).toBe(
      'Rate limit exceeded: the daily compute-unit allowance (500 CUs) is spent; retry in 1 s',
    );
    expect(refused.headers['ratelimit-limit']).toBe('500');
    expect(refused.headers['retry-after']).toBe('1');
    // A request that fits the minute still waits for the day.
    expect((await fetchJson(`${s.url}/v1/chains`)).status).toBe(429);
    s.realTime.now += 1; // t = 1002: a new day
    const nextDay = await fetchJson(url);
    expect(nextDay.status).toBe(200);
    expect(nextDay.headers['ratelimit-remaining']).toBe('200');
    expect(nextDay.headers['ratelimit-limit']).toBe('300');
  });

  it('the metrics service takes no key but is limited all the same, apart from the data service', async () => {
    const s = await serve({ rateLimit: SHORT, keys: 'k-pro:pro' });
    const url = `${s.url}/v2/chains/43114/metrics/txCount`;
    const first = await fetchJson(url, { headers: { 'x-data-api-key': 'not-a-key-anywhere' } });
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-remaining']).toBe('200');
    await fetchJson(url);
    await fetchJson(url);
    const refused = await fetchJson(url);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(errorBody(429, 'Too Many Requests'));
    expect(refused.headers['retry-after']).toBe('1');
    // The data service keeps its own allowance.
    expect((await fetchJson(`${s.url}/v1/networks/mainnet/rewards`)).headers['ratelimit-remaining']).toBe(
      '200',
    );
  });

  it('with the published metrics allowance (8000 a minute) a metric query costs 100', async () => {
    const s = await serve();
    const res = await fetchJson(`${s.url}/v2/chains/43114/metrics/txCount`);
    expect(res.headers['ratelimit-limit']).toBe('8000');
    expect(res.headers['ratelimit-remaining']).toBe('7900');
  });

  it('rate limiting off sends no ratelimit headers; the node RPC is never limited', async () => {
    const off = await serve({ rateLimit: 'off' });
    const res = await fetchJson(`${off.url}/v1/chains`);
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
    const on = await serve({ rateLimit: 'minute=1,day=3,perMinute=1,perDay=1' });
    for (let i = 0; i < 3; i++) {
      const rpc = await fetchJson(`${on.url}/ext/bc/P`, { method: 'POST', body: '{' });
      expect(rpc.status).toBe(200);
      expect(rpc.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('page tokens', () => {
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('walk a listing page by page, and the tokens are the same for the same seed', async () => {
    const a = await serve({ rateLimit: 'off' });
    const b = await serve({ rateLimit: 'off' });
    const other = await serve({ rateLimit: 'off', seed: 8 });
    const url = (s: Served) => `${s.url}/v1/networks/mainnet/rewards?pageSize=10`;
    const page1 = await fetchJson(url(a));
    expect(page1.body.historicalRewards.map((r: { index: number }) => r.index)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    expect(page1.body.nextPageToken).toMatch(UUID_V4);
    expect((await fetchJson(url(b))).body.nextPageToken).toBe(page1.body.nextPageToken);
    expect((await fetchJson(url(other))).body.nextPageToken).not.toBe(page1.body.nextPageToken);

    const page2 = await fetchJson(`${url(a)}&pageToken=${page1.body.nextPageToken}`);
    expect(page2.body.historicalRewards[0]).toEqual({ index: 10 });
    // pageSize may change between pages: it is not part of the query a token is bound to.
    const page3 = await fetchJson(
      `${a.url}/v1/networks/mainnet/rewards?pageSize=100&pageToken=${page2.body.nextPageToken}`,
    );
    expect(page3.status).toBe(200);
    expect(page3.body.historicalRewards.map((r: { index: number }) => r.index)).toEqual([20, 21, 22, 23, 24]);
    expect(page3.body.nextPageToken).toBeUndefined();
  });

  it('a token is bound to its path and query: elsewhere it is a 400', async () => {
    const s = await serve({ rateLimit: 'off' });
    const first = await fetchJson(`${s.url}/v1/networks/mainnet/rewards?nodeIds=NodeID-a&pageSize=5`);
    const token = first.body.nextPageToken as string;
    const otherQuery = await fetchJson(
      `${s.url}/v1/networks/mainnet/rewards?nodeIds=NodeID-b&pageToken=${token}`,
    );
    expect(otherQuery.status).toBe(400);
    expect(otherQuery.body).toEqual({
      message: `pageToken "${token}" belongs to a different query; send it with the same parameters`,
      error: 'Bad Request',
      statusCode: 400,
    });
    const otherPath = await fetchJson(
      `${s.url}/v1/networks/fuji/rewards?nodeIds=NodeID-a&pageToken=${token}`,
    );
    expect(otherPath.status).toBe(400);
    const sameQuery = await fetchJson(
      `${s.url}/v1/networks/mainnet/rewards?pageToken=${token}&nodeIds=NodeID-a`,
    );
    expect(sameQuery.status).toBe(200);
    const invented = await fetchJson(`${s.url}/v1/networks/mainnet/rewards?pageToken=not-a-token`);
    expect(invented.status).toBe(400);
    expect(invented.body.message).toContain('"not-a-token" is not valid');
  });

  it('a token lives 24 hours of emulator time, then answers 400 saying to restart', async () => {
    const s = await serve({ rateLimit: 'off' });
    const first = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`);
    const next = `${s.url}/v1/networks/mainnet/rewards?pageToken=${first.body.nextPageToken}`;
    s.clock.advance(PAGE_TOKEN_LIFETIME_SECONDS);
    expect((await fetchJson(next)).status).toBe(200);
    s.clock.advance(1);
    const expired = await fetchJson(next);
    expect(expired.status).toBe(400);
    expect(expired.body.error).toBe('Bad Request');
    expect(expired.body.message).toMatch(/expired/);
    expect(expired.body.message).toMatch(/restart from the first page/);
  });

  it('a token presented a day after it expired still says it expired (a cron job resuming late)', async () => {
    const s = await serve({ rateLimit: 'off' });
    const first = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`);
    s.clock.advance(25 * 3600);
    const late = await fetchJson(
      `${s.url}/v1/networks/mainnet/rewards?pageToken=${first.body.nextPageToken}`,
    );
    expect(late.status).toBe(400);
    expect(late.body.message).toMatch(/expired/);
    expect(late.body.message).toMatch(/restart from the first page/);
  });

  it('300 000 pages issued on a fixed clock keep the token map bounded; the oldest answer 400', () => {
    const tokens = createPageTokens(1, () => TEST_EPOCH);
    // Each walk's first page; its token resumes at position 1 of that walk's own query.
    const fetch = sliceArray([0, 1]);
    const issued: string[] = [];
    for (let i = 0; i < 300_000; i++) {
      const page = tokens.page({ query: `q${i}`, pageToken: undefined, pageSize: 1, fetch });
      if (i < 3 || i >= 299_997) issued.push(page.nextPageToken as string);
      if (tokens.size() > MAX_PAGE_TOKENS)
        throw new Error(`${tokens.size()} tokens held after ${i + 1} pages`);
    }
    expect(tokens.size()).toBe(MAX_PAGE_TOKENS);
    expect(() => tokens.page({ query: 'q0', pageToken: issued[0], pageSize: 1, fetch })).toThrow(
      /discarded .*restart from the first page/,
    );
    expect(tokens.page({ query: 'q299999', pageToken: issued[5], pageSize: 1, fetch })).toEqual({
      items: [1],
    });
  }, 60_000);

  it('a token in use is kept (least recently used go first) and tokens are the same for the same walk', () => {
    const fetch = sliceArray([0, 1, 2, 3]);
    const a = createPageTokens(1, () => TEST_EPOCH, 3);
    const b = createPageTokens(1, () => TEST_EPOCH, 3);
    const keep = a.page({ query: 'keep', pageToken: undefined, pageSize: 1, fetch });
    expect(b.page({ query: 'keep', pageToken: undefined, pageSize: 1, fetch })).toEqual(keep);
    const other = a.page({ query: 'other', pageToken: undefined, pageSize: 1, fetch });
    for (let i = 0; i < 4; i++) {
      // Using `keep` makes it the most recent; the filler tokens push out `other` instead.
      a.page({ query: 'keep', pageToken: keep.nextPageToken, pageSize: 1, fetch });
      a.page({ query: `filler${i}`, pageToken: undefined, pageSize: 1, fetch });
    }
    expect(a.size()).toBe(3);
    expect(a.page({ query: 'keep', pageToken: keep.nextPageToken, pageSize: 1, fetch }).items).toEqual([1]);
    expect(() => a.page({ query: 'other', pageToken: other.nextPageToken, pageSize: 1, fetch })).toThrow(
      /discarded/,
    );
  });

  it('withNextToken adds nextPageToken only when another page follows', () => {
    expect(withNextToken({ items: [1], nextPageToken: 'abc' })).toEqual({ nextPageToken: 'abc' });
    expect(withNextToken({ items: [1] })).toEqual({});
  });

  it('createPageTokens alone: expiry is measured from issue, not from last use', () => {
    let now = 5_000;
    const tokens = createPageTokens(1, () => now);
    const fetch = sliceArray([1, 2, 3]);
    const first = tokens.page({ query: 'q', pageToken: undefined, pageSize: 1, fetch });
    expect(first).toEqual({ items: [1], nextPageToken: expect.stringMatching(UUID_V4) });
    now += PAGE_TOKEN_LIFETIME_SECONDS - 1;
    expect(tokens.page({ query: 'q', pageToken: first.nextPageToken, pageSize: 1, fetch }).items).toEqual([
      2,
    ]);
    now += 2;
    expect(() => tokens.page({ query: 'q', pageToken: first.nextPageToken, pageSize: 1, fetch })).toThrow(
      /expired/,
    );
  });
});

/** A GET with node:http, reporting what arrived even when the server breaks the connection. */
function rawGet(url: string): Promise<{
  status?: number;
  headers?: IncomingHttpHeaders;
  received: number;
  complete: boolean;
  error?: string;
  ms: number;
}> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = httpGet(url, { agent: false }, (res) => {
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      res.on('error', () => {});
      res.on('close', () =>
        resolve({
          status: res.statusCode as number,
          headers: res.headers,
          received,
          complete: res.complete,
          ms: performance.now() - started,
        }),
      );
    });
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({
        received: 0,
        complete: false,
        error: error.code ?? error.message,
        ms: performance.now() - started,
      }),
    );
  });
}

describe('faults', () => {
  it.each([
    [429, 'Too Many Requests'],
    [500, 'Internal Server Error'],
    [502, 'Bad Gateway'],
    [503, 'Service Unavailable'],
    [504, 'Gateway Timeout'],
  ])('%i is answered with an ErrorBody', async (status, error) => {
    const s = await serve({ faults: `${status}=1:7` });
    const res = await fetchJson(`${s.url}/v1/chains`);
    expect(res.status).toBe(status);
    expect(res.body).toEqual(errorBody(status, error));
    expect(res.headers['retry-after']).toBe(status === 429 ? '7' : undefined);
    // It models a proxy in front of the service, not the service's limiter: no ratelimit-* headers.
    expect(Object.keys(res.headers).filter((h) => h.startsWith('ratelimit'))).toEqual([]);
    // A faulted request is answered before any route runs, and is still counted as answered.
    expect(s.requests).toEqual([{ method: 'GET', path: '/v1/chains', status }]);
  });

  it('a faulted request costs no compute units', async () => {
    const s = await serve({
      decideFault: (key) => (key.includes('fail') ? { kind: 'status', status: 503 } : undefined),
    });
    expect((await fetchJson(`${s.url}/v1/networks/mainnet/rewards?fail=1`)).status).toBe(503);
    const after = await fetchJson(`${s.url}/v1/networks/mainnet/rewards`);
    expect(after.headers['ratelimit-remaining']).toBe('5900');
  });

  it('reset drops the connection without an answer', async () => {
    const s = await serve({ faults: 'reset=1' });
    const res = await rawGet(`${s.url}/v1/chains`);
    expect(res.status).toBeUndefined();
    expect(res.error).toMatch(/ECONNRESET|socket hang up/);
  });

  it('truncate sends fewer bytes than content-length promises', async () => {
    const s = await serve({ faults: 'truncate=1' });
    const res = await rawGet(`${s.url}/v1/networks/mainnet/rewards?pageSize=25`);
    expect(res.status).toBe(200);
    const promised = Number(res.headers?.['content-length']);
    expect(promised).toBeGreaterThan(100);
    expect(res.received).toBeLessThan(promised);
    expect(res.complete).toBe(false);
  });

  it('slow delays the whole answer by the given milliseconds', async () => {
    const s = await serve({ faults: 'slow=1:300' });
    const res = await rawGet(`${s.url}/v1/chains`);
    expect(res.status).toBe(200);
    expect(res.complete).toBe(true);
    expect(res.ms).toBeGreaterThanOrEqual(290);
    const fast = await serve();
    expect((await rawGet(`${fast.url}/v1/chains`)).ms).toBeLessThan(250);
  });

  it('decisions are reproducible from the seed, per request line and attempt', () => {
    const rules = parseFaultSpec('500=0.2,503=0.2,reset=0.1,slow=0.1:50');
    const run = (seed: number) => {
      const injector = createFaultInjector(seed, rules);
      const out: string[] = [];
      for (let attempt = 0; attempt < 40; attempt++)
        for (const line of ['GET /v1/chains', 'GET /v1/chains/43114/blocks'])
          out.push(JSON.stringify(injector.decide(line) ?? null));
      return out;
    };
    const first = run(11);
    expect(run(11)).toEqual(first);
    expect(run(12)).not.toEqual(first);
    // Every kind of the spec shows up, and so do clean answers, in roughly the configured shares.
    const kinds = new Set(first);
    expect(kinds).toContain('null');
    expect(kinds).toContain(JSON.stringify({ kind: 'status', status: 500 }));
    expect(kinds).toContain(JSON.stringify({ kind: 'status', status: 503 }));
    expect(kinds).toContain(JSON.stringify({ kind: 'reset' }));
    expect(kinds).toContain(JSON.stringify({ kind: 'slow', delayMs: 50 }));
    const clean = first.filter((f) => f === 'null').length / first.length;
    expect(clean).toBeGreaterThan(0.2);
    expect(clean).toBeLessThan(0.65);
  });

  it('a request retried after a fault meets the next decision of its sequence', async () => {
    const s = await serve({ faults: '503=0.5', seed: 3 });
    const injector = createFaultInjector(3, parseFaultSpec('503=0.5'));
    const expected = Array.from({ length: 12 }, () => (injector.decide('GET /v1/chains') ? 503 : 200));
    const got: number[] = [];
    for (let i = 0; i < 12; i++) got.push((await fetchJson(`${s.url}/v1/chains`)).status);
    expect(got).toEqual(expected);
    expect(got).toContain(503);
    expect(got).toContain(200);
  });
});

describe('configuration specs: errors name the bad entry', () => {
  it.each([
    ['500=0.1,oops=1', /"oops=1"/],
    ['418=0.5', /status 418 is not injectable/],
    ['500=1.5', /probability of 500 must be between 0 and 1, got 1.5/],
    ['500=0.6,503=0.6', /add up to 1.2/],
  ])('faults %s', (spec, message) => {
    expect(() => parseFaultSpec(spec)).toThrow(message);
  });

  it('faults: the documented example parses to its rules', () => {
    expect(parseFaultSpec('429=0.1:2,500=0.02,reset=0.01,truncate=0.01,slow=0.02:3000')).toEqual([
      { probability: 0.1, fault: { kind: 'status', status: 429, retryAfterSeconds: 2 } },
      { probability: 0.02, fault: { kind: 'status', status: 500 } },
      { probability: 0.01, fault: { kind: 'reset' } },
      { probability: 0.01, fault: { kind: 'truncate' } },
      { probability: 0.02, fault: { kind: 'slow', delayMs: 3000 } },
    ]);
    expect(parseFaultSpec('')).toEqual([]);
    expect(parseFaultSpec('none')).toEqual([]);
  });

  it.each([
    ['minute=0', /"minute=0" needs a positive number/],
    ['minute=1,day', /"day" needs a positive number/],
    ['scale=-1', /"scale=-1"/],
    ['bogus=3', /unknown setting "bogus"/],
  ])('rate limit %s', (spec, message) => {
    expect(() => parseRateLimitSpec(spec)).toThrow(message);
  });

  it('rate limit: a short spec parses to its windows and allowances', () => {
    expect(parseRateLimitSpec('minute=1,day=3,perMinute=300,perDay=500')).toEqual({
      enabled: true,
      minuteSeconds: 1,
      daySeconds: 3,
      scale: 1,
      perMinute: 300,
      perDay: 500,
    });
    expect(parseRateLimitSpec('off').enabled).toBe(false);
  });

  it.each([
    ['sk_live_FIRST:pro,sk_live_SECRET:platinum', 'entry 2: its tier (the second part) is not one of'],
    ['pro:sk_live_SECRET', 'entry 1: its tier (the second part) is not one of'],
    ['sk_live_SECRET', 'entry 1 has no tier'],
    ['sk_live_SECRET:', 'entry 1 has no tier'],
    [':pro', 'entry 1 has no key'],
    ['sk_live_SECRET:pro:allow=/v1', 'entry 1: its third part must be deny='],
    ['k:pro:sk_live_SECRET', 'entry 1: its third part must be deny='],
    ['sk_live_SECRET:pro:deny=/v1:extra', 'entry 1 has 4 parts'],
  ])('keys %s: the error names the entry and the bad part, never the key', (spec, message) => {
    let thrown: Error | undefined;
    try {
      parseKeysSpec(spec);
    } catch (error) {
      thrown = error as Error;
    }
    expect(thrown?.message).toContain(message);
    expect(thrown?.message).not.toMatch(/sk_live_|FIRST|SECRET/);
  });

  it('keys: findKey matches the whole key only, whatever the lengths', () => {
    const keys = parseKeysSpec('abc:free,abcd:pro,zzzz:growth');
    expect(findKey(keys, 'abcd')?.tier).toBe('pro');
    expect(findKey(keys, 'abc')?.tier).toBe('free');
    expect(findKey(keys, 'zzzz')?.tier).toBe('growth');
    expect(findKey(keys, 'abcde')).toBeUndefined();
    expect(findKey(keys, 'ab')).toBeUndefined();
    expect(findKey(keys, 'zzzy')).toBeUndefined();
    expect(findKey(keys, '')).toBeUndefined();
  });

  it('keys: entries parse to key, tier and barred prefixes', () => {
    expect(parseKeysSpec('k1:pro,k2:free:deny=/v1/signatureAggregator|/v1/icm')).toEqual([
      { key: 'k1', tier: 'pro', deny: [] },
      { key: 'k2', tier: 'free', deny: ['/v1/signatureAggregator', '/v1/icm'] },
    ]);
  });

  it.each(['fixed:soon', 'speed:0', 'slow', 'fixed:-5'])('clock %s', (spec) => {
    expect(() => parseClockSpec(spec)).toThrow(`got "${spec}"`);
  });

  it('clock: fixed stands still, advance moves it, set never goes back', () => {
    const clock = createClock('fixed:1000');
    expect(clock.now()).toBe(1000);
    clock.advance(60);
    expect(clock.now()).toBe(1060);
    clock.set(2000);
    expect(clock.now()).toBe(2000);
    expect(() => clock.set(1999)).toThrow(/only moves forward/);
    expect(() => clock.advance(-1)).toThrow(/must be >= 0, got -1/);
    let wall = 0;
    const fast = createClock('speed:60', () => wall);
    wall = 2;
    expect(fast.now()).toBe(120);
  });
});

describe('JSON-RPC envelope', () => {
  const ctx = { network: 'mainnet' as const, world: {} as World, now: TEST_EPOCH };
  const methods: Record<string, RpcMethod> = {
    'platform.getHeight': (params) => ({ height: '42', echo: params }),
    'platform.getTx': (params) => {
      if (typeof params.txID !== 'string') throw new RpcArgumentError('txID');
      throw new RpcError('not found');
    },
  };
  const call = (body: unknown) =>
    handleJsonRpc(typeof body === 'string' ? body : JSON.stringify(body), methods, ctx);

  it('answers a call with its result and id', () => {
    expect(call({ jsonrpc: '2.0', id: 7, method: 'platform.getHeight', params: { a: 1 } })).toEqual({
      jsonrpc: '2.0',
      result: { height: '42', echo: { a: 1 } },
      id: 7,
    });
    // gorilla accepts params as an object or a one-element array holding it.
    expect(call({ jsonrpc: '2.0', id: 'x', method: 'platform.getHeight', params: [{ b: 2 }] })).toEqual({
      jsonrpc: '2.0',
      result: { height: '42', echo: { b: 2 } },
      id: 'x',
    });
  });

  it('-32700 for a body that is not JSON', () => {
    expect(call('{"jsonrpc":')).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32700, data: null },
      id: null,
    });
  });

  it('-32600 when jsonrpc is not "2.0"', () => {
    expect(call({ jsonrpc: '1.0', id: 1, method: 'platform.getHeight' })).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'jsonrpc must be 2.0', data: null },
      id: 1,
    });
  });

  it('-32000 for an unknown method, bad params and handler errors', () => {
    expect(call({ jsonrpc: '2.0', id: 1, method: 'platform.getNothing' })).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'rpc: can\'t find method "platform.getNothing"', data: null },
      id: 1,
    });
    expect(call({ jsonrpc: '2.0', id: 2, method: 'avm.getHeight' })).toMatchObject({
      error: { code: -32000, message: 'rpc: can\'t find service "avm.getHeight"' },
    });
    expect(call({ jsonrpc: '2.0', id: 3, method: 'platform.GetHeight' })).toMatchObject({
      error: { code: -32000 },
    });
    expect(call({ jsonrpc: '2.0', id: 4, method: 'platform.getHeight', params: 5 })).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: ARGUMENT_MESSAGE, data: null },
      id: 4,
    });
    expect(call({ jsonrpc: '2.0', id: 5, method: 'platform.getTx', params: {} })).toMatchObject({
      error: { code: -32000, message: ARGUMENT_MESSAGE },
    });
    expect(call({ jsonrpc: '2.0', id: 6, method: 'platform.getTx', params: { txID: 'abc' } })).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'not found', data: null },
      id: 6,
    });
  });

  it('a notification (no id) gets no body, whether it succeeds or fails', () => {
    expect(call({ jsonrpc: '2.0', method: 'platform.getHeight' })).toBeUndefined();
    expect(call({ jsonrpc: '2.0', method: 'platform.getTx', params: { txID: 'abc' } })).toBeUndefined();
    expect(call({ jsonrpc: '2.0', method: 'platform.getNothing' })).toBeUndefined();
  });

  it('over HTTP: 200 for JSON-RPC errors, 415 for a wrong content type, 405 for GET', async () => {
    const s = await serve();
    const parseError = await fetchJson(`${s.url}/ext/bc/P`, { method: 'POST', body: '{"jsonrpc"' });
    expect(parseError.status).toBe(200);
    expect(parseError.body.error.code).toBe(-32700);
    const unknown = await fetchJson(`${s.url}/fuji/ext/bc/P`, {
      method: 'POST',
      body: { jsonrpc: '2.0', id: 9, method: 'platform.noSuchMethod', params: {} },
    });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ error: { code: -32000 }, id: 9 });
    const notification = await rawPost(`${s.url}/ext/bc/P`, '{"jsonrpc":"2.0","method":"platform.x"}');
    expect(notification).toEqual({ status: 200, body: '' });
    const raw = await rawPost(`${s.url}/ext/bc/P`, '{}', 'text/plain');
    expect(raw).toEqual({ status: 415, body: 'rpc: unrecognized Content-Type: text/plain\n' });
    const getIt = await rawGet(`${s.url}/ext/bc/P`);
    expect(getIt.status).toBe(405);
  });
});

async function rawPost(url: string, body: string, contentType = 'application/json') {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': contentType } });
  return { status: res.status, body: await res.text() };
}
