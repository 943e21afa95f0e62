import { randomUUID } from 'node:crypto';
import { link, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CommitLog, CompactCommit, LiveFile, StreamState } from './commit.ts';
import { fsyncDir, mkdirDurable } from './durable.ts';
import { LakeCorruptError, LakeFileDamagedError, type LakeKind } from './errors.ts';
import { type LakePaths, seqText } from './layout.ts';
import { mergeLakeFiles, mergeParquetFiles } from './merge.ts';
import type { WrittenFile } from './parquet.ts';
import { committedFileSize } from './recovery.ts';
import { eachLimited, folderOf, type LakeStorage, stagedPath } from './storage.ts';

/**
 * Compaction: the small files of a folder are merged into larger ones, as a commit of its own. The
 * merged files and hard links to every file kept make the stream's next generation of folders; one
 * commit record names what was replaced by what, then the stream's link moves to the new generation.
 * Rows and checkpoints are untouched; a reader globbing the stream sees either generation, whole.
 *
 * Which files merge is decided from the commit log's state alone (no folder is listed, no file read):
 * files are sorted into size tiers, and a tier of a folder merges once it holds MERGE_FILES files, so a
 * row is rewritten about once per tier (a handful of times in its life), never on every run.
 */

/** Files at least this large are compacted: left alone. */
export const DONE_BYTES = 32 * 1024 * 1024;
/** A merged file takes inputs up to this many bytes in all. */
export const TARGET_BYTES = 64 * 1024 * 1024;
/** Tier 0 holds files under this size; each next tier is TIER_RATIO times larger. */
const TIER0_BYTES = 128 * 1024;
const TIER_RATIO = 8;
/** A tier of a folder merges when it has this many files (what `run` checks after every run). */
export const MERGE_FILES = 8;

/** Which files of a stream merge into which, each group one new file in its folder. */
export interface CompactionPlan {
  stream: string;
  groups: { folder: string; files: LiveFile[] }[];
}

export type CompactionStep = 'link' | 'merge' | 'commit';

export interface CompactionResult {
  stream: string;
  /** Files replaced, and the merged files that replaced them. */
  merged: number;
  written: number;
  /** Bytes rewritten (the inputs' size). */
  bytes: number;
  /**
   * Why the stream was left as it was: a file of it is missing or cut short (LakeFileDamagedError). The
   * other streams are compacted all the same.
   */
  damaged?: string;
}

const tierOf = (bytes: number) =>
  bytes < TIER0_BYTES ? 0 : Math.floor(Math.log(bytes / TIER0_BYTES) / Math.log(TIER_RATIO)) + 1;

/**
 * `due`: only the tiers that reached MERGE_FILES (cheap enough to check after every run); `all`: every
 * folder's small files, as few files as TARGET_BYTES allows (`avalake compact`).
 */
export function planCompaction(state: StreamState, mode: 'due' | 'all'): CompactionPlan {
  return { stream: state.stream, groups: mergeGroups(state.files, 'data', mode) };
}

/**
 * Which small files of a table (under DONE_BYTES) merge into which, by folder and size tier: data files
 * in a compaction, rejects files when the commit log folds (rejects-merge.ts).
 */
export function mergeGroups(
  files: readonly LiveFile[],
  table: 'data' | 'rejects',
  mode: 'due' | 'all',
): CompactionPlan['groups'] {
  const small = files.filter((f) => f.table === table && f.bytes < DONE_BYTES);
  const byFolder = groupBy(small, (f) => folderOf(f.path));
  const groups: CompactionPlan['groups'] = [];
  for (const [folder, files] of byFolder) {
    const candidates =
      mode === 'all'
        ? [files]
        : [...groupBy(files, (f) => tierOf(f.bytes)).values()].filter((t) => t.length >= MERGE_FILES);
    for (const tier of candidates) {
      // Oldest first, so a merged file keeps the rows in the order they were committed.
      let group: LiveFile[] = [];
      let bytes = 0;
      const close = () => {
        if (group.length > 1) groups.push({ folder, files: group });
        group = [];
        bytes = 0;
      };
      for (const file of [...tier].sort((a, b) => a.seq - b.seq || (a.path < b.path ? -1 : 1))) {
        if (group.length > 0 && bytes + file.bytes > TARGET_BYTES) close();
        group.push(file);
        bytes += file.bytes;
      }
      close();
    }
  }
  return groups;
}

/** Carries out a plan as one commit. The caller holds the stream alone, so no flush commits meanwhile. */
export async function compactStream(args: {
  paths: LakePaths;
  log: CommitLog;
  plan: CompactionPlan;
  runId?: string;
  /** Called as the compaction enters each step (progress, and the crash tests' kill points). */
  onStep?: (step: CompactionStep) => void;
}): Promise<CompactionResult> {
  const { log, plan } = args;
  const { stream } = plan;
  const state = log.state(stream);
  const result: CompactionResult = { stream, merged: 0, written: 0, bytes: 0 };
  if (!state || plan.groups.length === 0) return result;
  const inputs = plan.groups.flatMap((g) => g.files);
  const lake: LakeKind = { catalog: log.store.shared, bucket: log.storage.remote };
  if (!(await inputsReady(log.storage, stream, inputs, lake))) return result;
  const seq = await log.allocateSeq(stream);
  const removed = new Set(plan.groups.flatMap((g) => g.files.map((f) => f.path)));
  const target = log.storage.remote
    ? stagedTarget(log.storage, stream)
    : generationTarget(args.paths, state, seq, removed, lake);
  try {
    args.onStep?.('link');
    await target.prepare();
    const added: CompactCommit['added'] = [];
    args.onStep?.('merge');
    for (const [n, group] of plan.groups.entries()) {
      const path = `${group.folder}/part-${seqText(seq)}-${n}.parquet`;
      const written = await target.merge(
        group.files.map((f) => f.path),
        path,
      );
      const rows = group.files.reduce((sum, f) => sum + f.rows, 0);
      if (written.rows !== rows)
        throw new LakeCorruptError(
          `merging ${group.files.length} files gave ${written.rows} rows, not ${rows}`,
          path,
        );
      added.push({ path, table: 'data', ...written, replaces: group.files.map((f) => f.path) });
      result.merged += group.files.length;
      result.bytes += group.files.reduce((sum, f) => sum + f.bytes, 0);
    }
    await target.seal();
    result.written = added.length;
    args.onStep?.('commit');
    await log.commitCompaction({
      format: 1,
      kind: 'compact',
      stream,
      seq,
      runId: args.runId ?? randomUUID(),
      committedAt: new Date().toISOString(),
      removed: [...removed],
      added,
    });
  } catch (error) {
    // Not committed: what was built is nobody's (the next open would remove it too).
    if (!log.state(stream)?.files.some((f) => f.seq === seq)) await target.discard();
    throw error;
  }
  return result;
}

/**
 * The files a compaction merges, as the commit log records them: one missing or of another size (deleted
 * or cut short by hand) is named, before DuckDB fails on it with words of its own. One still in staging
 * is not damaged: a writer of a shared catalog committed it and has not moved it in yet (or died, and
 * the recovery after its lease moves it), so the stream waits for a later compaction (false).
 */
async function inputsReady(
  storage: LakeStorage,
  stream: string,
  files: readonly LiveFile[],
  lake: LakeKind,
): Promise<boolean> {
  const sizes = new Array<'in place' | 'staged' | number | undefined>(files.length);
  // Sizes of objects in a bucket are a request each: several at once, as transfers go.
  await eachLimited(files.length, storage.remote ? 8 : 1, async (i) => {
    sizes[i] = await committedFileSize(storage, stream, files[i] as LiveFile);
  });
  for (const [i, file] of files.entries()) {
    const size = sizes[i];
    if (size === 'staged') return false;
    if (size !== 'in place') throw new LakeFileDamagedError(stream, file.path, file, size, lake);
  }
  return true;
}

/** Where a compaction writes its merged files before its commit. */
interface CompactionTarget {
  prepare(): Promise<void>;
  /** Merges lake files into the file that will stand at `path` once committed. */
  merge(sources: string[], path: string): Promise<WrittenFile>;
  /** Makes what was written durable. */
  seal(): Promise<void>;
  /** Removes what was written (the compaction did not commit). */
  discard(): Promise<void>;
}

/**
 * A local lake: the stream's next generation of folders, hard links to every file kept and the merged
 * files beside them; the commit moves the stream's link to it.
 */
function generationTarget(
  paths: LakePaths,
  state: StreamState,
  seq: number,
  removed: ReadonlySet<string>,
  lake: LakeKind,
): CompactionTarget {
  const generation = paths.generationDir(state.stream, seq);
  const inLake = (path: string) => join(paths.lakeDir, ...path.split('/'));
  const inGeneration = (path: string) => join(generation, ...path.split('/').slice(1));
  const dirs = new Set<string>();
  const made = new Set<string>();
  const place = async (path: string) => {
    const target = inGeneration(path);
    await mkdirDurable(dirname(target), made);
    dirs.add(dirname(target));
    return target;
  };
  return {
    async prepare() {
      await rm(generation, { recursive: true, force: true });
      for (const file of state.files) {
        if (file.table !== 'data' || removed.has(file.path)) continue;
        await link(inLake(file.path), await place(file.path)).catch((error) => {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT')
            throw new LakeFileDamagedError(state.stream, file.path, file, undefined, lake);
          throw error;
        });
      }
    },
    merge: async (sources, path) => mergeParquetFiles(sources.map(inLake), await place(path)),
    async seal() {
      for (const dir of dirs) await fsyncDir(dir);
    },
    discard: () => rm(generation, { recursive: true, force: true }),
  };
}

/**
 * Object storage: merged files are staged like a flush's (`_staging/<stream>/part-<seq>-<n>.parquet`);
 * once committed, each is copied into place before the files it replaces are deleted (commit.ts).
 */
function stagedTarget(storage: LakeStorage, stream: string): CompactionTarget {
  const staged: string[] = [];
  return {
    prepare: async () => {},
    merge(sources, path) {
      const at = stagedPath(stream, path.slice(path.lastIndexOf('/') + 1));
      staged.push(at);
      return mergeLakeFiles(storage, sources, at);
    },
    seal: async () => {},
    async discard() {
      for (const path of staged) await storage.remove(path);
    },
  };
}

/** Node 20 has no Map.groupBy. */
function groupBy<T, K>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const list = groups.get(keyOf(item)) ?? [];
    list.push(item);
    groups.set(keyOf(item), list);
  }
  return groups;
}
