import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { partitionId } from '../../load/layout.ts';
import type { SnapshotStream } from '../stream.ts';
import { checkRecords, nextTokenOf, type Walk, type WalkContext } from './walk.ts';

/** The column that stamps every row of a snapshot with the moment it was observed. */
export const SNAPSHOT_AT = '_snapshot_at';
/**
 * The partition a snapshot row belongs to (its identity as the commit log writes it), so that a later
 * unchanged answer, recorded without rows, can be joined back to the rows it repeats.
 */
export const SNAPSHOT_PARTITION = '_partition';

/**
 * One observation, all of it or nothing: every page of the answer is read and stamped with the same
 * time, and only the last step carries a checkpoint, so an interrupted snapshot is rolled back whole.
 * The checkpoint holds a hash of the answer (`answer`): the runner stores no rows for an answer equal
 * to the last one, only that it was still true.
 */
export async function* walkSnapshot(ctx: WalkContext, snapshotAt: number): Walk {
  const stream = ctx.stream as SnapshotStream<z.ZodObject>;
  const request = stream.request(ctx.pipeline, ctx.partition);
  const stamp = { [SNAPSHOT_AT]: snapshotAt, [SNAPSHOT_PARTITION]: partitionId(ctx.partition) };
  const answer = createHash('sha256');
  let pageToken: string | undefined;
  do {
    const body = await ctx.fetchPage(request, pageToken);
    const { valid, rejects } = checkRecords(stream, body);
    for (const record of valid) answer.update(JSON.stringify(record, exactText)).update('\n');
    for (const reject of rejects) answer.update(`reject ${reject.raw}\n`);
    pageToken = request.kind === 'http' ? nextTokenOf(body) : undefined;
    yield {
      append: valid.map((record) => ({ ...record, ...stamp })),
      rejects,
      checkpoint: pageToken ? undefined : { snapshotAt, answer: answer.digest('base64url') },
    };
  } while (pageToken);
}

function exactText(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
