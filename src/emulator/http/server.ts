import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../clock.ts';
import type { Fault } from '../faults.ts';
import { type ApiKey, findKey } from '../keys.ts';
import { computeUnitsOf, type RateLimiter } from '../limits.ts';
import type { World } from '../world/index.ts';
import { HttpError } from './errors.ts';
import type { PageTokens } from './paging.ts';
import { createQuery } from './query.ts';
import { createRouter, isRawReply, type RequestContext, type Route } from './route.ts';

export interface ServerDeps {
  routes: readonly Route[];
  world: World;
  clock: Clock;
  tokens: PageTokens;
  limiter: RateLimiter;
  keys: readonly ApiKey[];
  decideFault(requestKey: string): Fault | undefined;
  /** Called once per answered request (benchmarks and tests count them). */
  onRequest?(info: { method: string; path: string; status: number }): void;
}

/** Largest request body accepted (aggregation and RPC bodies are small). */
export const MAX_BODY_BYTES = 1 << 20;

interface Reply {
  status: number;
  body: string;
  contentType: string;
  headers: Record<string, string>;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  body: JSON.stringify(body),
  contentType: 'application/json; charset=utf-8',
  headers,
});

export function createHttpServer(deps: ServerDeps): Server {
  const router = createRouter(deps.routes);

  const answer = async (req: IncomingMessage, rawBody: string): Promise<Reply> => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const method = req.method ?? 'GET';
    const match = router.match(method, url.pathname);
    if (match === undefined) return json(404, new HttpError(404, `Cannot ${method} ${url.pathname}`).body());
    if (match === 'method-not-allowed') {
      if (url.pathname.startsWith('/ext/'))
        return { status: 405, body: 'method not allowed\n', contentType: 'text/plain', headers: {} };
      return json(404, new HttpError(404, `Cannot ${method} ${url.pathname}`).body());
    }
    const { route, params } = match;

    let limitHeaders: Record<string, string> = {};
    if (route.service !== 'rpc') {
      // The metrics service takes no key; the data service accepts either header name.
      let tier: ApiKey['tier'] = 'unauthenticated';
      let bucket = 'anonymous';
      if (route.service === 'data') {
        const presented = header(req, 'x-data-api-key') ?? header(req, 'x-glacier-api-key');
        if (presented !== undefined) {
          const key = findKey(deps.keys, presented);
          if (!key) return json(401, new HttpError(401, 'The API key is not valid').body());
          if (key.deny.some((prefix) => url.pathname.startsWith(prefix)))
            return json(
              403,
              new HttpError(403, `The API key does not permit ${method} ${route.path}`).body(),
            );
          tier = key.tier;
          bucket = `key:${key.key}`;
        }
      } else {
        tier = 'free';
      }
      const charge = deps.limiter.charge(
        bucket,
        route.service,
        tier,
        computeUnitsOf(route.service, method, route.path),
      );
      limitHeaders = charge.headers;
      if (!charge.allowed) {
        const which = charge.exhausted === 'day' ? 'daily' : 'per-minute';
        return json(
          429,
          new HttpError(
            429,
            `Rate limit exceeded: the ${which} compute-unit allowance (${charge.headers['ratelimit-limit']} CUs) is spent; retry in ${charge.resetSeconds} s`,
          ).body(),
          charge.headers,
        );
      }
    }

    const query = createQuery(url.searchParams);
    const now = Math.floor(deps.clock.now());
    const pageQuery = `${method} ${url.pathname}?${query.identity()}`;
    const ctx: RequestContext = {
      method,
      path: url.pathname,
      params,
      query,
      header: (name) => header(req, name),
      rawBody,
      now,
      world: deps.world,
      page: (pageSize, fetch) =>
        deps.tokens.page({ query: pageQuery, pageToken: query.string('pageToken'), pageSize, fetch }),
    };
    try {
      const result = await route.handle(ctx);
      if (isRawReply(result)) {
        return {
          status: result.status,
          body: typeof result.body === 'string' ? result.body : JSON.stringify(result.body),
          contentType: result.contentType ?? 'application/json; charset=utf-8',
          headers: limitHeaders,
        };
      }
      return json(route.status ?? 200, result, limitHeaders);
    } catch (error) {
      if (error instanceof HttpError)
        return json(error.status, error.body(), { ...limitHeaders, ...error.headers });
      console.error(`emulator: ${method} ${url.pathname} failed:`, error);
      return json(500, new HttpError(500, 'Internal server error').body(), limitHeaders);
    }
  };

  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    // The world's clock, not the machine's: a client judges how current the data is against it.
    res.setHeader('date', new Date(deps.clock.now() * 1000).toUTCString());
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      // Faults come first, decided from the request line alone; a faulted request costs no CUs.
      const fault = deps.decideFault(`${req.method} ${req.url}`);
      if (fault && (fault.kind === 'status' || fault.kind === 'reset')) {
        if (fault.kind === 'status')
          deps.onRequest?.({ method: req.method ?? 'GET', path: req.url ?? '/', status: fault.status });
        sendFault(res, fault);
        return;
      }
      if (size > MAX_BODY_BYTES) {
        // Refused whole rather than cut: a truncated body would parse as something it is not.
        const reply = json(
          413,
          new HttpError(
            413,
            `The request body is ${size} bytes; the largest accepted is ${MAX_BODY_BYTES} bytes`,
          ).body(),
        );
        deps.onRequest?.({ method: req.method ?? 'GET', path: req.url ?? '/', status: 413 });
        send(res, reply, false);
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      answer(req, body)
        .then(async (reply) => {
          if (fault?.kind === 'slow') await sleep(fault.delayMs);
          deps.onRequest?.({ method: req.method ?? 'GET', path: req.url ?? '/', status: reply.status });
          send(res, reply, fault?.kind === 'truncate');
        })
        .catch((error) => {
          console.error('emulator: unexpected failure', error);
          res.destroy();
        });
    });
  });
  return server;
}

function send(res: ServerResponse, reply: Reply, truncate: boolean): void {
  const bytes = Buffer.from(reply.body, 'utf8');
  res.writeHead(reply.status, {
    'content-type': reply.contentType,
    'content-length': String(bytes.length),
    ...reply.headers,
  });
  if (!truncate) {
    res.end(bytes);
    return;
  }
  // A body cut short: the promised length is never delivered and the connection drops.
  res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
}

function sendFault(res: ServerResponse, fault: Fault): void {
  if (fault.kind === 'reset') {
    res.socket?.resetAndDestroy?.();
    res.destroy();
    return;
  }
  if (fault.kind !== 'status') return;
  const headers: Record<string, string> = {};
  if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
  const message =
    fault.status === 429
      ? 'Rate limit exceeded'
      : fault.status === 503
        ? 'Service temporarily unavailable'
        : 'Upstream failure';
  send(res, json(fault.status, new HttpError(fault.status, message).body(), headers), false);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export function listenOn(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
