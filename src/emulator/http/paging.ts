import { digest } from '../rng.ts';
import { badRequest } from './errors.ts';

/** Both services document a 24-hour token life; measured on the emulator's clock. */
export const PAGE_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

/**
 * Tokens held at most (a few hundred bytes each: ~30 MB at the cap). Past it the least recently
 * issued or used token is discarded and answers 400 like an expired one, so a walk of any length
 * keeps memory flat even on a fixed clock, where nothing ever expires. Far more than the live walks
 * of any test or benchmark, which each need only their latest token.
 */
export const MAX_PAGE_TOKENS = 50_000;

/**
 * Where a listing resumes. Listings choose their own shape (an index, a block and log index, a
 * timestamp and id); it is kept server-side, behind an opaque UUID, as the real services do.
 */
export type Position = string | number | readonly (string | number)[];

interface Issued {
  query: string;
  position: Position;
  issuedAt: number;
}

export interface Page<T> {
  items: T[];
  nextPageToken?: string;
}

/** One slice of a listing from `position`: up to `limit` items, and where the next slice starts if any remain. */
export type FetchSlice<T> = (
  position: Position | undefined,
  limit: number,
) => { items: T[]; next?: Position };

export interface PageTokens {
  /** Runs one page of a listing: resolves `pageToken` (400 if foreign or expired), fetches, issues the next token. */
  page<T>(args: {
    query: string;
    pageToken: string | undefined;
    pageSize: number;
    fetch: FetchSlice<T>;
  }): Page<T>;
  /** Tokens currently held (for memory accounting in benchmarks). */
  size(): number;
}

export function createPageTokens(
  seed: number,
  now: () => number,
  maxTokens: number = MAX_PAGE_TOKENS,
): PageTokens {
  // A Map iterates in insertion order: re-inserting on use makes its first key the least recently used.
  const tokens = new Map<string, Issued>();
  let lastSweep = now();

  // Expired tokens are dropped now and then, so a ten-million-record walk keeps a bounded map.
  const sweep = (t: number) => {
    if (t - lastSweep < 3600) return;
    lastSweep = t;
    for (const [token, issued] of tokens)
      if (t - issued.issuedAt > PAGE_TOKEN_LIFETIME_SECONDS) tokens.delete(token);
  };

  // Deterministic UUID v4 shape from (seed, query, position): the same walk gives the same bytes.
  const tokenFor = (query: string, position: Position): string => {
    const h = digest(seed, 'page-token', query, JSON.stringify(position));
    h[6] = ((h[6] as number) & 0x0f) | 0x40;
    h[8] = ((h[8] as number) & 0x3f) | 0x80;
    const x = h.subarray(0, 16).toString('hex');
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
  };

  return {
    page({ query, pageToken, pageSize, fetch }) {
      const t = now();
      sweep(t);
      let position: Position | undefined;
      if (pageToken !== undefined) {
        const issued = tokens.get(pageToken);
        if (!issued)
          throw badRequest(
            `pageToken "${pageToken}" is not valid: it was never issued, or it expired (tokens live 24 hours) or was discarded (the emulator keeps the ${maxTokens} most recent); restart from the first page`,
          );
        if (issued.query !== query)
          throw badRequest(
            `pageToken "${pageToken}" belongs to a different query; send it with the same parameters`,
          );
        if (t - issued.issuedAt > PAGE_TOKEN_LIFETIME_SECONDS)
          throw badRequest(
            `pageToken "${pageToken}" has expired (tokens live 24 hours); restart from the first page`,
          );
        position = issued.position;
        tokens.delete(pageToken);
        tokens.set(pageToken, issued);
      }
      const slice = fetch(position, pageSize);
      if (slice.next === undefined) return { items: slice.items };
      const nextPageToken = tokenFor(query, slice.next);
      tokens.delete(nextPageToken);
      tokens.set(nextPageToken, { query, position: slice.next, issuedAt: t });
      if (tokens.size > maxTokens) {
        const oldest = tokens.keys().next().value;
        if (oldest !== undefined) tokens.delete(oldest);
      }
      return { items: slice.items, nextPageToken };
    },
    size: () => tokens.size,
  };
}

/** The §2.1 envelope's tail: `nextPageToken` only when another page follows. */
export const withNextToken = (page: Page<unknown>): { nextPageToken?: string } =>
  page.nextPageToken ? { nextPageToken: page.nextPageToken } : {};

/**
 * Slices a listing that is already materialised as a sorted array (the small collections: validators,
 * delegators, rewards). Position is the index of the next item.
 */
export function sliceArray<T>(items: readonly T[]): FetchSlice<T> {
  return (position, limit) => {
    const start = typeof position === 'number' ? position : 0;
    const end = Math.min(items.length, start + limit);
    return { items: items.slice(start, end), ...(end < items.length ? { next: end } : {}) };
  };
}

/** Lexicographic comparison of tuple keys; `direction` -1 for descending listings. */
export function compareTuples(direction: 1 | -1 = 1) {
  return (a: Position, b: Position): number => {
    const x = Array.isArray(a) ? a : [a];
    const y = Array.isArray(b) ? b : [b];
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      const p = x[i];
      const q = y[i];
      if (p === q) continue;
      if (p === undefined) return -direction;
      if (q === undefined) return direction;
      return (p < q ? -1 : 1) * direction;
    }
    return 0;
  };
}
