import { z } from 'zod';
import type { Pipeline } from '../../src/extract/pipeline.ts';
import { type WalkStep, walkOf } from '../../src/extract/strategies/index.ts';
import { defineStream, httpGet, type PageRequest, type StreamDefinition } from '../../src/extract/stream.ts';

/**
 * A newest-first listing of the walks' own tests, with no source behind it: records `{ id, status }`,
 * 'open' ones still changing, with a time `t` where a test gives one (as every real listing does), and
 * a page for each token the test answers.
 */

export type Item = { id: string; status: string; t?: number };
export type Page = { items: Item[]; nextPageToken?: string };

export const listingStream = defineStream({
  name: 'test_listing',
  description: 'a newest-first listing',
  strategy: 'newest-first',
  schema: z.object({ id: z.string(), status: z.enum(['open', 'done']), t: z.number().optional() }),
  primaryKey: ['id'],
  isFinal: (r) => r.status === 'done',
  timeOf: (r) => r.t,
  partitions: () => [{ network: 'fuji' }],
  request: () => httpGet({ service: 'data', route: '/v1/test', params: {}, query: {} }),
  records: (body) => (body as Page).items,
});

/** `items` newest first, `size` to a page, each page's token `t<index of the next page>`. */
export function pagesOf(items: Item[], size = 3): Page[] {
  const pages = Math.ceil(items.length / size);
  return Array.from({ length: pages }, (_, p) => ({
    items: items.slice(p * size, p * size + size),
    ...(p < pages - 1 ? { nextPageToken: `t${p + 1}` } : {}),
  }));
}

/** The page a token names, of `pages`. */
export const pageFor = (pages: Page[]) => (token: string | undefined) =>
  pages[token ? Number(token.slice(1)) : 0] as Page;

/**
 * One walk of the listing after `committed`: `answer` gives the page for a token (or throws, as the
 * source's error); `steps` stops the run after that many pages (interrupted: a spent quota, a signal).
 * What it appended, rejected and committed, how many pages it asked for, and the error it ended with.
 */
export function walkListing(
  answer: (token: string | undefined) => Page,
  committed?: Record<string, unknown>,
  steps = Number.POSITIVE_INFINITY,
) {
  return walkStream(listingStream, answer, committed, steps);
}

/** One walk of any stream of the walks' tests, as `walkListing`; `answer` also gets the page's request. */
export async function walkStream(
  stream: StreamDefinition,
  answer: (token: string | undefined, request: PageRequest) => unknown,
  committed?: Record<string, unknown>,
  steps = Number.POSITIVE_INFINITY,
) {
  const taken: WalkStep[] = [];
  let requests = 0;
  const ctx = {
    stream,
    pipeline: { flush: { rows: 50_000, bytes: 1 << 26, seconds: 60 } } as Pipeline,
    partition: { network: 'fuji' },
    checkpoint: committed,
    fetchPage: async (request: PageRequest, token?: string) => {
      requests++;
      if (requests > 1_000) throw new Error('the walk does not end');
      return structuredClone(answer(token, request));
    },
  };
  let error: unknown;
  try {
    for await (const step of walkOf(stream, ctx, Date.now())) {
      taken.push(step);
      if (taken.length >= steps) break;
    }
  } catch (e) {
    error = e;
  }
  return {
    appended: taken.flatMap((s) => s.append.map((r) => r.id as string)),
    rejected: taken.flatMap((s) => s.rejects).length,
    requests,
    error,
    checkpoint: taken.findLast((s) => s.checkpoint !== undefined)?.checkpoint as Record<string, unknown>,
  };
}
