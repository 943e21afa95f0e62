import { damagedFileRemedy, LakeCorruptError } from './errors.ts';
import { generationName, seqOfStagedFile } from './layout.ts';
import type { RecordStore } from './records.ts';
import { type CommitRecord, filesOf, type LiveFile, type StreamState } from './state.ts';
import { baseName, folderOf, type LakeStorage, stagedPath, stagingFolder } from './storage.ts';

/**
 * Moving committed files into the lake, and putting a lake right after a crash: what the commit
 * protocol does after a record is durable, and what the next writer's open does for a writer that died.
 */

/** What recovery did, for the run log. */
export interface RecoveryReport {
  /** Staged files of committed flushes moved into the lake (lake-relative paths). */
  rolledForward: string[];
  /** Staged files no commit names (a flush that never committed), deleted. */
  discarded: string[];
}

/** A committed file waiting in staging: its place in the lake, and for a merged file what it replaces. */
export interface StagedFile {
  path: string;
  staged: string;
  replaces?: string[];
}

/**
 * Moves a committed staged file into the lake. A merged file (object storage only: a local compaction
 * builds a generation instead) is copied in before the files it replaces are deleted, and its staged
 * copy goes last: while that stands, the publish is unfinished and recovery does it again.
 */
export async function publishStaged(storage: LakeStorage, stream: string, file: StagedFile): Promise<void> {
  const staged = stagedPath(stream, file.staged);
  if (!file.replaces) return storage.move(staged, file.path);
  await storage.copy(staged, file.path);
  for (const path of file.replaces) await storage.remove(path);
  await storage.remove(staged);
}

export interface Recovery {
  /**
   * Staged files whose writer is gone: those a commit names (in its record or, once folded, among the
   * state's live files) move into the lake, the rest are deleted. A shared store's live writers keep theirs.
   */
  rollForward(stream: string, report: RecoveryReport): Promise<void>;
  /** The files the records after the state brought in must be in the lake, whole. */
  checkFiles(stream: string, records: CommitRecord[]): Promise<void>;
}

export function createRecovery(args: {
  storage: LakeStorage;
  store: RecordStore;
  stateOf: (stream: string) => StreamState;
  /** Makes the stream's folder (a local lake's generation link) before a data file moves in. */
  ensureStreamDir: (stream: string) => Promise<void>;
}): Recovery {
  const { storage, store, stateOf, ensureStreamDir } = args;
  return {
    async rollForward(stream: string, report: RecoveryReport) {
      const names = await storage.list(stagingFolder(stream));
      if (names.length === 0) return;
      const { gone, fenced } = await store.abandoned(
        stream,
        names.map((n) => seqOfStagedFile(n)).filter((seq): seq is number => seq !== undefined),
      );
      const committed = committedStagedFiles(stateOf(stream));
      let changed = false;
      for (const name of names) {
        const seq = seqOfStagedFile(name);
        if (seq !== undefined && !gone.has(seq)) continue;
        const file = committed.get(name);
        const path = stagedPath(stream, name);
        // Committed after this state was read (by a writer gone since): a later open rolls it forward.
        if (!file && seq !== undefined && !fenced.has(seq)) continue;
        if (!file) {
          await storage.remove(path);
          report.discarded.push(path);
        } else {
          const sha256 = await storage.sha256(path);
          if (sha256 !== file.sha256) {
            throw new LakeCorruptError(
              `staged file of commit ${seq} has sha256 ${sha256}, the commit record says ${file.sha256}; ` +
                'it was damaged after its fsync: restore it from a backup or delete the commit record to drop that flush',
              `${storage.where}/${path}`,
            );
          }
          if (file.table === 'data') await ensureStreamDir(stream);
          await publishStaged(storage, stream, { ...file, staged: name });
          await storage.sync(folderOf(file.path));
          report.rolledForward.push(file.path);
        }
        changed = true;
      }
      if (changed) await storage.sync(stagingFolder(stream));
    },

    async checkFiles(stream: string, records: CommitRecord[]) {
      const live = new Set(stateOf(stream).files.map((f) => f.path));
      const remedy = damagedFileRemedy({ catalog: store.shared, bucket: storage.remote });
      for (const record of records) {
        for (const file of filesOf(record)) {
          if (!live.has(file.path)) continue;
          const size = await committedFileSize(storage, stream, file);
          if (size !== 'in place' && size !== 'staged') {
            throw new LakeCorruptError(
              `commit ${record.seq} of ${stream} names ${file.path} (${file.bytes} bytes) but the lake has ` +
                (size === undefined
                  ? `no such file; if ${storage.where} is not the lake this commit log keeps (a mistyped ` +
                    `--data-dir, or the catalog of another lake), name the right one; else ${remedy}`
                  : `${size} bytes; ${remedy}`),
              `${storage.where}/${file.path}`,
            );
          }
        }
      }
    },
  };
}

/**
 * The staging name of each live file a commit made: a data file `…/part-<seq>-<n>.parquet` (a flush's,
 * or a merged one on object storage) was staged as `part-<seq>-<n>.parquet`, a rejects file as
 * `rejects-<seq>-<n>.parquet`. Sequence numbers are unique per stream, so the names are too.
 */
function committedStagedFiles(state: StreamState): Map<string, LiveFile> {
  const byName = new Map<string, LiveFile>();
  for (const file of state.files) {
    if (file.table === 'confirmations') continue;
    const base = baseName(file.path);
    byName.set(file.table === 'data' ? base : base.replace(/^part-/, 'rejects-'), file);
  }
  return byName;
}

type CommittedFile = { path: string; bytes: number; staged?: string };

/**
 * Where a committed file stands against the size its commit records: in place; still in staging (a
 * writer of a shared catalog, alive or not yet known dead, committed it and has not moved it in: it
 * waits for that writer, or for the recovery after its lease lapses); whole in the generation of
 * folders the stream's state names (`generation`, given by those who read without recovering first:
 * a compaction committed and its writer died before it moved the stream's link, which the next open
 * moves); or the size found in its place, undefined when there is none (deleted or cut short by hand,
 * a restore gone wrong, another lake). Recovery, compaction, `status` and `repair` judge a lake's files
 * by this one rule.
 */
export async function committedFileSize(
  storage: LakeStorage,
  stream: string,
  file: CommittedFile,
): Promise<'in place' | 'staged' | number | undefined>;
export async function committedFileSize(
  storage: LakeStorage,
  stream: string,
  file: CommittedFile,
  generation: number,
): Promise<'in place' | 'staged' | 'unsettled' | number | undefined>;
export async function committedFileSize(
  storage: LakeStorage,
  stream: string,
  file: CommittedFile,
  generation?: number,
): Promise<'in place' | 'staged' | 'unsettled' | number | undefined> {
  const size = await storage.size(file.path);
  if (size === file.bytes) return 'in place';
  if (size !== undefined) return size;
  const staged = await storage.size(stagedPath(stream, file.staged ?? baseName(file.path)));
  if (staged !== undefined) return 'staged';
  if (generation === undefined || !file.path.startsWith(`${stream}/`)) return undefined;
  const inGeneration = `_generations/${stream}/${generationName(generation)}/${file.path.slice(stream.length + 1)}`;
  return (await storage.size(inGeneration)) === file.bytes ? 'unsettled' : undefined;
}
