import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir, mkdirDurable, replaceDurable } from './durable.ts';
import { LakeCorruptError } from './errors.ts';
import {
  commitFileName,
  isSafeSegment,
  type LakePaths,
  seqOfCommitFile,
  seqOfStateFile,
  stateFileName,
} from './layout.ts';
import type { RecordStore, StreamLog } from './records.ts';
import {
  type CommitRecord,
  parseCommitRecord,
  parseState,
  type StreamState,
  serializeState,
} from './state.ts';

/**
 * Commit records as files beside the lake: `_commits/<stream>/<seq>.json`, each written durably (tmp +
 * fsync + rename + fsync dir), and the folded `state-<seq>.json`. One writer at a time (the data
 * directory's lock), so records apply in sequence order and the writer numbers them itself.
 */
export function fileRecordStore(paths: LakePaths): RecordStore {
  const knownDirs = new Set<string>();
  return {
    name: 'files',
    streams: async () => (await listDir(join(paths.lakeDir, '_commits'))).filter(isSafeSegment),
    loadStream: (stream, options) => readStreamLog(paths, stream, options),
    allocateSeq: async () => undefined,
    shared: false,
    abandoned: async (_stream, seqs) => ({ gone: new Set(seqs), fenced: new Set(seqs) }),
    withStream: (_stream, _mode, body) => body(),

    async append(record) {
      const dir = paths.commitsDir(record.stream);
      await mkdirDurable(dir, knownDirs);
      await replaceDurable(join(dir, commitFileName(record.seq)), Buffer.from(JSON.stringify(record)));
    },

    async writeState(state) {
      const dir = paths.commitsDir(state.stream);
      await mkdirDurable(dir, knownDirs);
      await replaceDurable(join(dir, stateFileName(state.seq)), Buffer.from(serializeState(state)));
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
    },

    close: async () => {},
  };
}

export async function listDir(path: string): Promise<string[]> {
  try {
    return (await readdir(path)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function readJson(path: string, what: string): Promise<unknown> {
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new LakeCorruptError(`${what} is not JSON; restore it from a backup`, path, { cause });
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
): Promise<StreamLog> {
  const dir = paths.commitsDir(stream);
  const names = await listDir(dir);
  const stateSeq = Math.max(-1, ...names.map((n) => seqOfStateFile(n) ?? -1));
  let state: StreamState | undefined;
  if (stateSeq >= 0) {
    const path = join(dir, stateFileName(stateSeq));
    const what = `commit log state ${path}`;
    state = parseState(await readJson(path, what), what, path);
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
    const what = `commit record ${path}`;
    records.push(parseCommitRecord(await readJson(path, what), what, path));
  }
  return { state, records: records.sort((a, b) => a.seq - b.seq) };
}
