import type { World } from '../world/index.ts';
import type { FetchSlice, Page } from './paging.ts';
import type { Query } from './query.ts';

/** Which surface a route belongs to: each has its own keys and limits. */
export type Service = 'data' | 'metrics' | 'rpc';

export interface RequestContext {
  readonly method: string;
  readonly path: string;
  /** Path parameters by their `{name}` in the route pattern, URL-decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: Query;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** The request body as text (POST routes). */
  readonly rawBody: string;
  /** Emulator time in whole Unix seconds, fixed for the whole request. */
  readonly now: number;
  readonly world: World;
  /** One page of a listing, with its token bound to this path and query. */
  page<T>(pageSize: number, fetch: FetchSlice<T>): Page<T>;
}

const RAW = Symbol('raw-reply');

/** A reply whose status and body the handler sets itself (the JSON-RPC route, which answers 200 to errors). */
export interface RawReply {
  readonly [RAW]: true;
  status: number;
  body: unknown;
  contentType?: string;
}

export const rawReply = (status: number, body: unknown, contentType?: string): RawReply => ({
  [RAW]: true,
  status,
  body,
  ...(contentType ? { contentType } : {}),
});

export const isRawReply = (x: unknown): x is RawReply => typeof x === 'object' && x !== null && RAW in x;

export interface Route {
  readonly service: Service;
  readonly method: 'GET' | 'POST';
  /** A pattern such as `/v1/networks/{network}/rewards`; segments like `transactions:listStaking` are literal. */
  readonly path: string;
  /** Success status (201 for the aggregation POST). */
  readonly status?: number;
  /** Returns the JSON body (or a RawReply); throws HttpError for 4xx answers. */
  handle(ctx: RequestContext): unknown;
}

export const defineRoutes = (routes: Route[]): Route[] => routes;

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/** Matches paths segment by segment; literal segments win over parameters. */
export function createRouter(routes: readonly Route[]) {
  const compiled = routes.map((route) => ({ route, segments: route.path.split('/').slice(1) }));
  return {
    match(method: string, path: string): RouteMatch | 'method-not-allowed' | undefined {
      const parts = path.split('/').slice(1);
      let wrongMethod = false;
      let best: { match: RouteMatch; literals: number } | undefined;
      for (const { route, segments } of compiled) {
        if (segments.length !== parts.length) continue;
        const params: Record<string, string> = {};
        let literals = 0;
        let ok = true;
        for (let i = 0; i < segments.length && ok; i++) {
          const seg = segments[i] as string;
          const part = parts[i] as string;
          if (seg.startsWith('{') && seg.endsWith('}')) {
            if (part === '' || part.includes(':')) ok = false;
            else params[seg.slice(1, -1)] = safeDecode(part);
          } else if (seg === part) literals++;
          else ok = false;
        }
        if (!ok) continue;
        if (route.method !== method) {
          wrongMethod = true;
          continue;
        }
        if (!best || literals > best.literals) best = { match: { route, params }, literals };
      }
      return best?.match ?? (wrongMethod ? 'method-not-allowed' : undefined);
    },
  };
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
