import { z } from 'zod';
import { isRejectedPageToken } from '../errors.ts';
import { historyEnd } from '../pipeline.ts';
import { type CursorStream, keyOf } from '../stream.ts';
import {
  anyRecord,
  checkRecords,
  createPager,
  newestField,
  newestOf,
  nextTokenOf,
  type Walk,
  type WalkContext,
} from './walk.ts';

/**
 * Where an ascending walk stands: every record before `cursor` is committed, and so are those at
 * `cursor` whose keys are in `boundary`. `window` resumes a walk in progress by its page token; the
 * token belongs to the query that started at `window.cursor`.
 */
const CursorCheckpoint = z.object({
  cursor: z.number().optional(),
  boundary: z.array(z.string()).default([]),
  window: z.object({ cursor: z.number().optional(), pageToken: z.string() }).optional(),
});

export async function* walkCursor(ctx: WalkContext): Walk {
  const stream = ctx.stream as CursorStream<z.ZodObject>;
  const state = CursorCheckpoint.parse(ctx.checkpoint ?? {});
  let cursor = state.cursor;
  let boundary = new Set(state.boundary);
  // What was committed before this walk: a record listed after a newer one (a source whose order
  // drifts) is older than the cursor has moved to, but new all the same, and kept.
  const committedCursor = cursor;
  const committedBoundary = new Set(boundary);
  /** Keys appended from this page and the one before: pages that overlap list a record twice. */
  let takenBefore = new Set<string>();
  let window = state.window;
  // The pipeline's `end` (exclusive): the listing is asked for less, and what comes anyway is not kept.
  const end = historyEnd(ctx.pipeline);
  const pager = createPager(ctx.fetchPage);

  for (;;) {
    const windowCursor = window ? window.cursor : cursor;
    const request = stream.request(ctx.pipeline, ctx.partition, windowCursor);
    let body: unknown;
    try {
      body = await pager.fetch(request, window?.pageToken);
    } catch (error) {
      // An expired or foreign token: start the window again from the cursor; the boundary skips the overlap.
      if (window && isRejectedPageToken(error)) {
        pager.restart();
        window = undefined;
        continue;
      }
      throw error;
    }
    // Only a record at or past the end stops a walk that has a next page.
    const nextToken = nextTokenOf(body);
    const mayEnd = end !== undefined && anyRecord(stream.records(body), (r) => !(stream.cursorOf(r) < end));
    if (nextToken && !mayEnd) await pager.ahead(request, nextToken);
    const { valid, rejects } = checkRecords(stream, body);
    const append: Record<string, unknown>[] = [];
    const takenNow = new Set<string>();
    let pastEnd = false;
    for (const record of valid) {
      const at = stream.cursorOf(record);
      if (end !== undefined && at >= end) {
        pastEnd = true;
        break;
      }
      const key = keyOf(stream.primaryKey, record);
      const committed =
        committedCursor !== undefined &&
        (at < committedCursor || (at === committedCursor && committedBoundary.has(key)));
      const taken = (at === cursor && boundary.has(key)) || takenNow.has(key) || takenBefore.has(key);
      if (committed || taken) continue;
      append.push(record);
      takenNow.add(key);
      if (cursor === undefined || at > cursor) {
        cursor = at;
        boundary = new Set([key]);
      } else if (at === cursor) boundary.add(key);
    }
    takenBefore = takenNow;
    const pageToken = pastEnd ? undefined : nextToken;
    window = pageToken
      ? { ...(windowCursor !== undefined ? { cursor: windowCursor } : {}), pageToken }
      : undefined;
    yield {
      append,
      rejects,
      ...newestField(newestOf(append.map((r) => stream.cursorOf(r)))),
      checkpoint: {
        ...(cursor !== undefined ? { cursor } : {}),
        boundary: [...boundary],
        ...(window ? { window } : {}),
      },
    };
    if (!window) return;
  }
}
