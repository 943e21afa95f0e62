import type { z } from 'zod';
import type { SnapshotStream } from '../stream.ts';
import { checkRecords, nextTokenOf, type Walk, type WalkContext } from './walk.ts';

/** The column that stamps every row of a snapshot with the moment it was observed. */
export const SNAPSHOT_AT = '_snapshot_at';

/**
 * One observation, all of it or nothing: every page of the answer is read and stamped with the same
 * time, and only the last step carries a checkpoint, so an interrupted snapshot is rolled back whole.
 */
export async function* walkSnapshot(ctx: WalkContext, snapshotAt: number): Walk {
  const stream = ctx.stream as SnapshotStream<z.ZodObject>;
  const request = stream.request(ctx.pipeline, ctx.partition);
  let pageToken: string | undefined;
  do {
    const body = await ctx.fetchPage(request, pageToken);
    const { valid, rejects } = checkRecords(stream, body);
    pageToken = request.kind === 'http' ? nextTokenOf(body) : undefined;
    yield {
      append: valid.map((record) => ({ ...record, [SNAPSHOT_AT]: snapshotAt })),
      rejects,
      checkpoint: pageToken ? undefined : { snapshotAt },
    };
  } while (pageToken);
}
