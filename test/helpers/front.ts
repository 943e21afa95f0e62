import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/** What the front does with a request: pass it on, hold it unanswered (a hung service), or answer it. */
export type FrontStep =
  | 'forward'
  | 'hang'
  | { status: number; headers?: Record<string, string>; body: unknown };

export interface Front {
  /** `http://127.0.0.1:<port>`: stands in for the target's URL. */
  url: string;
  /** Requests it received. */
  requests: number;
  close(): Promise<void>;
}

/**
 * A real HTTP server in front of `target` (the emulator), that misbehaves as a service or a proxy may:
 * `step(n)` says what to do with the n-th request (from 1).
 */
export async function startFront(target: string, step: (n: number) => FrontStep): Promise<Front> {
  const front: Front = { url: '', requests: 0, close: async () => {} };
  const server = createServer(async (req, res) => {
    const what = step(++front.requests);
    if (what === 'hang') return;
    if (what === 'forward') {
      const body = await bodyOf(req);
      const { host: _host, connection: _connection, ...headers } = req.headers;
      const answer = await request(`${target}${req.url}`, {
        method: req.method as 'GET' | 'POST',
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const text = await answer.body.text();
      const { 'transfer-encoding': _te, connection: _c, 'content-length': _l, ...back } = answer.headers;
      res.writeHead(answer.statusCode, back);
      res.end(text);
      return;
    }
    const text = JSON.stringify(what.body);
    res.writeHead(what.status, { 'content-type': 'application/json', ...what.headers });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  front.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  front.close = () => {
    // Held requests keep their connections open: end them, or close waits for ever.
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return front;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
