import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Reject } from '../../load/index.ts';
import { partitionId } from '../../load/layout.ts';
import { isRejectedPageToken } from '../errors.ts';
import type { SnapshotStream } from '../stream.ts';
import { canonicalJson } from './canonical-json.ts';
import { checkRecords, createPager, nextTokenOf, type Walk, type WalkContext } from './walk.ts';

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
 *
 * A resumable stream's answer may be larger than a run can hold to the end: every page then carries a
 * checkpoint, `reading` (the snapshot's time, the next page's token, the hash so far) beside the last
 * whole snapshot's, so the runner commits at its flush thresholds and the next run goes on from the
 * token, stamping the same time. A token found expired (24 hours) reads the snapshot again from its
 * first page, still with that time: staging keeps the newest version of each row of a snapshot.
 */
export async function* walkSnapshot(ctx: WalkContext, snapshotAt: number): Walk {
  const stream = ctx.stream as SnapshotStream<z.ZodObject>;
  const request = stream.request(ctx.pipeline, ctx.partition);
  const { reading: pending, ...whole } = ctx.checkpoint ?? {};
  const resumed = stream.resumable ? Reading.safeParse(pending).data : undefined;
  const at = resumed?.snapshotAt ?? snapshotAt;
  const stamp = { [SNAPSHOT_AT]: at, [SNAPSHOT_PARTITION]: partitionId(ctx.partition) };
  const answer = answerHash(resumed?.answer);
  let pageToken = resumed?.pageToken;
  let mayRestart = resumed !== undefined;
  // Most runs of a cron find a snapshot as it was, and store no rows of it. A snapshot read in one go
  // holds its records back until the answer is known to have changed, so an unchanged one never builds
  // rows only to throw them away. Up to a bound: past it, the records go on to the flush as they come
  // (and the runner throws the flush away if the answer turns out the same).
  const held = stream.resumable ? undefined : new HeldRecords(Math.min(ctx.pipeline.flush.rows, HOLD_ROWS));
  // A snapshot reads every page of its answer: the next one is asked for as soon as its token is known.
  const pager = createPager(ctx.fetchPage);
  for (;;) {
    let body: unknown;
    try {
      body = await pager.fetch(request, pageToken);
    } catch (error) {
      if (!(mayRestart && isRejectedPageToken(error))) throw error;
      mayRestart = false;
      pageToken = undefined;
      pager.restart();
      answer.reset();
      continue;
    }
    mayRestart = false;
    pageToken = request.kind === 'http' ? nextTokenOf(body) : undefined;
    if (pageToken) await pager.ahead(request, pageToken);
    const { valid, rejects } = checkRecords(stream, body);
    answer.addPage(valid, rejects);
    const done = { snapshotAt: at, answer: answer.value() };
    const rows = valid.map((record) => ({ ...record, ...stamp }));
    yield {
      append: held ? held.pass(rows, pageToken ? undefined : done, ctx.checkpoint) : rows,
      rejects,
      checkpoint: !pageToken
        ? done
        : stream.resumable
          ? { ...whole, reading: { snapshotAt: at, pageToken, answer: done.answer } }
          : undefined,
    };
    if (!pageToken) return;
  }
}

/** The most records a snapshot holds back (see HeldRecords), whatever the flush size. */
const HOLD_ROWS = 10_000;

/**
 * A snapshot's rows held back until its last page: then handed on if the answer changed, dropped if it
 * is the committed one (as the runner would drop them). Past `limit` rows they are handed on at once,
 * and every page after them as it comes.
 */
class HeldRecords {
  private rows: Record<string, unknown>[] = [];
  private holding = true;

  constructor(private readonly limit: number) {}

  /** The rows to append now, of a page's rows; `done` is the checkpoint of the last page. */
  pass(
    page: Record<string, unknown>[],
    done: Record<string, unknown> | undefined,
    committed: Readonly<Record<string, unknown>> | undefined,
  ): Record<string, unknown>[] {
    if (!this.holding) return page;
    for (const row of page) this.rows.push(row);
    if (done === undefined && this.rows.length < this.limit) return [];
    const rows = this.rows;
    this.rows = [];
    this.holding = false;
    // Read in one go, nothing of it was committed along the way.
    return done !== undefined && isUnchangedAnswer(committed, done, false) ? [] : rows;
  }
}

/** Where a resumable snapshot's reading stands between runs. */
const Reading = z.object({ snapshotAt: z.number(), pageToken: z.string(), answer: z.string() });

/**
 * The answer's hash, page by page: each page's records chained onto the hash so far, so a reading
 * carried over to another run (a hash as text in the checkpoint) goes on where it stopped.
 */
function answerHash(from: string | undefined) {
  let value = from ?? '';
  return {
    addPage(records: readonly object[], rejects: readonly Reject[]) {
      const page = createHash('sha256').update(value);
      for (const record of records) page.update(canonicalJson(record)).update('\n');
      for (const reject of rejects) page.update(`reject ${reject.raw}\n`);
      value = page.digest('base64url');
    },
    reset() {
      value = '';
    },
    value: () => value,
  };
}

/**
 * Whether a finished snapshot repeats the one committed before, so the runner stores no rows, only that
 * it was still true. Not a reading still under way (its checkpoint carries the last whole snapshot's
 * answer beside it), nor one any part of which was committed along the way: those rows stand for it.
 */
export function isUnchangedAnswer(
  committed: Readonly<Record<string, unknown>> | undefined,
  next: Readonly<Record<string, unknown>>,
  committedAlongTheWay: boolean,
): boolean {
  return (
    !committedAlongTheWay &&
    next.reading === undefined &&
    committed?.reading === undefined &&
    committed?.answer !== undefined &&
    committed.answer === next.answer
  );
}
