import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isRejectedPageToken } from '../errors.ts';
import { historyEnd, historyStart } from '../pipeline.ts';
import { keyOf, type NewestFirstStream } from '../stream.ts';
import {
  checkRecords,
  newestField,
  newestOf,
  nextTokenOf,
  type Walk,
  type WalkContext,
  type WalkStep,
} from './walk.ts';

/**
 * Where a newest-first listing stands after a run: `head` is the newest committed record, `since` its
 * sort value (for listings that take a lower bound), and `open` the records that could still change,
 * with a hash of the version committed. A walk in progress (`window`) remembers its page token, the
 * newest record it met (`top`), the last one it handled (`bottom`), and what it learned so far.
 */
const NewestFirstCheckpoint = z.object({
  head: z.string().optional(),
  since: z.number().optional(),
  open: z.record(z.string(), z.string()).default({}),
  window: z
    .object({
      since: z.number().optional(),
      pageToken: z.string(),
      top: z.string(),
      topSince: z.number().optional(),
      bottom: z.string(),
      passedHead: z.boolean(),
      seenOpen: z.array(z.string()),
      newOpen: z.record(z.string(), z.string()),
    })
    .optional(),
});
type NewestFirstCheckpoint = z.output<typeof NewestFirstCheckpoint>;
type Window = NonNullable<NewestFirstCheckpoint['window']>;

const versionOf = (record: unknown) =>
  createHash('sha256').update(JSON.stringify(record)).digest('base64url').slice(0, 16);

export async function* walkNewestFirst(ctx: WalkContext): Walk {
  let checkpoint = ctx.checkpoint;
  for (;;) {
    const end = yield* walkOnce({ ...ctx, checkpoint });
    // A walk carried on by an earlier run's page token ends at the top that run met: what the source
    // listed since sits above it, so one fresh pass follows, down to that top. Without it a run ends
    // "ok" with the lake behind the source until the run after. A walk that began at the top (a new
    // one, or one whose token was refused) has read it already.
    if (end.fromTop) return;
    checkpoint = end.checkpoint;
  }
}

/** One walk from the checkpoint: whether it read the listing from its top in this run, and where it ended. */
async function* walkOnce(
  ctx: WalkContext,
): AsyncGenerator<WalkStep, { fromTop: boolean; checkpoint: Record<string, unknown> }, void> {
  const stream = ctx.stream as NewestFirstStream<z.ZodObject>;
  const state = NewestFirstCheckpoint.parse(ctx.checkpoint ?? {});
  const { head, open } = state;
  const openKeys = Object.keys(open);
  let window: Window | undefined = state.window;
  // After a rejected token the walk starts again from the top: first come records newer than the
  // interrupted walk's top (new: append), then those down to its bottom (handled: skip).
  let phase: 'new' | 'handled' | 'normal' = 'normal';
  let skipTo = { top: '', bottom: '' };
  let first = state.window === undefined;
  let fromTop = first;
  // The pipeline's window [start, end): a walk stops at the first record older than start (once the
  // records still open are re-read) and skips those from end on.
  const floor = stream.timeOf ? historyStart(ctx.pipeline) : undefined;
  const ceiling = stream.timeOf ? historyEnd(ctx.pipeline) : undefined;

  for (;;) {
    const since = window ? window.since : state.since;
    const request = stream.request(ctx.pipeline, ctx.partition, since);
    let body: unknown;
    try {
      body = await ctx.fetchPage(request, window?.pageToken || undefined);
    } catch (error) {
      if (window?.pageToken && isRejectedPageToken(error)) {
        skipTo = { top: window.top, bottom: window.bottom };
        window = { ...window, pageToken: '' };
        phase = 'new';
        first = true;
        fromTop = true;
        continue;
      }
      throw error;
    }
    const { valid, rejects } = checkRecords(stream, body);
    const append: Record<string, unknown>[] = [];
    const w: Window = window ?? {
      ...(since !== undefined ? { since } : {}),
      pageToken: '',
      top: '',
      bottom: '',
      passedHead: false,
      seenOpen: [],
      newOpen: {},
    };
    const seenOpen = new Set(w.seenOpen);
    let belowFloor = false;

    for (const record of valid) {
      const key = keyOf(stream.primaryKey, record);
      const newest = first;
      first = false;
      const time = stream.timeOf?.(record);
      if (ceiling !== undefined && time !== undefined && time >= ceiling) continue;
      if (phase === 'new') {
        if (key === skipTo.top) phase = 'handled';
        else {
          append.push(record);
          trackOpen(stream, record, key, w, newest);
          if (newest) setTop(stream, record, key, w);
          continue;
        }
      }
      if (phase === 'handled') {
        if (key === skipTo.bottom) phase = 'normal';
        continue;
      }
      if (floor !== undefined && time !== undefined && time < floor && !(key in open)) {
        // Below the window; the walk goes on only to re-read records still open (a rolling window
        // may have passed them), and appends nothing new down there.
        if (seenOpen.size >= openKeys.length) {
          belowFloor = true;
          break;
        }
        continue;
      }
      if (!w.top) setTop(stream, record, key, w);
      w.bottom = key;
      if (!w.passedHead && key === head) w.passedHead = true;
      if (!w.passedHead) {
        append.push(record);
        trackOpen(stream, record, key, w, newest);
      } else if (key in open) {
        seenOpen.add(key);
        const version = versionOf(record);
        if (version !== open[key]) append.push(record);
        trackOpen(stream, record, key, w, newest, version);
      }
    }

    w.seenOpen = [...seenOpen];
    const reached = newestField(newestOf(append.map((r) => stream.timeOf?.(r))));
    const pageToken = nextTokenOf(body);
    const caughtUp = w.passedHead && openKeys.every((k) => seenOpen.has(k));
    if (!pageToken || caughtUp || belowFloor) {
      const checkpoint = finish(state, w);
      yield { append, rejects, ...reached, checkpoint };
      return { fromTop, checkpoint };
    }
    window = { ...w, pageToken };
    yield {
      append,
      rejects,
      ...reached,
      checkpoint: { ...(head !== undefined ? { head } : {}), ...sinceOf(state), open, window },
    };
  }
}

function setTop(
  stream: NewestFirstStream<z.ZodObject>,
  record: Record<string, unknown>,
  key: string,
  w: Window,
) {
  w.top = key;
  const topSince = stream.sinceOf?.(record);
  if (topSince !== undefined) w.topSince = topSince;
}

function trackOpen(
  stream: NewestFirstStream<z.ZodObject>,
  record: Record<string, unknown>,
  key: string,
  w: Window,
  newest: boolean,
  version?: string,
) {
  // The version hash costs a SHA-256 of the record: only for records that may still change.
  if (stream.isFinal && !stream.isFinal(record, { newest })) w.newOpen[key] = version ?? versionOf(record);
}

const sinceOf = (state: NewestFirstCheckpoint) => (state.since !== undefined ? { since: state.since } : {});

/** The checkpoint after a complete walk: the new head, and the records still open. */
function finish(state: NewestFirstCheckpoint, w: Window): Record<string, unknown> {
  const head = w.top || state.head;
  const since = w.topSince ?? state.since;
  return { ...(head ? { head } : {}), ...(since !== undefined ? { since } : {}), open: w.newOpen };
}
