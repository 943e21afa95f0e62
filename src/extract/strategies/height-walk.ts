import { z } from 'zod';
import { historyEnd, historyStart } from '../pipeline.ts';
import type { HeightWalkStream } from '../stream.ts';
import { checkRecords, createPager, newestField, type Walk, type WalkContext } from './walk.ts';

/** Every height below `next` is committed (or lies before the pipeline's `start`). */
const HeightCheckpoint = z.object({ next: z.int().nonnegative().optional() });

/**
 * The requests a height walk will make, known from its first answer (the tip): one per height from the
 * committed one, and the tip's own.
 */
export function expectedHeightPages(
  stream: HeightWalkStream<z.ZodObject>,
  checkpoint: Readonly<Record<string, unknown>> | undefined,
  firstAnswer: unknown,
): number | undefined {
  const tip = stream.tipOf(firstAnswer);
  const next = HeightCheckpoint.safeParse(checkpoint ?? {}).data?.next ?? 0;
  return Number.isFinite(tip) ? 1 + Math.max(0, tip - next + 1) : undefined;
}

/**
 * Heights from the committed one to the tip the node reports when the walk begins, one request each.
 * A first run (or a full refresh) starts at the first height at or after the pipeline's `start`, and
 * every run stops before its `end`: both found by bisection, about log2(tip) requests each.
 */
export async function* walkHeights(ctx: WalkContext): Walk {
  const stream = ctx.stream as HeightWalkStream<z.ZodObject>;
  const state = HeightCheckpoint.parse(ctx.checkpoint ?? {});
  const tip = stream.tipOf(await ctx.fetchPage(stream.tip(ctx.pipeline, ctx.partition)));
  const { timeOf } = stream;
  const timeAt = timeOf
    ? async (height: number) =>
        timeOf(await ctx.fetchPage(stream.request(ctx.pipeline, ctx.partition, height)))
    : undefined;
  const start = historyStart(ctx.pipeline);
  const end = historyEnd(ctx.pipeline);
  let next = state.next ?? (timeAt && start !== undefined ? await firstAtOrAfter(timeAt, start, 0, tip) : 0);
  const last =
    timeAt && end !== undefined && next <= tip ? (await firstAtOrAfter(timeAt, end, next, tip)) - 1 : tip;
  if (next > last) {
    yield { append: [], rejects: [], checkpoint: { next } };
    return;
  }
  // Every height up to `last` is read: the next one is asked for while this one is checked.
  const pager = createPager(ctx.fetchPage);
  const requestAt = (height: number) => stream.request(ctx.pipeline, ctx.partition, height);
  for (; next <= last; next++) {
    const body = await pager.fetch(requestAt(next));
    if (next < last) await pager.ahead(requestAt(next + 1));
    const { valid, rejects } = checkRecords(stream, body);
    // The height's time, even when it holds no records of this stream (a block without transactions).
    const newest = newestField(timeOf?.(body));
    yield { append: valid, rejects, ...newest, checkpoint: { next: next + 1 } };
  }
}

/**
 * The first height in [low, high] whose time is at or after `t` (high + 1 when none is), by bisection:
 * block times never decrease with height. A height without a time (before Banff) counts as older.
 */
export async function firstAtOrAfter(
  timeAt: (height: number) => Promise<number | undefined>,
  t: number,
  low: number,
  high: number,
): Promise<number> {
  let lo = low;
  let hi = high + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const time = await timeAt(mid);
    if (time !== undefined && time >= t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
