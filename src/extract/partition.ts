import { z } from 'zod';
import {
  CommitConflictError,
  type Lake,
  newestStampOf,
  nextStamp,
  type Observation,
  partitionId,
  processLimitOf,
  processLimitReason,
} from '../load/index.ts';
import { lake as lakeTypes } from '../schemas/lake.ts';
import { DeadHostError, QuotaExhaustedError } from './errors.ts';
import { knownRejectsOf } from './known-rejects.ts';
import type { Logger } from './log.ts';
import { historyEnd, type Pipeline } from './pipeline.ts';
import type { ProgressSink } from './progress.ts';
import {
  expectedPages,
  isUnchangedAnswer,
  SNAPSHOT_AT,
  SNAPSHOT_PARTITION,
  type WalkStep,
  walkOf,
} from './strategies/index.ts';
import type { PageRequest, Partition, StreamDefinition } from './stream.ts';

/**
 * One partition's walk: its pages, checked and buffered into flushes that commit at the pipeline's
 * thresholds with the checkpoint after them, and what the walk saw of the source's time.
 */

export type PartitionStatus = 'done' | 'failed' | 'quota' | 'interrupted';

export interface PartitionSummary {
  stream: string;
  partition: Partition;
  status: PartitionStatus;
  requests: number;
  retries: number;
  rows: number;
  rejects: number;
  commits: number;
  seconds: number;
  error?: string;
}

export interface PartitionWork {
  stream: StreamDefinition;
  partition: Partition;
  lake: Lake;
  pipeline: Pipeline;
  /** Ignore the checkpoint: read from where the pipeline's history starts. */
  fullRefresh: boolean;
  log: Logger;
  progress: ProgressSink;
  signal: AbortSignal;
  /** One time for the whole run: every snapshot it takes is stamped with it, so they line up. */
  runStartedAt: number;
  retriesOf(): number;
  /** Before the first request of a partition read from its beginning: may refuse it (by throwing). */
  beforeFirstRead?(request: PageRequest): Promise<void>;
  /** `onDate`: the source's clock, from the answer. */
  fetchPage(
    request: PageRequest,
    pageToken: string | undefined,
    onDate: (ms: number) => void,
  ): Promise<unknown>;
}

const snapshotSchemas = new WeakMap<StreamDefinition, z.ZodObject>();

/**
 * How long a resumable snapshot read again is held uncommitted, in flush periods (`flush.seconds`, 60 by
 * default: ten minutes), before it goes on in committed parts (see `holdsAnswer`).
 */
const HOLD_FLUSH_TIMES = 10;

/**
 * The schema of the rows a stream's flushes hold: a snapshot's rows also carry when and where they were
 * observed. Made once per stream, so the lake's layout of it (flush.ts) is worked out once too.
 */
function lakeSchemaOf(stream: StreamDefinition): z.ZodObject {
  if (stream.strategy !== 'snapshot') return stream.schema;
  let schema = snapshotSchemas.get(stream);
  if (!schema) {
    schema = stream.schema.extend({
      [SNAPSHOT_AT]: lakeTypes.timestamp({ unit: 'ms' }),
      [SNAPSHOT_PARTITION]: z.string(),
    });
    snapshotSchemas.set(stream, schema);
  }
  return schema;
}

/** Walks one partition, committing at the flush thresholds; on any stop, commits what it has. */
export async function extractPartition(work: PartitionWork) {
  const { stream, partition, lake, pipeline } = work;
  // Spans on the monotonic clock (a wall clock stepped back an hour would hold the flush an hour).
  const started = performance.now();
  const schema = lakeSchemaOf(stream);
  const known = knownRejectsOf(work.fullRefresh ? undefined : lake.readCheckpoint(stream.name, partition));
  const { checkpoint } = known;
  let requests = 0;
  let total: number | undefined;
  // What the walk sees of the source's time, for freshness: its clock, and the newest record time reached.
  let sourceAt: number | undefined;
  let newestAt: number | undefined;
  // A window with an end never reaches the present: there is no cadence to keep up with.
  const cadence = historyEnd(pipeline) === undefined ? stream.cadence?.(partition) : undefined;
  const observed = (): Observation => ({
    ...(sourceAt !== undefined ? { sourceAt } : {}),
    ...(newestAt !== undefined ? { newestRecordAt: newestAt * 1000 } : {}),
    ...(cadence !== undefined ? { cadence } : {}),
  });
  const onDate = (ms: number) => {
    sourceAt = Math.max(sourceAt ?? ms, ms);
  };
  const counting = async (request: PageRequest, pageToken?: string) => {
    if (requests === 0 && checkpoint === undefined) await work.beforeFirstRead?.(request);
    requests++;
    const answer = await work.fetchPage(request, pageToken, onDate);
    if (requests === 1) total = expectedPages(stream, checkpoint, answer);
    return answer;
  };
  const at = { stream: stream.name, partition: partitionId(partition) };
  work.progress({ kind: 'start', at: performance.now(), ...at });
  let fetched = 0;
  let fetchedRejects = 0;
  // A snapshot is stamped with the run's start, or just after the partition's last stamp if the clock
  // says earlier (it stepped back, or this worker's is behind): the newest snapshot is the last one read.
  const stampedBefore = newestStampOf(lake.partitionState(stream.name, partition));
  const walk = walkOf(
    stream,
    { stream, pipeline, partition, checkpoint, fetchPage: counting },
    nextStamp(work.runStartedAt, stampedBefore),
  );
  const limits = pipeline.flush;

  let flush = lake.begin({ stream: stream.name, partition, schema });
  let flushStarted = performance.now();
  let lastCheckpoint: Record<string, unknown> | undefined;
  let rows = 0;
  let rejects = 0;
  /**
   * Commits handed over so far, done or not: what the next one's decisions assume. Once `committing`
   * has settled without failing, every one of them is done.
   */
  let commits = 0;
  // The checkpoint as committed (or handed over to be), to tell a run that found nothing new from one that moved on.
  let committed = JSON.stringify(checkpoint ?? null);
  /**
   * Flushes are committed one after another behind the walk: the walk goes on reading into the next
   * flush while the last one's files are encoded, staged and committed (one at a time: the walk waits
   * for a commit still running before it hands over the next).
   * `committing` is that chain; the first commit that fails rejects it, and none after it runs (a later
   * checkpoint must never land without the rows before it). A failure to commit is the lake's (a full
   * disk, a catalog gone) and ends the run, as it did when the walk waited.
   */
  let committing: Promise<void> = Promise.resolve();
  let commitFailed = false;
  /**
   * Hands the flush over to be committed; `caughtUp`: the walk ended with it, at the source's head. True
   * when it commits (its rows, or an unchanged snapshot's check), false when there was nothing to commit.
   */
  const handOver = (caughtUp = false): boolean => {
    const sealed = flush;
    sealed.seal();
    const reached = lastCheckpoint;
    const seen = observed();
    lastCheckpoint = undefined;
    const aborting = () => sealed.abort();
    let run: () => Promise<void>;
    if (
      reached !== undefined &&
      // A full refresh has no committed answer to compare with.
      isUnchangedAnswer(checkpoint, reached, commits > 0)
    ) {
      // The same answer as last time: no rows, only the time at which it was still true. Its rejects
      // too were committed with it the first time; writing them again would add a copy every run.
      commits++;
      run = async () => {
        await sealed.abort();
        await lake.check(stream.name, partition, {
          confirmedAt: Number(reached.snapshotAt),
          observed: seen,
          caughtUp,
        });
      };
    } else if (
      reached === undefined ||
      (sealed.rows === 0 && sealed.rejected === 0 && JSON.stringify(reached) === committed)
    ) {
      run = aborting;
    } else {
      commits++;
      committed = JSON.stringify(reached);
      const stored = known.attach(reached);
      run = async () => {
        await sealed.commit(stored, seen, caughtUp);
        rows += sealed.rows;
        rejects += sealed.rejected;
      };
    }
    committing = committing.then(run, async (error: unknown) => {
      await sealed.abort().catch(() => undefined);
      throw error;
    });
    committing.catch(() => {
      commitFailed = true;
    });
    return run !== aborting;
  };

  /**
   * A resumable snapshot read again after a whole one is held in its flush (staged files on disk, not
   * memory) until its answer is known, rather than committed at the flush's thresholds: an answer like
   * the last then stores no rows, where parts committed along the way would store the whole collection
   * again every run. For HOLD_FLUSH_TIMES the flush's seconds at most: a process killed meanwhile (no
   * commit at the stop) reads it again from its first page, and a reading longer than that goes on in
   * committed parts, each the page token to go on from, as a first reading does.
   */
  const wholeAnswerBefore =
    checkpoint !== undefined && checkpoint.answer !== undefined && checkpoint.reading === undefined;
  const holdsAnswer = (reached: Record<string, unknown>) =>
    wholeAnswerBefore &&
    reached.reading !== undefined &&
    commits === 0 &&
    (performance.now() - started) / 1000 < limits.seconds * HOLD_FLUSH_TIMES;

  let status: PartitionStatus = 'done';
  let cause: unknown;
  // A flush that failed (its file could not be encoded or staged) cannot commit: the partition fails with
  // that reason, and its checkpoint stays at the last commit.
  let flushFailed = false;
  const toFlush = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      flushFailed = true;
      throw error;
    }
  };
  // The next page is asked for as soon as a step arrives, so the source answers while this one is
  // checked into the flush. The walk then runs ahead by one page, and may reuse the objects of the step
  // it yielded: the checkpoint is copied before it moves on.
  let next: Promise<IteratorResult<WalkStep, void>> | undefined = walk.next();
  try {
    while (next) {
      const result: IteratorResult<WalkStep, void> = await next;
      next = undefined;
      if (result.done) break;
      const step: WalkStep = { ...result.value, checkpoint: structuredClone(result.value.checkpoint) };
      if (!work.signal.aborted) next = walk.next();
      // Settled (and its failure reported) when awaited; until then, not an unhandled rejection.
      next?.catch(() => undefined);
      if (commitFailed) break;
      await toFlush(() => flush.append(step.append));
      const rejected = known.fresh(step.rejects);
      if (rejected.length > 0) await toFlush(() => flush.reject(rejected));
      fetched += step.append.length;
      fetchedRejects += rejected.length;
      if (step.newestAt !== undefined) newestAt = Math.max(newestAt ?? step.newestAt, step.newestAt);
      work.progress({
        kind: 'page',
        at: performance.now(),
        ...at,
        pages: requests,
        rows: fetched,
        rejects: fetchedRejects,
        retries: work.retriesOf(),
        ...(total !== undefined ? { total } : {}),
      });
      if (step.checkpoint === undefined) continue;
      lastCheckpoint = step.checkpoint;
      const due =
        !holdsAnswer(step.checkpoint) &&
        (flush.rows >= limits.rows ||
          flush.bytes >= limits.bytes ||
          (performance.now() - flushStarted) / 1000 >= limits.seconds);
      if (due && !work.signal.aborted) {
        // At most one flush commits behind the walk: a slower store holds the walk back instead of
        // piling sealed flushes (their buffers, their files in the encoder) up in memory.
        await committing.catch(() => undefined);
        handOver();
        flush = lake.begin({ stream: stream.name, partition, schema });
        flushStarted = performance.now();
      }
      if (work.signal.aborted || commitFailed) break;
    }
  } catch (error) {
    cause = error;
    status =
      error instanceof QuotaExhaustedError
        ? 'quota'
        : work.signal.aborted && !(error instanceof DeadHostError)
          ? 'interrupted'
          : 'failed';
  }
  // A page asked for ahead of a stop is not used: its request ends (aborted, or answered) before the summary.
  await next?.catch(() => undefined);
  if (status === 'done' && work.signal.aborted) status = 'interrupted';
  // Whatever was fetched up to the last complete step is committed, with the checkpoint that matches it,
  // after the commits handed over before it.
  // A walk that ended reached the source's head: its last commit says so, for freshness.
  let saidCaughtUp = false;
  if (flushFailed) await flush.abort().catch(() => undefined);
  else saidCaughtUp = handOver(status === 'done') && status === 'done';
  try {
    await committing;
    // A walk that found nothing new still says so: freshness is the time a partition was last checked (and
    // last caught up). So does one whose last commit was handed over mid-walk, before it knew it had ended.
    if (status === 'done' && !saidCaughtUp)
      await lake.check(stream.name, partition, { observed: observed(), caughtUp: true });
  } catch (error) {
    // The catalog refused a commit made from what this run read of the partition (`avalake repair`
    // rewound it, or another worker took it over from this run): nothing of it is visible, and the
    // partition is another writer's now. Given up for this run, the others go on; not the lake's failure.
    if (!(error instanceof CommitConflictError)) throw error;
    status = 'failed';
    cause = error;
  }
  const seconds = (performance.now() - started) / 1000;
  const ownWords = status === 'failed' ? (cause as Error).message : undefined;
  const summary: PartitionSummary = {
    stream: stream.name,
    partition,
    status,
    requests,
    retries: work.retriesOf(),
    rows,
    rejects,
    commits,
    seconds,
    ...(status === 'failed' ? { error: failureMessage(cause) } : {}),
  };
  work.progress({
    kind: 'end',
    at: performance.now(),
    ...at,
    status,
    pages: requests,
    rows,
    rejects,
    retries: summary.retries,
  });
  work.log({
    // An unreachable host is reported once for the run (RunSummary.unreachable), not once per partition.
    level: status === 'failed' && !(cause instanceof DeadHostError) ? 'error' : 'info',
    msg: `partition ${status}`,
    stream: stream.name,
    partition: partitionId(partition),
    rows,
    rejects,
    requests,
    seconds: Math.round(seconds * 10) / 10,
    ...(summary.error ? { error: summary.error } : {}),
    // The failure's own words (which connection or file hit the limit), when the summary's differ.
    ...(summary.error !== ownWords ? { cause: ownWords } : {}),
  });
  return { summary, status, cause };
}

/**
 * A failure as a run's summary words it. A limit of the process (`connect EMFILE 127.0.0.1:…`) is said as
 * the CLI's one line says it, what to raise and how, since every partition fails on it alike; anything
 * else in its own words.
 */
export function failureMessage(error: unknown): string {
  const limit = processLimitOf(error);
  return limit === undefined ? (error as Error).message : processLimitReason(limit);
}
