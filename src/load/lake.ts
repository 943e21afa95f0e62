import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Claim, HeartbeatReport, SharedAllowance, WorkerStanding } from './catalog.ts';
import {
  type Checkpoint,
  type CommitLog,
  createCommitLog,
  type DataCommit,
  type Observation,
  type PartitionState,
  type RecoveryReport,
  readStreamStates,
  type StreamState,
} from './commit.ts';
import { markCatalogLake } from './commit-log-kind.ts';
import { type CompactionResult, type CompactionStep, compactStream, planCompaction } from './compact.ts';
import { mkdirDurable } from './durable.ts';
import { createWorkerEncoder, type ParquetEncoder } from './encoder.ts';
import { LakeFileDamagedError } from './errors.ts';
import { fileRecordStore } from './file-records.ts';
import { createFlush, type Flush, type Reject } from './flush.ts';
import { checkLakeIdentity, ensureLakeIdentity } from './lake-identity.ts';
import { lakePaths, layoutCheck, type Partition, partitionId } from './layout.ts';
import { acquireLock, type DataDirLock, type LockOptions } from './lock.ts';
import type { RecordStore } from './records.ts';
import { newestOf, newestStampOf } from './state.ts';
import { diskStorage, isObjectStorage, type LakeStorage } from './storage.ts';

/** A data directory opened for writing: locked, recovered, ready to flush. */
export interface Lake {
  readonly runId: string;
  /** Where its files are: the data directory's `lake/`, or a bucket. */
  readonly storage: LakeStorage;
  /** What recovery did: when the lake was opened, and since, for the partitions of gone writers taken over. */
  readonly recovery: RecoveryReport;
  /** Starts a flush of one partition; one open flush per partition at a time. */
  begin(args: { stream: string; partition: Partition; schema: z.ZodType }): Flush;
  /** The partition's checkpoint: that of its newest commit, undefined before the first. */
  readCheckpoint(stream: string, partition: Partition): Checkpoint | undefined;
  /** Where the partition stands: its newest commit, when it was last checked, its snapshot confirmations. */
  partitionState(stream: string, partition: Partition): PartitionState | undefined;
  /** Commits rejects alone, keeping the partition's checkpoint where it is. */
  writeRejects(stream: string, partition: Partition, rejects: Reject[]): Promise<DataCommit>;
  /**
   * Records that a partition was read and nothing changed: no files, the checkpoint where it is.
   * `confirmedAt`: an unchanged snapshot, still true at that time. `observed`: the source's clock then.
   * `caughtUp`: whether the walk reached the source's head (as for a flush's commit).
   * Alone on a data directory, it is durable once the lake closes (CommitLog.check).
   */
  check(
    stream: string,
    partition: Partition,
    options?: { confirmedAt?: number; observed?: Observation; caughtUp?: boolean },
  ): Promise<void>;
  /**
   * Merges small files (`due`: only the size tiers past their threshold; `all`: every folder's small
   * files), one commit per stream. `streams` limits it.
   */
  compact(
    mode: 'due' | 'all',
    streams?: readonly string[],
    onStep?: (stream: string, step: CompactionStep) => void,
  ): Promise<CompactionResult[]>;
  /**
   * Takes a partition for this run before extracting it. With a catalog: `held` while another live run
   * has it, `done` when a run finished it after this one began; alone on a data directory: `claimed`.
   */
  claim(stream: string, partition: Partition): Promise<Claim>;
  /**
   * With a catalog: `done` (finished or failed) lets the other workers of this wave skip it; `released`
   * (interrupted, a spent quota) lets another worker take it up at once.
   */
  finish(stream: string, partition: Partition, outcome: 'done' | 'released'): Promise<void>;
  /** With a catalog: the compute-unit allowances every worker spends from together. */
  readonly allowance: SharedAllowance | undefined;
  /** Folds the commit log (where enough records piled up), then releases the lock. Flushes must be over. */
  close(): Promise<void>;
}

export interface OpenLakeOptions {
  /** A local directory, or `s3://bucket/prefix` for object storage (which needs a catalog). */
  dataDir: string;
  /** Lineage `_run_id` of every row this run writes. Default: a random UUID. */
  runId?: string;
  lock?: LockOptions;
  /**
   * A PostgreSQL catalog (`postgres://…`) holding the commit log: several writers share the lake, each
   * extracting the partitions it claims; no lock file.
   */
  catalog?: string;
  /** With a catalog: told when this run's heartbeats start failing, and when they go through again. */
  onHeartbeat?: (report: HeartbeatReport) => void;
  /**
   * Where staged files are encoded to Parquet: default a worker thread, started with the first file and
   * ended when the lake closes.
   */
  encoder?: ParquetEncoder;
}

const NO_RECORD = z.object({});

/**
 * Every stream's state as of its newest commit, read-only, from the data directory's commit log or from
 * the catalog when one is given (no lock, no recovery: safe while writers run).
 *
 * With a catalog, the data directory must be the lake the catalog keeps (lake-identity.ts), or its states
 * would name files of another lake: a LakeMismatchError (exit 2) otherwise. Checked where the lake is a
 * folder, and where the caller hands over the bucket's storage (a build mirroring it); a bucket is not
 * opened for this alone, so `status` needs no bucket credentials. Nothing is marked: binding is a
 * writer's.
 */
export async function readLakeState(
  dataDir: string,
  catalog?: string,
  { storage }: { storage?: LakeStorage } = {},
): Promise<Map<string, StreamState>> {
  if (!catalog) return readStreamStates(dataDir);
  const store = await (await import('./catalog.ts')).openCatalog(catalog);
  try {
    const lake = storage ?? (isObjectStorage(dataDir) ? undefined : diskStorage(lakePaths(dataDir).lakeDir));
    if (lake) await checkLakeIdentity(store, lake);
    return await readStreamStates(dataDir, store);
  } finally {
    await store.close();
  }
}

/**
 * Where a data directory's lake files are: its `lake/` folder, or the bucket an `s3://` URL names (the
 * S3 client is loaded only then). Close it when done.
 */
export async function openLakeStorage(dataDir: string): Promise<LakeStorage> {
  if (!isObjectStorage(dataDir)) return diskStorage(lakePaths(dataDir).lakeDir);
  return (await import('./s3-storage.ts')).openS3Storage(dataDir);
}

/** The workers of a catalog, live or gone, with the partitions each holds (for `status`). */
export async function readWorkers(catalog: string): Promise<WorkerStanding[]> {
  const store = await (await import('./catalog.ts')).openCatalog(catalog);
  try {
    return await store.workers();
  } finally {
    await store.close();
  }
}

/**
 * A data directory's own commit log, written only while its lock is still this run's: a run paused for
 * longer than its heartbeat allows (a stopped container) may find another run took the lock over, and
 * must not commit beside it.
 */
export function whileHeld(store: RecordStore, lock: DataDirLock): RecordStore {
  return {
    ...store,
    append: (record) => {
      lock.assertHeld();
      return store.append(record);
    },
    writeState: (state, covered) => {
      lock.assertHeld();
      return store.writeState(state, covered);
    },
  };
}

/**
 * The lake's files, likewise changed only while the lock is this run's. Note: staged names are numbered
 * from this run's view of the log, which the run that took the lock over numbers from too: a paused
 * run's flush staged after it woke would stand in staging under the name of the other run's commit
 * (whose sha256 it does not have, and every later open stops on it), or its abort delete the other's.
 */
export function storageWhileHeld(storage: LakeStorage, lock: DataDirLock): LakeStorage {
  const held =
    <A extends unknown[], R>(change: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      try {
        lock.assertHeld();
      } catch (error) {
        return Promise.reject(error);
      }
      return change(...args);
    };
  return {
    ...storage,
    write: held(storage.write),
    writeFrom: held(storage.writeFrom) as LakeStorage['writeFrom'],
    remove: held(storage.remove),
    copy: held(storage.copy),
    move: held(storage.move),
  };
}

/**
 * Takes the data directory's lock (or, with a catalog, registers as one of its writers), then recovers:
 * staged files of committed flushes move in, others go.
 */
export async function openLake(options: OpenLakeOptions): Promise<Lake> {
  const paths = lakePaths(options.dataDir);
  const remote = isObjectStorage(options.dataDir);
  if (remote && !options.catalog)
    throw new Error(
      `${options.dataDir}: a lake on object storage needs a catalog (--catalog postgres://…) for its commit log`,
    );
  if (!remote) await mkdirDurable(paths.dataDir);
  const runId = options.runId ?? randomUUID();
  let storage = await openLakeStorage(options.dataDir);
  // Loaded only when asked for: a lake without a catalog never imports the PostgreSQL client.
  const catalog = options.catalog
    ? await (await import('./catalog.ts'))
        .openCatalog(options.catalog, options.onHeartbeat ? { onHeartbeat: options.onHeartbeat } : {})
        .catch((error) => {
          storage.close();
          throw error;
        })
    : undefined;
  const release = async () => {
    if (catalog) await catalog.close();
    else await lock?.release();
    storage.close();
  };
  let lock: DataDirLock | undefined;
  let recovery: RecoveryReport;
  let log: CommitLog;
  try {
    if (catalog) await catalog.register(runId);
    else {
      lock = await acquireLock(paths.lockFile, options.lock);
      storage = storageWhileHeld(storage, lock);
    }
    // A catalog keeps one lake: opened over another, it is refused before anything is read or written.
    if (catalog) await ensureLakeIdentity(catalog, storage);
    log = createCommitLog(paths, catalog ?? (lock && whileHeld(fileRecordStore(paths), lock)), storage);
    recovery = await log.open();
    // Marked once the catalog's log has opened on it (recovery found the files its commits name), before
    // any flush: a directory that is not the catalog's lake (a mistyped --data-dir) fails in open and is
    // left unmarked, still usable without the catalog.
    if (catalog && !remote) await markCatalogLake(paths.lakeDir);
  } catch (error) {
    await release();
    throw error;
  }
  /** Flushes not committed or aborted yet, and those of them still taking rows (one per partition). */
  const open = new Set<object>();
  const appending = new Set<string>();
  /** Each partition's last flush begun (until it is done): the next one is numbered after it. */
  const lastBegun = new Map<string, Flush>();
  /**
   * Each stream's newest stamp: over its partitions as the lake opened, then each one its flushes give.
   * A record listed in several partitions (a delegation under its node and its reward address) has its
   * versions ordered by the stream's stamps, not by one partition's, also when the clock steps back
   * between two partitions of one run.
   */
  const streamStamps = new Map<string, number | undefined>();
  const streamStampOf = (stream: string) => {
    if (!streamStamps.has(stream))
      streamStamps.set(
        stream,
        newestOf([...(log.state(stream)?.partitions.values() ?? [])].map(newestStampOf)),
      );
    return streamStamps.get(stream);
  };
  const stamped = (stream: string, ms: number) => {
    streamStamps.set(stream, newestOf([streamStampOf(stream), ms]));
  };
  const encoder = options.encoder ?? createWorkerEncoder();

  const begin: Lake['begin'] = ({ stream, partition, schema }) => {
    layoutCheck(stream, partition);
    const key = `${stream}\n${partitionId(partition)}`;
    if (appending.has(key))
      throw new Error(`a flush of ${stream} ${partitionId(partition)} is already taking rows`);
    // A partition's next flush may begin while its last one commits: commits keep the order they begin in.
    const token = {};
    appending.add(key);
    open.add(token);
    try {
      const before = lastBegun.get(key);
      // The partition's own stamps too: another worker may have committed to it since the lake opened
      // (a claim reads it again), and its flush before this one may still be committing. Neither moves
      // while this flush takes rows: only the stream's, raised by the other partitions, is read live.
      const partitionStamp = newestOf([newestStampOf(log.latest(stream, partition)), before?.stampedAt]);
      const flush: Flush = createFlush({
        stampedBefore: () => newestOf([streamStampOf(stream), partitionStamp]),
        onStamped: (ms) => stamped(stream, ms),
        log,
        encoder,
        stream,
        partition,
        runId,
        schema,
        ...(before ? { after: before.numbered } : {}),
        onSealed: () => appending.delete(key),
        onDone: () => {
          open.delete(token);
          if (lastBegun.get(key) === flush) lastBegun.delete(key);
        },
      });
      lastBegun.set(key, flush);
      return flush;
    } catch (error) {
      appending.delete(key);
      open.delete(token);
      throw error;
    }
  };

  return {
    runId,
    storage,
    recovery,
    begin,
    readCheckpoint: (stream, partition) => log.latest(stream, partition)?.checkpoint ?? undefined,
    partitionState: (stream, partition) => log.latest(stream, partition),
    async writeRejects(stream, partition, rejects) {
      const flush = begin({ stream, partition, schema: NO_RECORD });
      try {
        await flush.reject(rejects);
      } catch (error) {
        await flush.abort();
        throw error;
      }
      // Rejects alone move no walk: whether the partition is caught up stays as it was.
      return flush.commit(log.latest(stream, partition)?.checkpoint ?? null, undefined, false);
    },
    async check(stream, partition, { confirmedAt, observed, caughtUp } = {}) {
      layoutCheck(stream, partition);
      const latest = log.latest(stream, partition);
      await log.check({
        format: 1,
        stream,
        seq: await log.allocateSeq(stream),
        partition: { ...partition },
        runId,
        committedAt: new Date().toISOString(),
        files: [],
        checkpoint: latest?.checkpoint ?? null,
        // The confirmed rows are read again stamped with this time: later ones must follow it too.
        ...(confirmedAt !== undefined ? { confirmedAt, stampedAt: confirmedAt } : {}),
        ...(observed && Object.keys(observed).length > 0 ? { observed } : {}),
        ...(caughtUp !== undefined ? { caughtUp } : {}),
      });
    },
    async compact(mode, streams, onStep) {
      if (open.size > 0) throw new Error(`${open.size} flush(es) still open; compaction waits for them`);
      const results: CompactionResult[] = [];
      for (const stream of streams ?? log.streams()) {
        const result = await log.exclusive(stream, async () => {
          const state = log.state(stream);
          const plan = state && planCompaction(state, mode);
          if (!plan || plan.groups.length === 0) return undefined;
          return compactStream({ paths, log, plan, runId, onStep: (step) => onStep?.(stream, step) }).catch(
            (error) => {
              // One stream's damage is not the others': they are compacted, and it is reported.
              if (!(error instanceof LakeFileDamagedError)) throw error;
              return { stream, merged: 0, written: 0, bytes: 0, damaged: error.message };
            },
          );
        });
        // Merged nothing (its inputs not all moved in yet) and not damaged: nothing to report.
        if (result && (result.merged > 0 || result.damaged)) results.push(result);
      }
      // Maintenance time: the commit log is folded too, however few records it has; compacting
      // everything also moves the streams' pending snapshot confirmations to a file.
      await log.fold(1, { confirmationsOut: mode === 'all' ? (streams ?? log.streams()) : [] });
      return results;
    },
    async claim(stream, partition) {
      if (!catalog) return 'claimed';
      const claim = await catalog.claim(stream, partition);
      if (claim !== 'claimed' && claim !== 'taken-over') return claim;
      // Another writer may have committed to another partition of the stream, with a clock ahead of
      // this one's: stamps follow its. (A max: read beside the partition's own catch-up.)
      const followStamp = async () => {
        const newest = await catalog.streamStamp(stream);
        if (newest !== undefined) stamped(stream, newest);
      };
      // Its gone holder may have committed files it never moved in: they go in now, not at some later open.
      if (claim === 'taken-over') {
        await log.recover(stream, recovery);
        await followStamp();
      }
      // Another writer may have committed to it since this one read the stream.
      else await Promise.all([log.refreshPartition(stream, partition), followStamp()]);
      return 'claimed';
    },
    finish: async (stream, partition, outcome) => catalog?.finish(stream, partition, outcome),
    allowance: catalog,
    async close() {
      if (open.size > 0)
        throw new Error(`${open.size} flush(es) still open; commit or abort them before close`);
      try {
        await log.fold();
      } finally {
        await encoder.close();
        await release();
      }
    },
  };
}
