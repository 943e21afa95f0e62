import { lstat, readdir, readFile, readlink, rename, rm, stat, symlink, unlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { foldConfirmations, removeStrayConfirmations } from './confirmations.ts';
import { fsyncDir, mkdirDurable, replaceDurable, sha256File } from './durable.ts';
import { LakeCorruptError } from './errors.ts';
import {
  commitFileName,
  isSafeSegment,
  type LakePaths,
  lakePaths,
  type Partition,
  seqOfCommitFile,
  seqOfStagedFile,
  seqOfStateFile,
  stateFileName,
} from './layout.ts';
import {
  applyRecord,
  type CommitRecord,
  type CompactCommit,
  commitRecordSchema,
  type DataCommit,
  emptyState,
  isCompaction,
  type PartitionState,
  parseState,
  partitionStateOf,
  type StreamState,
  serializeState,
} from './state.ts';

export type {
  CommitRecord,
  CommittedFile,
  CompactCommit,
  DataCommit,
  LiveFile,
  PartitionState,
  StreamState,
} from './state.ts';

/**
 * The commit protocol (DESIGN.md): staged files are fsynced, then ONE commit record names them with the
 * checkpoint after them (tmp + fsync + rename + fsync dir), then the files move into the lake. The commit
 * record's rename is the instant of commit: before it the flush never happened, after it the flush is
 * complete even if the files still sit in staging, because recovery moves them.
 *
 * Records are folded: `state-<seq>.json` holds what every record up to <seq> amounts to (each
 * partition's newest commit, the live files), written durably before the records it replaces are
 * deleted. Opening the lake reads the newest state and the records after it, so its cost follows the
 * partitions and the live files, not the number of commits ever made.
 */

/** Where a stream's reading stands after a commit (page token, cursor, …): opaque JSON to the load layer. */
export type Checkpoint = Readonly<Record<string, unknown>>;

/** A stream is folded when a run leaves at least this many records after its state. */
export const FOLD_RECORDS = 16;

/** What recovery did, for the run log. */
export interface RecoveryReport {
  /** Staged files of committed flushes moved into the lake (lake-relative paths). */
  rolledForward: string[];
  /** Staged files no commit names (a flush that never committed), deleted. */
  discarded: string[];
}

export interface CommitLog {
  /** Recovers every stream and loads its state. Call once, holding the data directory's lock. */
  open(): Promise<RecoveryReport>;
  /** Reserves the next commit sequence number of a stream; numbers only grow, gaps are allowed. */
  allocateSeq(stream: string): number;
  /** Where a partition stands: its newest commit (whose checkpoint is the partition's checkpoint). */
  latest(stream: string, partition: Partition): PartitionState | undefined;
  /** A stream's state as of its newest commit. */
  state(stream: string): StreamState | undefined;
  streams(): string[];
  /** Commits files already written and fsynced in the stream's staging folder, then moves them. */
  commit(record: DataCommit): Promise<void>;
  /**
   * Commits a compaction whose next generation of folders is built and fsynced, then points the stream's
   * link at it and removes the old generation.
   */
  commitCompaction(record: CompactCommit): Promise<void>;
  /** Folds every stream with at least `minRecords` records after its state (default FOLD_RECORDS). */
  fold(minRecords?: number): Promise<void>;
}

export function createCommitLog(paths: LakePaths): CommitLog {
  const states = new Map<string, StreamState>();
  /** How many records follow each stream's state file. */
  const unfolded = new Map<string, number>();
  const nextSeq = new Map<string, number>();
  const knownDirs = new Set<string>();

  const stateOf = (stream: string) => {
    let state = states.get(stream);
    if (!state) {
      state = emptyState(stream);
      states.set(stream, state);
    }
    return state;
  };

  const remember = (record: CommitRecord) => {
    applyRecord(stateOf(record.stream), record);
    unfolded.set(record.stream, (unfolded.get(record.stream) ?? 0) + 1);
    nextSeq.set(record.stream, Math.max(nextSeq.get(record.stream) ?? 1, record.seq + 1));
  };

  const moveIntoLake = async (stream: string, file: { path: string; staged: string }) => {
    const target = join(paths.lakeDir, ...file.path.split('/'));
    await mkdirDurable(dirname(target), knownDirs);
    await rename(join(paths.stagingDir(stream), file.staged), target);
    return target;
  };

  /** `data/lake/<stream>` as a link to its current generation, made at the stream's first commit. */
  const streamDirs = new Map<string, Promise<void>>();
  const ensureStreamDir = (stream: string): Promise<void> => {
    // Once per stream and run: partitions commit concurrently.
    let made = streamDirs.get(stream);
    if (!made) {
      made = (async () => {
        const link = paths.streamDir(stream);
        if ((await kindOf(link)) !== 'missing') return;
        const generation = paths.generationDir(stream, stateOf(stream).generation);
        await mkdirDurable(generation);
        await symlink(relative(paths.lakeDir, generation), link);
        await fsyncDir(paths.lakeDir);
      })();
      made.catch(() => streamDirs.delete(stream));
      streamDirs.set(stream, made);
    }
    return made;
  };

  /** Points the stream's link at its state's generation (one rename), then removes every other one. */
  const settleGeneration = async (stream: string) => {
    const state = stateOf(stream);
    const link = paths.streamDir(stream);
    const current = paths.generationDir(stream, state.generation);
    const kind = await kindOf(link);
    const legacy = kind === 'directory' && state.generation === 0; // a lake from before generations
    if (legacy || (kind === 'link' && (await readlink(link)) === relative(paths.lakeDir, current))) {
      // Already there; only leftovers of an unfinished compaction to clear.
    } else if (await exists(current)) {
      const tmp = join(paths.generationsDir(stream), `link.tmp-${process.pid}`);
      await rm(tmp, { force: true });
      await symlink(relative(paths.lakeDir, current), tmp);
      if (kind === 'directory') {
        // Note: the one moment a reader can find the stream missing: the first compaction of a lake
        // written before generations existed, when its plain folder gives way to the link.
        await rename(link, join(paths.generationsDir(stream), `legacy-${process.pid}`));
      }
      await rename(tmp, link);
      await fsyncDir(paths.lakeDir);
    } else if (kind !== 'missing' || state.files.some((f) => f.table === 'data')) {
      throw new LakeCorruptError(
        `the commit log of ${stream} says its files are in ${relative(paths.lakeDir, current)}, which is ` +
          'missing; restore the data directory from a backup',
        current,
      );
    }
    knownDirs.clear();
    streamDirs.delete(stream);
    for (const name of await listDir(paths.generationsDir(stream))) {
      const path = join(paths.generationsDir(stream), name);
      if (path !== current) await rm(path, { recursive: true, force: true });
    }
  };

  return {
    async open() {
      const report: RecoveryReport = { rolledForward: [], discarded: [] };
      const streams = new Set(
        [
          ...(await listDir(join(paths.lakeDir, '_commits'))),
          ...(await listDir(join(paths.lakeDir, '_staging'))),
          ...(await listDir(join(paths.lakeDir, '_generations'))),
        ]
          // Stray entries (.DS_Store, editor files) are not streams.
          .filter(isSafeSegment),
      );
      for (const stream of streams) {
        const { state, records } = await readStreamLog(paths, stream, { tidy: true });
        if (state) states.set(stream, state);
        nextSeq.set(stream, stateOf(stream).nextSeq);
        for (const record of records) remember(record);
        await rollForward(stream, records, report);
        await settleGeneration(stream);
        await removeStrayConfirmations(paths, stateOf(stream));
        await checkFiles(stream, records);
      }
      return report;
    },

    allocateSeq(stream) {
      const seq = nextSeq.get(stream) ?? 1;
      nextSeq.set(stream, seq + 1);
      return seq;
    },

    latest: (stream, partition) => partitionStateOf(states.get(stream), partition),
    state: (stream) => states.get(stream),
    streams: () => [...states.keys()],

    async commit(record) {
      const stagingDir = paths.stagingDir(record.stream);
      const commitsDir = paths.commitsDir(record.stream);
      // The staged files' names must be durable before a commit record can point at them.
      if (record.files.length > 0) await fsyncDir(stagingDir);
      await mkdirDurable(commitsDir, knownDirs);
      await replaceDurable(join(commitsDir, commitFileName(record.seq)), Buffer.from(JSON.stringify(record)));
      remember(record);
      if (record.files.length === 0) return;
      if (record.files.some((f) => f.table === 'data')) await ensureStreamDir(record.stream);
      const targetDirs = new Set<string>();
      for (const file of record.files) targetDirs.add(dirname(await moveIntoLake(record.stream, file)));
      // Not needed for correctness (recovery would redo a lost rename) but keeps the lake as committed.
      for (const dir of targetDirs) await fsyncDir(dir);
      await fsyncDir(stagingDir);
    },

    async commitCompaction(record) {
      const commitsDir = paths.commitsDir(record.stream);
      await mkdirDurable(commitsDir, knownDirs);
      await replaceDurable(join(commitsDir, commitFileName(record.seq)), Buffer.from(JSON.stringify(record)));
      remember(record);
      await settleGeneration(record.stream);
    },

    async fold(minRecords = FOLD_RECORDS) {
      for (const [stream, count] of unfolded) {
        if (count === 0 || count < minRecords) continue;
        const state = stateOf(stream);
        state.nextSeq = Math.max(state.nextSeq, nextSeq.get(stream) ?? 1);
        const dir = paths.commitsDir(stream);
        const replaced = await foldConfirmations(paths, state);
        await replaceDurable(join(dir, stateFileName(state.seq)), Buffer.from(serializeState(state)));
        for (const path of replaced) await unlink(join(paths.lakeDir, ...path.split('/')));
        // The state is durable: what it folds in may go. A crash here leaves records the state already
        // covers, which the next open deletes.
        for (const name of await listDir(dir)) {
          const seq = seqOfCommitFile(name) ?? seqOfStateFile(name);
          if (
            seq !== undefined &&
            (seq < state.seq || (seq === state.seq && seqOfStateFile(name) === undefined))
          )
            await unlink(join(dir, name));
        }
        await fsyncDir(dir);
        unfolded.set(stream, 0);
      }
    },
  };

  async function rollForward(stream: string, records: CommitRecord[], report: RecoveryReport) {
    const stagingDir = paths.stagingDir(stream);
    const bySeq = new Map(records.map((r) => [r.seq, r]));
    let changed = false;
    for (const name of await listDir(stagingDir)) {
      const record = bySeq.get(seqOfStagedFile(name) ?? -1);
      const file = record && !isCompaction(record) ? record.files.find((f) => f.staged === name) : undefined;
      const path = join(stagingDir, name);
      if (!file) {
        await unlink(path);
        report.discarded.push(`_staging/${stream}/${name}`);
      } else {
        const sha256 = await sha256File(path);
        if (sha256 !== file.sha256) {
          throw new LakeCorruptError(
            `staged file of commit ${record?.seq} has sha256 ${sha256}, the commit record says ${file.sha256}; ` +
              'it was damaged after its fsync: restore it from a backup or delete the commit record to drop that flush',
            path,
          );
        }
        if (file.table === 'data') await ensureStreamDir(stream);
        const target = await moveIntoLake(stream, file);
        await fsyncDir(dirname(target));
        report.rolledForward.push(file.path);
      }
      changed = true;
    }
    if (changed) await fsyncDir(stagingDir);
  }

  /** The files the records after the state brought in must be in the lake, whole. */
  async function checkFiles(stream: string, records: CommitRecord[]) {
    const live = new Set(stateOf(stream).files.map((f) => f.path));
    for (const record of records) {
      for (const file of isCompaction(record) ? record.added : record.files) {
        if (!live.has(file.path)) continue;
        const path = join(paths.lakeDir, ...file.path.split('/'));
        const size = await stat(path).then(
          (s) => s.size,
          () => undefined,
        );
        if (size !== file.bytes) {
          throw new LakeCorruptError(
            `commit ${record.seq} of ${stream} names ${file.path} (${file.bytes} bytes) but the lake has ` +
              `${size === undefined ? 'no such file' : `${size} bytes`}; restore the file from a backup`,
            path,
          );
        }
      }
    }
  }
}

async function listDir(path: string): Promise<string[]> {
  try {
    return (await readdir(path)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  return (await kindOf(path)) !== 'missing';
}

async function kindOf(path: string): Promise<'missing' | 'link' | 'directory' | 'file'> {
  try {
    const s = await lstat(path);
    return s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'directory' : 'file';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}

async function readJson(path: string, name: string): Promise<unknown> {
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new LakeCorruptError(`${name} is not JSON`, path, { cause });
  }
}

/**
 * A stream's newest state file and the records after it, in sequence order. `tidy` (the writer, holding
 * the lock) deletes what a crash left behind: tmp files, records and states an newer state folds in.
 */
async function readStreamLog(
  paths: LakePaths,
  stream: string,
  { tidy }: { tidy: boolean },
): Promise<{ state: StreamState | undefined; records: CommitRecord[] }> {
  const dir = paths.commitsDir(stream);
  const names = await listDir(dir);
  const stateSeq = Math.max(-1, ...names.map((n) => seqOfStateFile(n) ?? -1));
  let state: StreamState | undefined;
  if (stateSeq >= 0) {
    const path = join(dir, stateFileName(stateSeq));
    const parsed = parseState(await readJson(path, stateFileName(stateSeq)));
    if ('error' in parsed)
      throw new LakeCorruptError(`${stateFileName(stateSeq)} is malformed: ${parsed.error}`, path);
    state = parsed;
  }
  const records: CommitRecord[] = [];
  for (const name of names) {
    const path = join(dir, name);
    const seq = seqOfCommitFile(name);
    if (seq === undefined) {
      const olderState = (seqOfStateFile(name) ?? stateSeq) < stateSeq;
      if (tidy && (name.includes('.tmp-') || olderState)) await unlink(path);
      continue;
    }
    if (seq <= stateSeq) {
      // Folded into the state; its deletion was interrupted.
      if (tidy) await unlink(path);
      continue;
    }
    const result = commitRecordSchema.safeParse(await readJson(path, `commit record ${name}`));
    if (!result.success)
      throw new LakeCorruptError(`commit record ${name} is malformed: ${result.error.message}`, path);
    records.push(result.data);
  }
  return { state, records: records.sort((a, b) => a.seq - b.seq) };
}

/**
 * Every stream's state as of its newest commit, read-only: no lock, no recovery, tmp files left alone.
 * Safe while a run writes (records and states appear whole by rename); a fold that deletes a file while
 * it is read makes the stream be read again.
 */
export async function readLakeState(dataDir: string): Promise<Map<string, StreamState>> {
  const paths = lakePaths(dataDir);
  const byStream = new Map<string, StreamState>();
  for (const stream of (await listDir(join(paths.lakeDir, '_commits'))).filter(isSafeSegment)) {
    for (let attempt = 1; ; attempt++) {
      try {
        const { state, records } = await readStreamLog(paths, stream, { tidy: false });
        const folded = state ?? emptyState(stream);
        for (const record of records) applyRecord(folded, record);
        if (folded.seq > 0) byStream.set(stream, folded);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw error;
      }
    }
  }
  return byStream;
}

/** The lake-relative folder of a live file's path: `<stream>/network=…[/chain=…]`. */
export const folderOf = (path: string): string => path.slice(0, path.lastIndexOf('/'));
