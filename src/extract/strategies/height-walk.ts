import { z } from 'zod';
import type { HeightWalkStream } from '../stream.ts';
import { checkRecords, type Walk, type WalkContext } from './walk.ts';

/** Every height below `next` is committed. */
const HeightCheckpoint = z.object({ next: z.int().nonnegative().default(0) });

/** Heights from the committed one to the tip the node reports when the walk begins, one request each. */
export async function* walkHeights(ctx: WalkContext): Walk {
  const stream = ctx.stream as HeightWalkStream<z.ZodObject>;
  let { next } = HeightCheckpoint.parse(ctx.checkpoint ?? {});
  const tip = stream.tipOf(await ctx.fetchPage(stream.tip(ctx.pipeline, ctx.partition)));
  if (next > tip) {
    yield { append: [], rejects: [], checkpoint: { next } };
    return;
  }
  for (; next <= tip; next++) {
    const { valid, rejects } = checkRecords(
      stream,
      await ctx.fetchPage(stream.request(ctx.pipeline, ctx.partition, next)),
    );
    yield { append: valid, rejects, checkpoint: { next: next + 1 } };
  }
}
