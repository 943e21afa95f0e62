import { z } from 'zod';
import { type Lake, type Observation, openLake } from '../load/index.ts';
import { lake as lakeTypes } from '../schemas/lake.ts';
import { createRateBudget, type RateBudget } from './budget.ts';
import { DeadHostError, QuotaExhaustedError } from './errors.ts';
import { createFetcher, type Fetcher } from './fetcher.ts';
import type { HttpClient } from './http.ts';
import { type Logger, silentLogger } from './log.ts';
import { historyEnd, type Pipeline } from './pipeline.ts';
import { expectedPages, type ProgressSink } from './progress.ts';
import { sendPage } from './requests.ts';
import { createSharedBudget } from './shared-budget.ts';
import { sleep } from './sleep.ts';
import { SNAPSHOT_AT, SNAPSHOT_PARTITION, walkOf } from './strategies/index.ts';
import type { PageRequest, Partition, StreamDefinition } from './stream.ts';

export interface ExtractOptions {
  pipeline: Pipeline;
  streams: readonly StreamDefinition[];
  dataDir: string;
  http: HttpClient;
  /** Ignore checkpoints and read every partition from its beginning. */
  fullRefresh?: boolean;
  /** Wait for another run's lock instead of exiting 75. */
  wait?: boolean;
  /** A PostgreSQL catalog shared with other workers: this run extracts the partitions it claims. */
  catalog?: string;
  log?: Logger;
  /** Aborting stops the run: each partition commits what it fetched, then the run ends as interrupted. */
  signal?: AbortSignal;
  /** Attempts after the first before a request counts as failed (default RETRY_COUNT). */
  retries?: number;
  /** Longest wait for a rate-limit window before it counts as a spent quota. */
  maxRateWaitMs?: number;
  fetcher?: Fetcher;
  /** Pages, rows and retries per partition as they happen (the live display, or debug log lines). */
  progress?: ProgressSink;
}

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

export interface RunSummary {
  runId: string;
  status: 'ok' | 'partial' | 'failed' | 'quota' | 'interrupted';
  partitions: PartitionSummary[];
  /** Set when a quota stopped the run: which, and when it resets. */
  quota?: string;
  /** Hosts that never answered (refused, unresolved, TLS failed): they stopped the run, which failed. */
  unreachable?: { origin: string; error: string }[];
  recovered: { rolledForward: number; discarded: number };
}

/** Extracts every (stream, partition) of the plan into the lake, `pipeline.concurrency` at a time. */
export async function runExtract(options: ExtractOptions): Promise<RunSummary> {
  const log = options.log ?? silentLogger;
  const progress = options.progress ?? (() => {});
  let lake: Lake;
  try {
    lake = await openLake({
      dataDir: options.dataDir,
      ...(options.catalog ? { catalog: options.catalog } : {}),
      lock: {
        wait: options.wait ?? false,
        ...(options.signal ? { signal: options.signal } : {}),
        onWait: (holder) =>
          log({
            level: 'info',
            msg: 'waiting for another run to release the data directory',
            pid: holder.pid,
            hostname: holder.hostname,
            since: holder.since,
          }),
      },
    });
  } catch (error) {
    // Interrupted while it waited for another run's lock: nothing was opened, nothing to commit.
    if (options.signal?.aborted)
      return { runId: '-', status: 'interrupted', partitions: [], recovered: NOTHING };
    throw error;
  }
  try {
    const recovery = lake.recovery;
    const retries = new Map<string, number>();
    const fetcher =
      options.fetcher ??
      createFetcher({
        http: options.http,
        ...(options.retries !== undefined ? { retries: options.retries } : {}),
        log: (event) => {
          const key = `${event.stream}\n${event.partition}`;
          retries.set(key, (retries.get(key) ?? 0) + 1);
          log({ level: 'warn', msg: 'retrying', ...event });
          const at = { stream: String(event.stream), partition: String(event.partition) };
          progress({ kind: 'retry', at: Date.now(), ...at, retries: retries.get(key) ?? 0 });
        },
      });
    const budgets = new Map<string, RateBudget>();
    const budgetFor = (origin: string) => {
      let b = budgets.get(origin);
      if (!b) {
        const limits = {
          host: origin,
          ...(options.maxRateWaitMs ? { maxWaitMs: options.maxRateWaitMs } : {}),
        };
        // Workers of one catalog spend one allowance together; alone, the headers are enough.
        b = lake.allowance
          ? createSharedBudget({
              ...limits,
              allowance: lake.allowance,
              onError: (error) =>
                log({
                  level: 'warn',
                  msg: 'could not report an allowance to the catalog',
                  error: String(error),
                }),
            })
          : createRateBudget(limits);
        budgets.set(origin, b);
      }
      return b;
    };
    // A quota or an interrupt stops every partition; each commits what it has.
    const stop = new AbortController();
    const onAbort = () => stop.abort(options.signal?.reason ?? new Error('interrupted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let quota: QuotaExhaustedError | undefined;
    const unreachable: NonNullable<RunSummary['unreachable']> = [];

    // Unfinished work first: partitions never extracted or stopped mid-walk (by a quota, say) go ahead of
    // those that only need a look for news, so a backfill spread over many quota-limited runs progresses.
    const runStartedAt = Date.now();
    const work = options.streams
      .flatMap((stream) => stream.partitions(options.pipeline).map((partition) => ({ stream, partition })))
      .map((item) => ({
        item,
        unfinished: isUnfinished(lake.readCheckpoint(item.stream.name, item.partition)),
      }))
      .sort((a, b) => Number(b.unfinished) - Number(a.unfinished))
      .map(({ item }) => item);
    const planned: Record<string, number> = {};
    for (const { stream } of work) planned[stream.name] = (planned[stream.name] ?? 0) + 1;
    progress({ kind: 'plan', at: Date.now(), partitions: planned });
    const results: PartitionSummary[] = [];
    // With a catalog, partitions another live worker holds are tried again until it finishes them (or
    // dies and its lease lapses); alone on a data directory every claim succeeds at once.
    const queue = [...work];
    const held: typeof work = [];
    const nextItem = async () => {
      while (!stop.signal.aborted) {
        const item = queue.shift();
        if (!item) {
          if (held.length === 0) return undefined;
          await sleep(CLAIM_RETRY_MS, stop.signal).catch(() => undefined);
          queue.push(...held.splice(0));
          continue;
        }
        const claim = await lake.claim(item.stream.name, item.partition);
        if (claim === 'claimed') return item;
        if (claim === 'held') held.push(item);
      }
      return undefined;
    };
    const worker = async () => {
      for (let item = await nextItem(); item; item = await nextItem()) {
        const summary = await extractPartition({
          ...item,
          lake,
          options,
          log,
          progress,
          signal: stop.signal,
          runStartedAt,
          retriesOf: () => retries.get(`${item.stream.name}\n${JSON.stringify(item.partition)}`) ?? 0,
          fetchPage: (request, pageToken, onDate) =>
            sendPage({
              request,
              pageToken,
              pipeline: options.pipeline,
              fetcher,
              budgetFor,
              item,
              signal: stop.signal,
              onDate,
            }),
        });
        if (summary.status === 'quota' && !quota) {
          quota = summary.cause as QuotaExhaustedError;
          stop.abort(quota);
        }
        // A host that never answers fails every partition it serves: stop the run instead of walking them all.
        const dead = summary.cause;
        if (dead instanceof DeadHostError && !unreachable.some((u) => u.origin === dead.origin)) {
          unreachable.push({ origin: dead.origin, error: dead.message });
          stop.abort(dead);
        }
        results.push(summary.summary);
        const over = summary.status === 'done' || summary.status === 'failed';
        await lake.finish(item.stream.name, item.partition, over ? 'done' : 'released');
      }
    };
    // A failure no partition could absorb (the disk full in a commit, say) stops the others, which
    // commit what they have; it surfaces once every flush is closed, not hidden behind the lake's close.
    const crashes: unknown[] = [];
    const guarded = () =>
      worker().catch((error: unknown) => {
        crashes.push(error);
        stop.abort(error);
      });
    await Promise.all(Array.from({ length: Math.min(options.pipeline.concurrency, work.length) }, guarded));
    options.signal?.removeEventListener('abort', onAbort);
    if (crashes.length > 0) throw crashes[0];

    const failed = results.filter((r) => r.status === 'failed').length;
    const status: RunSummary['status'] = options.signal?.aborted
      ? 'interrupted'
      : unreachable.length > 0
        ? 'failed'
        : quota
          ? 'quota'
          : failed === 0
            ? 'ok'
            : failed === results.length
              ? 'failed'
              : 'partial';
    return {
      runId: lake.runId,
      status,
      partitions: results,
      ...(quota ? { quota: quota.message } : {}),
      ...(unreachable.length > 0 ? { unreachable } : {}),
      recovered: { rolledForward: recovery.rolledForward.length, discarded: recovery.discarded.length },
    };
  } finally {
    await lake.close();
  }
}

const NOTHING = { rolledForward: 0, discarded: 0 } as const;

/** How often a worker asks again for partitions another live worker of a shared catalog holds. */
const CLAIM_RETRY_MS = 1_000;

const isUnfinished = (checkpoint: Readonly<Record<string, unknown>> | undefined) =>
  checkpoint === undefined || checkpoint.window !== undefined;

/** A snapshot whose answer hashes as the committed one did (a full refresh has none to compare). */
const isUnchangedSnapshot = (
  committed: Readonly<Record<string, unknown>> | undefined,
  next: Readonly<Record<string, unknown>>,
) => committed?.answer !== undefined && committed.answer === next.answer;

interface PartitionWork {
  stream: StreamDefinition;
  partition: Partition;
  lake: Lake;
  options: ExtractOptions;
  log: Logger;
  progress: ProgressSink;
  signal: AbortSignal;
  /** One time for the whole run: every snapshot it takes is stamped with it, so they line up. */
  runStartedAt: number;
  retriesOf(): number;
  /** `onDate`: the source's clock, from the answer. */
  fetchPage(
    request: PageRequest,
    pageToken: string | undefined,
    onDate: (ms: number) => void,
  ): Promise<unknown>;
}

/** Walks one partition, committing at the flush thresholds; on any stop, commits what it has. */
async function extractPartition(work: PartitionWork) {
  const { stream, partition, lake, options } = work;
  const started = Date.now();
  const schema =
    stream.strategy === 'snapshot'
      ? stream.schema.extend({
          [SNAPSHOT_AT]: lakeTypes.timestamp({ unit: 'ms' }),
          [SNAPSHOT_PARTITION]: z.string(),
        })
      : stream.schema;
  const checkpoint = options.fullRefresh ? undefined : lake.readCheckpoint(stream.name, partition);
  let requests = 0;
  let total: number | undefined;
  // What the walk sees of the source's time, for freshness: its clock, and the newest record time reached.
  let sourceAt: number | undefined;
  let newestAt: number | undefined;
  // A window with an end never reaches the present: there is no cadence to keep up with.
  const cadence = historyEnd(options.pipeline) === undefined ? stream.cadence?.(partition) : undefined;
  const observed = (): Observation => ({
    ...(sourceAt !== undefined ? { sourceAt } : {}),
    ...(newestAt !== undefined ? { newestRecordAt: newestAt * 1000 } : {}),
    ...(cadence !== undefined ? { cadence } : {}),
  });
  const onDate = (ms: number) => {
    sourceAt = Math.max(sourceAt ?? ms, ms);
  };
  const counting = async (request: PageRequest, pageToken?: string) => {
    requests++;
    const answer = await work.fetchPage(request, pageToken, onDate);
    if (requests === 1) total = expectedPages(stream, checkpoint, answer);
    return answer;
  };
  const at = { stream: stream.name, partition: JSON.stringify(partition) };
  work.progress({ kind: 'start', at: Date.now(), ...at });
  let fetched = 0;
  let fetchedRejects = 0;
  const walk = walkOf(
    stream,
    { stream, pipeline: options.pipeline, partition, checkpoint, fetchPage: counting },
    work.runStartedAt,
  );
  const limits = options.pipeline.flush;

  let flush = lake.begin({ stream: stream.name, partition, schema });
  let flushStarted = Date.now();
  let lastCheckpoint: Record<string, unknown> | undefined;
  let rows = 0;
  let rejects = 0;
  let commits = 0;
  // The checkpoint as committed, to tell a run that found nothing new from one that moved on.
  let committed = JSON.stringify(checkpoint ?? null);
  const commit = async () => {
    if (
      lastCheckpoint !== undefined &&
      isUnchangedSnapshot(checkpoint, lastCheckpoint) &&
      flush.rejected === 0
    ) {
      // The same answer as last time: no rows, only the time at which it was still true.
      await flush.abort();
      await lake.check(stream.name, partition, {
        confirmedAt: Number(lastCheckpoint.snapshotAt),
        observed: observed(),
      });
      commits++;
      lastCheckpoint = undefined;
      return;
    }
    const nothingNew =
      lastCheckpoint === undefined ||
      (flush.rows === 0 && flush.rejected === 0 && JSON.stringify(lastCheckpoint) === committed);
    if (nothingNew) {
      await flush.abort();
      lastCheckpoint = undefined;
      return;
    }
    rows += flush.rows;
    rejects += flush.rejected;
    await flush.commit(lastCheckpoint as Record<string, unknown>, observed());
    committed = JSON.stringify(lastCheckpoint);
    commits++;
    lastCheckpoint = undefined;
  };

  let status: PartitionStatus = 'done';
  let cause: unknown;
  try {
    for await (const step of walk) {
      await flush.append(step.append);
      if (step.rejects.length > 0) await flush.reject(step.rejects);
      fetched += step.append.length;
      fetchedRejects += step.rejects.length;
      if (step.newestAt !== undefined) newestAt = Math.max(newestAt ?? step.newestAt, step.newestAt);
      work.progress({
        kind: 'page',
        at: Date.now(),
        ...at,
        pages: requests,
        rows: fetched,
        rejects: fetchedRejects,
        retries: work.retriesOf(),
        ...(total !== undefined ? { total } : {}),
      });
      if (step.checkpoint === undefined) continue;
      lastCheckpoint = step.checkpoint;
      const due = flush.rows >= limits.rows || (Date.now() - flushStarted) / 1000 >= limits.seconds;
      if (due && !work.signal.aborted) {
        await commit();
        flush = lake.begin({ stream: stream.name, partition, schema });
        flushStarted = Date.now();
      }
      if (work.signal.aborted) break;
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
  if (status === 'done' && work.signal.aborted) status = 'interrupted';
  // Whatever was fetched up to the last complete step is committed, with the checkpoint that matches it.
  try {
    await commit();
  } catch (error) {
    // A flush that failed midway takes no commit: drop what it staged, so the lake closes cleanly.
    await flush.abort().catch(() => undefined);
    throw error;
  }
  // A walk that found nothing new still says so: freshness is the time a partition was last checked.
  if (status === 'done' && commits === 0) await lake.check(stream.name, partition, { observed: observed() });
  const seconds = (Date.now() - started) / 1000;
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
    ...(status === 'failed' ? { error: (cause as Error).message } : {}),
  };
  work.progress({
    kind: 'end',
    at: Date.now(),
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
    partition: JSON.stringify(partition),
    rows,
    rejects,
    requests,
    seconds: Math.round(seconds * 10) / 10,
    ...(summary.error ? { error: summary.error } : {}),
  });
  return { summary, status, cause };
}
