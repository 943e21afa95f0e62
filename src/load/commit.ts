import { readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { fsyncDir, mkdirDurable, replaceDurable, sha256File } from './durable.ts';
import { LakeCorruptError } from './errors.ts';
import {
  commitFileName,
  type FileTable,
  isSafeSegment,
  type LakePaths,
  lakePaths,
  type Partition,
  partitionId,
  seqOfCommitFile,
  seqOfStagedFile,
} from './layout.ts';

/**
 * The commit protocol (DESIGN.md): staged files are fsynced, then ONE commit record names them with the
 * checkpoint after them (tmp + fsync + rename + fsync dir), then the files move into the lake. The commit
 * record's rename is the instant of commit: before it the flush never happened, after it the flush is
 * complete even if the files still sit in staging, because recovery moves them.
 */

/** Where a stream's reading stands after a commit (page token, cursor, …): opaque JSON to the load layer. */
export type Checkpoint = Readonly<Record<string, unknown>>;

const committedFileSchema = z.object({
  /** Final path relative to the lake directory, `/`-separated. */
  path: z.string(),
  /** File name in the stream's staging folder. */
  staged: z.string(),
  table: z.enum(['data', 'rejects']),
  rows: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

const commitRecordSchema = z.object({
  format: z.literal(1),
  stream: z.string(),
  seq: z.number().int().positive(),
  partition: z.record(z.string(), z.string()),
  runId: z.string(),
  committedAt: z.string(),
  files: z.array(committedFileSchema),
  /** null: this commit did not move the checkpoint and there was none before (e.g. rejects only). */
  checkpoint: z.record(z.string(), z.unknown()).nullable(),
});

export type CommittedFile = z.infer<typeof committedFileSchema> & { table: FileTable };
export type CommitRecord = z.infer<typeof commitRecordSchema>;

/** What recovery did, for the run log. */
export interface RecoveryReport {
  /** Staged files of committed flushes moved into the lake (lake-relative paths). */
  rolledForward: string[];
  /** Staged files no commit names (a flush that never committed), deleted. */
  discarded: string[];
}

export interface CommitLog {
  /** Recovers every stream and loads the commit index. Call once, holding the data directory's lock. */
  open(): Promise<RecoveryReport>;
  /** Reserves the next commit sequence number of a stream; numbers only grow, gaps are allowed. */
  allocateSeq(stream: string): number;
  /** The newest commit of a partition: its checkpoint is the partition's checkpoint. */
  latest(stream: string, partition: Partition): CommitRecord | undefined;
  /** Commits files already written and fsynced in the stream's staging folder, then moves them. */
  commit(record: CommitRecord): Promise<void>;
}

export function createCommitLog(paths: LakePaths): CommitLog {
  const latestByStream = new Map<string, Map<string, CommitRecord>>();
  const nextSeq = new Map<string, number>();
  const knownDirs = new Set<string>();

  const remember = (record: CommitRecord) => {
    const byPartition = latestByStream.get(record.stream) ?? new Map<string, CommitRecord>();
    latestByStream.set(record.stream, byPartition);
    const id = partitionId(record.partition);
    const previous = byPartition.get(id);
    if (!previous || previous.seq < record.seq) byPartition.set(id, record);
    nextSeq.set(record.stream, Math.max(nextSeq.get(record.stream) ?? 1, record.seq + 1));
  };

  const moveIntoLake = async (stream: string, file: CommittedFile) => {
    const target = join(paths.lakeDir, ...file.path.split('/'));
    await mkdirDurable(dirname(target), knownDirs);
    await rename(join(paths.stagingDir(stream), file.staged), target);
    return target;
  };

  return {
    async open() {
      const report: RecoveryReport = { rolledForward: [], discarded: [] };
      const streams = new Set(
        [
          ...(await listDir(join(paths.lakeDir, '_commits'))),
          ...(await listDir(join(paths.lakeDir, '_staging'))),
        ]
          // Stray entries (.DS_Store, editor files) are not streams.
          .filter(isSafeSegment),
      );
      for (const stream of streams) {
        const records = await readCommits(paths.commitsDir(stream));
        for (const record of records) remember(record);
        await rollForward(stream, records, report);
        await checkNewestFiles(stream);
      }
      return report;
    },

    allocateSeq(stream) {
      const seq = nextSeq.get(stream) ?? 1;
      nextSeq.set(stream, seq + 1);
      return seq;
    },

    latest(stream, partition) {
      return latestByStream.get(stream)?.get(partitionId(partition));
    },

    async commit(record) {
      const stagingDir = paths.stagingDir(record.stream);
      const commitsDir = paths.commitsDir(record.stream);
      // The staged files' names must be durable before a commit record can point at them.
      if (record.files.length > 0) await fsyncDir(stagingDir);
      await mkdirDurable(commitsDir, knownDirs);
      await replaceDurable(join(commitsDir, commitFileName(record.seq)), Buffer.from(JSON.stringify(record)));
      remember(record);
      const targetDirs = new Set<string>();
      for (const file of record.files) targetDirs.add(dirname(await moveIntoLake(record.stream, file)));
      // Not needed for correctness (recovery would redo a lost rename) but keeps the lake as committed.
      for (const dir of targetDirs) await fsyncDir(dir);
      if (record.files.length > 0) await fsyncDir(stagingDir);
    },
  };

  async function rollForward(stream: string, records: CommitRecord[], report: RecoveryReport) {
    const stagingDir = paths.stagingDir(stream);
    const bySeq = new Map(records.map((r) => [r.seq, r]));
    let changed = false;
    for (const name of await listDir(stagingDir)) {
      const record = bySeq.get(seqOfStagedFile(name) ?? -1);
      const file = record?.files.find((f) => f.staged === name);
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
        const target = await moveIntoLake(stream, file);
        await fsyncDir(dirname(target));
        report.rolledForward.push(file.path);
      }
      changed = true;
    }
    if (changed) await fsyncDir(stagingDir);
  }

  async function checkNewestFiles(stream: string) {
    for (const record of latestByStream.get(stream)?.values() ?? []) {
      for (const file of record.files) {
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

/** Reads a stream's commit records in sequence order; leftover tmp files of an unfinished write go away. */
async function readCommits(dir: string): Promise<CommitRecord[]> {
  const records: CommitRecord[] = [];
  for (const name of await listDir(dir)) {
    const path = join(dir, name);
    if (seqOfCommitFile(name) === undefined) {
      if (name.includes('.tmp-')) await unlink(path);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(path, 'utf8'));
    } catch (cause) {
      throw new LakeCorruptError(`commit record ${name} is not JSON`, path, { cause });
    }
    const result = commitRecordSchema.safeParse(parsed);
    if (!result.success) {
      throw new LakeCorruptError(`commit record ${name} is malformed: ${result.error.message}`, path);
    }
    records.push(result.data);
  }
  return records.sort((a, b) => a.seq - b.seq);
}

/**
 * Every commit record of a data directory by stream, in sequence order, read-only: no lock, no recovery,
 * tmp files left alone. Safe while a run writes, since a record appears whole by rename (`avalake status`).
 */
export async function readCommitLog(dataDir: string): Promise<Map<string, CommitRecord[]>> {
  const paths = lakePaths(dataDir);
  const byStream = new Map<string, CommitRecord[]>();
  for (const stream of (await listDir(join(paths.lakeDir, '_commits'))).filter(isSafeSegment)) {
    const dir = paths.commitsDir(stream);
    const records: CommitRecord[] = [];
    for (const name of await listDir(dir)) {
      if (seqOfCommitFile(name) === undefined) continue;
      const path = join(dir, name);
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (cause) {
        throw new LakeCorruptError(`commit record ${name} is not JSON`, path, { cause });
      }
      const result = commitRecordSchema.safeParse(parsed);
      if (!result.success)
        throw new LakeCorruptError(`commit record ${name} is malformed: ${result.error.message}`, path);
      records.push(result.data);
    }
    if (records.length > 0)
      byStream.set(
        stream,
        records.sort((a, b) => a.seq - b.seq),
      );
  }
  return byStream;
}
