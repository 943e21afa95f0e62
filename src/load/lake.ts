import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { z } from 'zod';
import {
  type Checkpoint,
  createCommitLog,
  type DataCommit,
  type PartitionState,
  type RecoveryReport,
} from './commit.ts';
import { type CompactionResult, type CompactionStep, compactStream, planCompaction } from './compact.ts';
import { createFlush, type Flush, type Reject } from './flush.ts';
import { type LakePaths, lakePaths, layoutCheck, type Partition, partitionId } from './layout.ts';
import { acquireLock, type LockOptions } from './lock.ts';

/** A data directory opened for writing: locked, recovered, ready to flush. */
export interface Lake {
  readonly paths: LakePaths;
  readonly runId: string;
  /** What recovery did when the lake was opened. */
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
   * `confirmedAt`: an unchanged snapshot, still true at that time.
   */
  check(stream: string, partition: Partition, confirmedAt?: number): Promise<void>;
  /**
   * Merges small files (`due`: only the size tiers past their threshold; `all`: every folder's small
   * files), one commit per stream. `streams` limits it.
   */
  compact(
    mode: 'due' | 'all',
    streams?: readonly string[],
    onStep?: (stream: string, step: CompactionStep) => void,
  ): Promise<CompactionResult[]>;
  /** Folds the commit log (where enough records piled up), then releases the lock. Flushes must be over. */
  close(): Promise<void>;
}

export interface OpenLakeOptions {
  dataDir: string;
  /** Lineage `_run_id` of every row this run writes. Default: a random UUID. */
  runId?: string;
  lock?: LockOptions;
}

const NO_RECORD = z.object({});

/** Takes the data directory's lock, then recovers: staged files of committed flushes move in, others go. */
export async function openLake(options: OpenLakeOptions): Promise<Lake> {
  const paths = lakePaths(options.dataDir);
  await mkdir(paths.dataDir, { recursive: true });
  const lock = await acquireLock(paths.lockFile, options.lock);
  let recovery: RecoveryReport;
  const log = createCommitLog(paths);
  try {
    recovery = await log.open();
  } catch (error) {
    await lock.release();
    throw error;
  }
  const runId = options.runId ?? randomUUID();
  const open = new Set<string>();

  const begin: Lake['begin'] = ({ stream, partition, schema }) => {
    layoutCheck(stream, partition);
    const key = `${stream}\n${partitionId(partition)}`;
    if (open.has(key)) throw new Error(`a flush of ${stream} ${partitionId(partition)} is already open`);
    open.add(key);
    try {
      return createFlush({ paths, log, stream, partition, runId, schema, onDone: () => open.delete(key) });
    } catch (error) {
      open.delete(key);
      throw error;
    }
  };

  return {
    paths,
    runId,
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
      return flush.commit(log.latest(stream, partition)?.checkpoint ?? null);
    },
    async check(stream, partition, confirmedAt) {
      layoutCheck(stream, partition);
      const latest = log.latest(stream, partition);
      await log.commit({
        format: 1,
        stream,
        seq: log.allocateSeq(stream),
        partition: { ...partition },
        runId,
        committedAt: new Date().toISOString(),
        files: [],
        checkpoint: latest?.checkpoint ?? null,
        ...(confirmedAt !== undefined ? { confirmedAt } : {}),
      });
    },
    async compact(mode, streams, onStep) {
      if (open.size > 0) throw new Error(`${open.size} flush(es) still open; compaction waits for them`);
      const results: CompactionResult[] = [];
      for (const stream of streams ?? log.streams()) {
        const state = log.state(stream);
        if (!state) continue;
        const plan = planCompaction(state, mode);
        if (plan.groups.length === 0) continue;
        results.push(
          await compactStream({ paths, log, plan, runId, onStep: (step) => onStep?.(stream, step) }),
        );
      }
      // Maintenance time: the commit log is folded too, however few records it has.
      await log.fold(1);
      return results;
    },
    async close() {
      if (open.size > 0)
        throw new Error(`${open.size} flush(es) still open; commit or abort them before close`);
      try {
        await log.fold();
      } finally {
        await lock.release();
      }
    },
  };
}
