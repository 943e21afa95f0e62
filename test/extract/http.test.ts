import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/extract/http.ts';

/** What the test server saw of the last request. */
let seen: IncomingMessage | undefined;
let server: Server;
let origin: string;

const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  // A body of multi-byte characters, sent in pieces that cut a character in two.
  '/split': (_req, res) => {
    const bytes = Buffer.from(JSON.stringify({ name: 'Avalanche ⛰ Ölçü' }), 'utf8');
    res.writeHead(200, { 'content-type': 'application/json', 'x-many': ['a', 'b'] });
    const cut = bytes.indexOf(Buffer.from('⛰', 'utf8')) + 1;
    res.write(bytes.subarray(0, cut));
    setTimeout(() => res.end(bytes.subarray(cut)), 10);
  },
  // Headers, then a body that never ends.
  '/hang': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"partial":');
  },
  '/bom': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]));
  },
  // A valid answer that trickles in, a few bytes every 20 ms: never idle long enough for the read timeout.
  '/drip': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const text = JSON.stringify({ padding: 'x'.repeat(400) });
    let at = 0;
    const timer = setInterval(() => {
      if (res.destroyed || at >= text.length) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(text.slice(at, at + 4));
      at += 4;
    }, 20);
  },
  '/large': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ padding: 'x'.repeat(200_000) }));
  },
  '/later': (_req, res) => {
    res.writeHead(429, { 'retry-after': '3' });
    res.end('{"message":"slow down"}');
  },
};

beforeAll(async () => {
  server = createServer((req, res) => {
    seen = req;
    routes[req.url?.split('?')[0] ?? '']?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the HTTP client', () => {
  it('decodes a body whose characters span chunks, drops a BOM, joins repeated headers, sends the key only where keyed', async () => {
    const keyed = createHttpClient({ userAgent: 'avalake/test', apiKey: 'k-123', keyedOrigins: [origin] });
    const answer = await keyed.send({ url: `${origin}/split?x=1` });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ name: 'Avalanche ⛰ Ölçü' });
    expect(answer.headers['x-many']).toBe('a, b');
    // A byte-order mark in front of the JSON is dropped.
    expect(JSON.parse((await keyed.send({ url: `${origin}/bom` })).text)).toEqual({ a: 1 });
    expect(seen?.headers['x-data-api-key']).toBe('k-123');
    expect(seen?.headers['user-agent']).toBe('avalake/test');
    await keyed.close();

    const unkeyed = createHttpClient({ userAgent: 'avalake/test', apiKey: 'k-123', keyedOrigins: [] });
    const later = await unkeyed.send({ url: `${origin}/later` });
    expect(later).toMatchObject({ status: 429, text: '{"message":"slow down"}' });
    expect(later.headers['retry-after']).toBe('3');
    expect(seen?.headers['x-data-api-key']).toBeUndefined();
    await unkeyed.close();
  });

  it('gives up a request mid-body when its signal aborts, with the signal’s reason', async () => {
    const http = createHttpClient({ userAgent: 'avalake/test' });
    const stop = new AbortController();
    const reason = new Error('interrupted by a signal');
    const sent = http.send({ url: `${origin}/hang`, signal: stop.signal }).catch((e: unknown) => e);
    setTimeout(() => stop.abort(reason), 50);
    expect(await sent).toBe(reason);
    // Aborted before it is sent: refused at once.
    await expect(http.send({ url: `${origin}/split`, signal: stop.signal })).rejects.toBe(reason);
    await http.close();
  });

  it('ends a request whose answer trickles past its deadline, and one larger than the answer limit', async () => {
    const http = createHttpClient({
      userAgent: 'avalake/test',
      requestDeadlineMs: 300,
      maxAnswerBytes: 100_000,
    });
    const started = Date.now();
    const late = await http.send({ url: `${origin}/drip` }).catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'AVALAKE_REQUEST_DEADLINE', message: 'no whole answer within 0.3 s' });
    expect(Date.now() - started).toBeLessThan(1_500);
    const large = await http.send({ url: `${origin}/large` }).catch((e: unknown) => e);
    expect(large).toMatchObject({ code: 'AVALAKE_ANSWER_TOO_LARGE' });
    expect((large as Error).message).toMatch(
      /^the answer is larger than [\d.]+ MiB, more than any page of the services$/,
    );
    // Within the limits, the same client reads both whole.
    const roomy = createHttpClient({ userAgent: 'avalake/test' });
    expect(JSON.parse((await roomy.send({ url: `${origin}/drip` })).text).padding).toHaveLength(400);
    expect(JSON.parse((await roomy.send({ url: `${origin}/large` })).text).padding).toHaveLength(200_000);
    await Promise.all([http.close(), roomy.close()]);
  });

  it('gives up a request aborted while it waited for a connection, when one frees', async () => {
    const http = createHttpClient({ userAgent: 'avalake/test', connectionsPerHost: 1 });
    const [first, second] = [new AbortController(), new AbortController()];
    const holding = http.send({ url: `${origin}/hang`, signal: first.signal }).catch((e: unknown) => e);
    const waiting = http.send({ url: `${origin}/split`, signal: second.signal }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = new Error('stopped');
    second.abort(reason);
    first.abort(reason);
    expect(await holding).toBe(reason);
    expect(await waiting).toBe(reason);
    await http.close();
  });
});
