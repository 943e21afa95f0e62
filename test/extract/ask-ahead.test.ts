import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher } from '../../src/extract/fetcher.ts';
import { createHttpClient, type HttpClient } from '../../src/extract/http.ts';
import { createPager } from '../../src/extract/strategies/walk.ts';
import type { PageRequest } from '../../src/extract/stream.ts';

/**
 * A walk asks for its next page before it checks the page in hand, so that the source prepares one
 * while the walk works on the other. Shown against a server on its own thread, which notes when each
 * request arrives while this thread is busy, as a walk checking and buffering a page is.
 */

// The server: page N answers { items: [N], nextPageToken: N + 1 }; 'arrivals' reports when each came.
const SERVER = `
const { parentPort } = require('node:worker_threads');
const http = require('node:http');
const arrivals = {};
const server = http.createServer((req, res) => {
  arrivals[req.url] = Date.now();
  const n = Number(req.url.split('/').pop());
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ items: [n], nextPageToken: String(n + 1) }));
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'arrivals') parentPort.postMessage({ arrivals });
  if (m === 'close') server.close(() => parentPort.close());
});
`;

let worker: Worker;
let base: string;
let http: HttpClient;

const fromServer = <T>(ask?: string) =>
  new Promise<T>((resolve) => {
    worker.once('message', resolve);
    if (ask) worker.postMessage(ask);
  });

beforeAll(async () => {
  worker = new Worker(SERVER, { eval: true });
  const { port } = await fromServer<{ port: number }>();
  base = `http://127.0.0.1:${port}`;
  http = createHttpClient({ userAgent: 'avalake-test' });
});

afterAll(async () => {
  await http.close();
  worker.postMessage('close');
  await new Promise((resolve) => worker.once('exit', resolve));
});

/** Keeps this thread busy, as checking and buffering a large page does. */
function busyFor(ms: number): number {
  const until = Date.now() + ms;
  while (Date.now() < until) {}
  return Date.now();
}

describe('asking ahead', () => {
  it('puts the next request on the wire before the walk works on the page in hand', async () => {
    const fetcher = createFetcher({ http, retries: 0 });
    const pager = createPager((_request, pageToken) =>
      fetcher({ url: `${base}/page/${pageToken ?? '1'}`, cost: 0, at: {} }),
    );
    const request = { kind: 'http' } as PageRequest;

    // The first page leaves the kept-alive connection idle, as every page of a walk after the first does.
    expect(await pager.fetch(request)).toEqual({ items: [1], nextPageToken: '2' });
    await pager.ahead(request, '2');
    const busyUntil = busyFor(300);
    expect(await pager.fetch(request, '2')).toEqual({ items: [2], nextPageToken: '3' });

    const { arrivals } = await fromServer<{ arrivals: Record<string, number> }>('arrivals');
    expect(Object.keys(arrivals).sort()).toEqual(['/page/1', '/page/2']);
    // Page 2 was asked for while this thread was busy, not once it was done.
    expect(arrivals['/page/2']).toBeLessThan(busyUntil - 200);
  });

  it('asks for a page once: fetch hands over the answer asked for ahead, and asks for any other', async () => {
    let asked = 0;
    const pager = createPager(async (_request, pageToken) => {
      asked++;
      return { page: pageToken };
    });
    const request = { kind: 'http' } as PageRequest;
    await pager.ahead(request, 'b');
    expect(await pager.fetch(request, 'b')).toEqual({ page: 'b' });
    expect(asked).toBe(1);
    // Asked ahead for one page, the walk fetches another (a refused token restarts it): both are asked.
    await pager.ahead(request, 'c');
    expect(await pager.fetch(request, 'd')).toEqual({ page: 'd' });
    expect(asked).toBe(3);
  });
});
