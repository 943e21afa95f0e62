import { type Lake, LockLostError, openLake, partitionId, processLimitOf } from '../load/index.ts';
import { createRateBudget, type RateBudget } from './budget.ts';
import { chainNetworkCheck } from './chain-network.ts';
import { DeadHostError, FinalError, type QuotaExhaustedError } from './errors.ts';
import { createFetcher, type Fetcher } from './fetcher.ts';
import type { HttpClient } from './http.ts';
import { type Logger, silentLogger } from './log.ts';
import { extractPartition, failureMessage, type PartitionSummary } from './partition.ts';
import type { Pipeline } from './pipeline.ts';
import type { ProgressSink } from './progress.ts';
import { sendPage } from './requests.ts';
import { createSharedBudget } from './shared-budget.ts';
import { allowWaiters, sleep } from './sleep.ts';
import { isUnfinished } from './strategies/index.ts';
import { httpGet, type Partition, type StreamDefinition } from './stream.ts';
import { chains } from './streams/chains.ts';

export type { PartitionStatus, PartitionSummary } from './partition.ts';

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

export interface RunSummary {
  runId: string;
  status: 'ok' | 'partial' | 'failed' | 'quota' | 'interrupted';
  partitions: PartitionSummary[];
  /** Set when a quota stopped the run: which, and when it resets. */
  quota?: string;
  /** Hosts declared unreachable (refused, unresolved, TLS failed, or hung): they failed the run. */
  unreachable?: { origin: string; error: string }[];
  /** A service refused the API key (401): the run failed, whatever the keyless sources committed. */
  keyRefused?: string;
  recovered: { rolledForward: number; discarded: number };
  /**
   * What stopped the run when no partition could absorb it (the catalog or the lake's storage lost, the
   * disk full): the run failed, and `partitions` are those that ended before or beside it.
   */
  error?: string;
}

/**
 * A failure no partition could absorb stopped the run. `summary` says what committed before it;
 * `cause` is the failure itself.
 */
export class RunStoppedError extends Error {
  override name = 'RunStoppedError';
  constructor(
    readonly summary: RunSummary,
    override readonly cause: unknown,
  ) {
    super((cause as Error).message, { cause });
  }
}

/**
 * Extracts every (stream, partition) of the plan into the lake, `pipeline.concurrency` at a time: open
 * the lake, plan (unfinished work first), walk each partition it can claim, then summarise.
 */
export async function runExtract(options: ExtractOptions): Promise<RunSummary> {
  const log = options.log ?? silentLogger;
  const progress = options.progress ?? (() => {});
  const lake = await openForRun(options, log);
  if (!lake) return { runId: '-', status: 'interrupted', partitions: [], recovered: NOTHING };
  let summary: RunSummary;
  try {
    const retries = new Map<string, number>();
    const fetcher = options.fetcher ?? retryingFetcher(options, retries, log, progress);
    const budgetFor = budgetsOf(lake, options, log);
    // A quota or an interrupt stops every partition; each commits what it has.
    const stop = new AbortController();
    // Every worker's request listens to the run's signal while it waits or is in flight: one listener per
    // worker at most, since a partition settles the page it asked ahead before its worker moves on.
    allowWaiters(stop.signal, options.pipeline.concurrency);
    const onAbort = () => stop.abort(options.signal?.reason ?? new Error('interrupted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let quota: QuotaExhaustedError | undefined;
    const unreachable: NonNullable<RunSummary['unreachable']> = [];
    let keyRefused: string | undefined;

    const runStartedAt = Date.now();
    const work = plan(options, lake);
    progress({ kind: 'plan', at: performance.now(), partitions: countByStream(work) });
    // The lookup is a courtesy, not part of any partition's walk: one attempt, outside the retry policy
    // and its per-partition counts, so a Data API that fails or hangs costs a first read one request's
    // time at most (a metrics partition too, whose own host may be well) and the partition goes on.
    const lookup = createFetcher({ http: options.http, retries: 0 });
    const checkChainNetwork = chainNetworkCheck((network) =>
      sendPage({
        request: httpGet({ service: 'data', route: '/v1/chains', params: {}, query: { network } }),
        pipeline: options.pipeline,
        fetcher: lookup,
        budgetFor,
        item: { stream: chains, partition: { network, feature: 'all' } },
        signal: stop.signal,
      }),
    );
    const nextItem = claimQueue(lake, work, stop.signal);
    const results: PartitionSummary[] = [];
    const worker = async () => {
      for (let item = await nextItem(); item; item = await nextItem()) {
        const summary = await extractPartition({
          ...item,
          lake,
          pipeline: options.pipeline,
          fullRefresh: options.fullRefresh ?? false,
          log,
          progress,
          signal: stop.signal,
          runStartedAt,
          retriesOf: () => retries.get(`${item.stream.name}\n${partitionId(item.partition)}`) ?? 0,
          beforeFirstRead: (request) =>
            checkChainNetwork(request, item.partition, {
              stream: item.stream.name,
              partition: partitionId(item.partition),
            }),
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
        // A host declared unreachable fails every partition it serves, each at its first request (the
        // fetcher refuses to wait on it again), and fails the run; the partitions of the other hosts go on,
        // so that one service down does not keep the rest of the lake from moving.
        const dead = summary.cause;
        if (dead instanceof DeadHostError && !unreachable.some((u) => u.origin === dead.origin))
          unreachable.push({ origin: dead.origin, error: dead.message });
        // A key the service refuses fails the run, not a part of it: a key revoked or mistyped must not
        // pass for the partial run a scheduler may accept (exit 3). Its other partitions are refused at
        // their first request; those of keyless sources (the node's RPC) go on.
        const refused = summary.cause;
        if (refused instanceof FinalError && refused.status === 401) keyRefused ??= refused.message;
        results.push(summary.summary);
        const over = summary.status === 'done' || summary.status === 'failed';
        await lake.finish(item.stream.name, item.partition, over ? 'done' : 'released');
        // A limit of the process (open files, memory) fails every partition alike: the run stops on it,
        // the others committing what they have. So does the data directory's lock taken over by another
        // run: every commit after it is refused.
        if (
          summary.status === 'failed' &&
          (processLimitOf(summary.cause) !== undefined || summary.cause instanceof LockLostError)
        )
          throw summary.cause;
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

    const { recovery } = lake;
    summary = {
      runId: lake.runId,
      status: runStatus(results, {
        interrupted: options.signal?.aborted ?? false,
        unreachable,
        keyRefused,
        quota,
      }),
      partitions: results,
      ...(quota ? { quota: quota.message } : {}),
      ...(keyRefused !== undefined ? { keyRefused } : {}),
      ...(unreachable.length > 0 ? { unreachable } : {}),
      recovered: { rolledForward: recovery.rolledForward.length, discarded: recovery.discarded.length },
    };
    const [crash] = crashes;
    if (crash !== undefined)
      throw new RunStoppedError({ ...summary, status: 'failed', error: failureMessage(crash) }, crash);
  } catch (error) {
    // A run that failed may leave a flush open, which the lake refuses to close over: the run's own
    // failure is what the user must see (the next start discards what that flush staged).
    await lake.close().catch((closing: unknown) => {
      log({ level: 'error', msg: 'closing the lake after a failure', error: (closing as Error).message });
    });
    throw error;
  }
  // Closing writes too (the commit log's folds and states): a failure there stops a run whose partitions
  // are committed, and the summary of what they committed is still the user's to see.
  await lake.close().catch((closing: unknown) => {
    throw new RunStoppedError({ ...summary, status: 'failed', error: failureMessage(closing) }, closing);
  });
  return summary;
}

const NOTHING = { rolledForward: 0, discarded: 0 } as const;

/** How often a worker asks again for partitions another live worker of a shared catalog holds. */
const CLAIM_RETRY_MS = 1_000;

/** Opens the lake for writing; undefined when interrupted while it waited for another run's lock. */
async function openForRun(options: ExtractOptions, log: Logger): Promise<Lake | undefined> {
  try {
    return await openLake({
      dataDir: options.dataDir,
      ...(options.catalog ? { catalog: options.catalog } : {}),
      onHeartbeat: (report) =>
        log(
          report.state === 'missed'
            ? {
                level: 'warn',
                msg: `the catalog missed this run's heartbeat; after ${report.leaseSeconds} s without one, other workers may take its partitions and its commits are refused`,
                error: report.error.message,
              }
            : { level: 'info', msg: "the catalog takes this run's heartbeat again", missed: report.missed },
        ),
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
    // Nothing was opened, nothing to commit.
    if (options.signal?.aborted) return undefined;
    throw error;
  }
}

/** The one retry policy, counting each partition's retries for its summary and the live display. */
function retryingFetcher(
  options: ExtractOptions,
  retries: Map<string, number>,
  log: Logger,
  progress: ProgressSink,
): Fetcher {
  return createFetcher({
    http: options.http,
    ...(options.retries !== undefined ? { retries: options.retries } : {}),
    ...(options.maxRateWaitMs ? { maxRateWaitMs: options.maxRateWaitMs } : {}),
    requestsAtOnce: options.pipeline.concurrency,
    log: (event) => {
      const key = `${event.stream}\n${event.partition}`;
      retries.set(key, (retries.get(key) ?? 0) + 1);
      log({ level: 'warn', msg: 'retrying', ...event });
      const at = { stream: String(event.stream), partition: String(event.partition) };
      progress({ kind: 'retry', at: performance.now(), ...at, retries: retries.get(key) ?? 0 });
    },
  });
}

/** One rate budget per host: shared through the catalog by its workers; alone, the headers are enough. */
function budgetsOf(lake: Lake, options: ExtractOptions, log: Logger): (origin: string) => RateBudget {
  const budgets = new Map<string, RateBudget>();
  return (origin) => {
    let budget = budgets.get(origin);
    if (!budget) {
      const limits = { host: origin, ...(options.maxRateWaitMs ? { maxWaitMs: options.maxRateWaitMs } : {}) };
      budget = lake.allowance
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
      budgets.set(origin, budget);
    }
    return budget;
  };
}

type WorkItem = { stream: StreamDefinition; partition: Partition };

/**
 * Every partition of every stream, unfinished work first: partitions never extracted or stopped mid-walk
 * (by a quota, say) go ahead of those that only need a look for news, so a backfill spread over many
 * quota-limited runs progresses.
 */
function plan(options: ExtractOptions, lake: Lake): WorkItem[] {
  return options.streams
    .flatMap((stream) => stream.partitions(options.pipeline).map((partition) => ({ stream, partition })))
    .map((item) => ({
      item,
      unfinished: isUnfinished(lake.readCheckpoint(item.stream.name, item.partition)),
    }))
    .sort((a, b) => Number(b.unfinished) - Number(a.unfinished))
    .map(({ item }) => item);
}

const countByStream = (work: readonly WorkItem[]) => {
  const counts: Record<string, number> = {};
  for (const { stream } of work) counts[stream.name] = (counts[stream.name] ?? 0) + 1;
  return counts;
};

/**
 * The next partition this run may walk. With a catalog, partitions another live worker holds are asked
 * for again until it finishes them (or dies and its lease lapses); alone on a data directory every
 * claim succeeds at once.
 */
function claimQueue(lake: Lake, work: readonly WorkItem[], signal: AbortSignal) {
  const queue = [...work];
  const held: WorkItem[] = [];
  return async (): Promise<WorkItem | undefined> => {
    while (!signal.aborted) {
      const item = queue.shift();
      if (!item) {
        if (held.length === 0) return undefined;
        await sleep(CLAIM_RETRY_MS, signal).catch(() => undefined);
        queue.push(...held.splice(0));
        continue;
      }
      const claim = await lake.claim(item.stream.name, item.partition);
      if (claim === 'claimed') return item;
      if (claim === 'held') held.push(item);
    }
    return undefined;
  };
}

/** The run's status from its partitions' and what stopped it. */
function runStatus(
  results: readonly PartitionSummary[],
  stopped: { interrupted: boolean; unreachable: readonly unknown[]; keyRefused?: string; quota: unknown },
): RunSummary['status'] {
  if (stopped.interrupted) return 'interrupted';
  if (stopped.unreachable.length > 0 || stopped.keyRefused !== undefined) return 'failed';
  if (stopped.quota) return 'quota';
  const failed = results.filter((r) => r.status === 'failed').length;
  return failed === 0 ? 'ok' : failed === results.length ? 'failed' : 'partial';
}
