import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { Reject } from '../../load/index.ts';
import { recordCheckOf } from '../../schemas/record-check.ts';
import { ListingLoopError } from '../errors.ts';
import type { Pipeline } from '../pipeline.ts';
import type { PageRequest, Partition, StreamDefinition } from '../stream.ts';

/**
 * One step of a walk: the records to append (checked), the rejects, and the checkpoint that holds once
 * they are committed. `checkpoint` undefined means "not a point to commit at" (the middle of a snapshot).
 */
export interface WalkStep {
  append: Record<string, unknown>[];
  rejects: Reject[];
  checkpoint: Record<string, unknown> | undefined;
  /** The newest record time (Unix seconds) this step reached, for streams whose records have one. */
  newestAt?: number;
}

/** The latest of some record times, undefined when none has one: the lake's own, for its stamps. */
export { newestOf } from '../../load/index.ts';

/** A step's `newestAt`, present only when known. */
export const newestField = (newestAt: number | undefined) => (newestAt !== undefined ? { newestAt } : {});

export interface WalkContext<S extends z.ZodObject = z.ZodObject> {
  stream: StreamDefinition<S>;
  pipeline: Pipeline;
  partition: Partition;
  /** The partition's committed checkpoint, undefined before its first commit. */
  checkpoint: Readonly<Record<string, unknown>> | undefined;
  /** Fetches one page (retries, budget and errors handled); `pageToken` continues a listing. */
  fetchPage(request: PageRequest, pageToken?: string): Promise<unknown>;
}

export type Walk = AsyncGenerator<WalkStep, void, void>;

/**
 * A walk's pages, each asked for once. `ahead` asks for the next page as soon as the walk knows it will
 * read it, before the walk has checked the page in hand; `fetch` then hands that answer over instead of
 * asking again. The source prepares the next page while this one is checked and buffered: the walk no
 * longer waits for the source and for its own work in turn. A strategy asks ahead only when the page in
 * hand cannot end the walk (it says so from the page's raw records), so no page is asked for that the
 * walk would not have read, unless the run is interrupted or fails first.
 *
 * The walk awaits `ahead` before it goes on: the request must be on the wire first. undici writes a
 * request on a kept-alive connection only in a later turn of the event loop (it first lets the socket's
 * pending events be handled, GHSA-35p6-xmwp-9g52), so a request asked for in the middle of the walk's
 * work would leave only once that work was done, and the source would wait for it as before.
 */
export interface Pager {
  fetch(request: PageRequest, pageToken?: string): Promise<unknown>;
  ahead(request: PageRequest, pageToken?: string): Promise<void>;
  /**
   * The walk starts its pass over (from the top, or from its cursor, after a token was refused): the
   * source may hand it the tokens of the last pass again.
   */
  restart(): void;
}

/**
 * Also the guard against a listing that loops: a token followed twice in one pass fails the walk with
 * ListingLoopError, where it would otherwise read the same pages for ever. Tokens are remembered by a
 * 52-bit hash (a 10M-record walk of 100k pages holds about 2 MB of them; the chance that two differ
 * and collide is about one in a million).
 */
export function createPager(fetchPage: WalkContext['fetchPage']): Pager {
  let asked: { key: string; page: Promise<unknown> } | undefined;
  let followed = new Set<number>();
  const keyOf = (request: PageRequest, pageToken: string | undefined) =>
    JSON.stringify([request, pageToken ?? null]);
  const hashOf = (pageToken: string) =>
    Number.parseInt(createHash('sha1').update(pageToken).digest('hex').slice(0, 13), 16);
  return {
    fetch(request, pageToken) {
      // Followed when the walk takes the page, whether it was asked for ahead or not.
      if (pageToken !== undefined) {
        const hash = hashOf(pageToken);
        if (followed.has(hash)) return Promise.reject(new ListingLoopError(followed.size + 1));
        followed.add(hash);
      }
      const pending = asked;
      asked = undefined;
      if (pending?.key === keyOf(request, pageToken)) return pending.page;
      return fetchPage(request, pageToken);
    },
    ahead(request, pageToken) {
      // A token followed before is not asked for: the walk fails on it once it has the page in hand.
      if (pageToken !== undefined && followed.has(hashOf(pageToken))) return Promise.resolve();
      const page = fetchPage(request, pageToken);
      // Its failure is the walk's when it asks for the page; a walk that stops first never does.
      page.catch(() => undefined);
      asked = { key: keyOf(request, pageToken), page };
      return requestWritten();
    },
    restart() {
      followed = new Set();
    },
  };
}

/**
 * Resolves once a request handed to undici in this turn has been written. undici queues the write as an
 * immediate when the request reaches it, a few promise steps after the call; the first immediate here is
 * queued before it and the second after it, since an immediate queued while immediates run waits for
 * the loop's next turn. A request the rate budget holds back leaves later; the walk does not wait for it.
 */
function requestWritten(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * Whether any of a page's raw records (not yet checked against the schema) is one of `test`'s, which
 * could end the walk there. A record too malformed to tell counts as one: the walk then does not ask ahead.
 */
export function anyRecord(
  records: readonly unknown[],
  test: (record: Record<string, unknown>) => boolean,
): boolean {
  for (const record of records) {
    try {
      if (typeof record === 'object' && record !== null && test(record as Record<string, unknown>))
        return true;
    } catch {
      return true;
    }
  }
  return false;
}

/**
 * Checks one page's records against the stream's schema: the good ones parsed, the bad ones as rejects.
 * A record the quick check passes (schemas/record-check.ts) is used itself, any field zod would convert
 * converted in place; zod parses the others.
 */
export function checkRecords<S extends z.ZodObject>(stream: StreamDefinition<S>, body: unknown) {
  const valid: z.output<S>[] = [];
  const rejects: Reject[] = [];
  /** The rejected records themselves, in the order of `rejects`, each with the index in `valid` it preceded. */
  const rejected: { record: unknown; before: number }[] = [];
  const quick = recordCheckOf(stream.schema);
  for (const raw of stream.records(body)) {
    if (quick(raw)) {
      valid.push(raw as z.output<S>);
      continue;
    }
    const parsed = stream.schema.safeParse(raw);
    if (parsed.success) valid.push(parsed.data);
    else {
      rejected.push({ record: raw, before: valid.length });
      rejects.push({
        raw: JSON.stringify(raw) ?? 'undefined',
        reason: parsed.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; '),
      });
    }
  }
  return { valid, rejects, rejected };
}

/** The `nextPageToken` of a Data/Metrics API page, if any. */
export function nextTokenOf(body: unknown): string | undefined {
  const token = (body as { nextPageToken?: unknown } | null)?.nextPageToken;
  return typeof token === 'string' && token !== '' ? token : undefined;
}
