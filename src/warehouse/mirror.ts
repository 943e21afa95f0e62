import { readdir, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import {
  baseName,
  eachLimited,
  LakeFileDamagedError,
  type LakeStorage,
  type LiveFile,
  mkdirDurable,
  openLakeStorage,
  parseObjectStorageUrl,
  readLakeState,
  StorageUnavailableError,
  type StreamState,
  stagedPath,
} from '../load/index.ts';
import type { LakeSources } from './lake-sources.ts';

/**
 * A lake on object storage is built from a local mirror of its committed files: DuckDB here has no
 * httpfs (extensions are never downloaded), and a build reads some files several times. The commit log
 * names every live file with its size, and files are immutable under unique names, so a file already
 * mirrored at its size is current; only new files are downloaded, and files the lake no longer holds
 * (merged away) are deleted, so the mirror stays the size of the lake.
 *
 * The mirror lives under the local directory, `mirror/<bucket>/<prefix>/lake/`, laid out as the lake.
 */

/** Downloads in flight at once. */
const DOWNLOADS = 8;
/** A compaction may delete a file between reading the commit log and downloading it: read both again. */
const ATTEMPTS = 3;
/** A mirror's lake is always a bucket's, with its commit log in a catalog: how its damage is put right. */
const BUCKET_LAKE = { catalog: true, bucket: true };

/** The files a build reads: data files and the confirmations of unchanged snapshots. */
const mirrored = (state: StreamState): LiveFile[] => state.files.filter((f) => f.table !== 'rejects');

export async function mirrorLake(dataDir: string, catalog: string, localDir: string): Promise<LakeSources> {
  const location = parseObjectStorageUrl(dataDir);
  if (!location) throw new Error(`not an object-storage lake: ${dataDir}`);
  const lakeDir = join(
    localDir,
    'mirror',
    location.bucket,
    ...location.prefix.split('/').filter(Boolean),
    'lake',
  );
  const storage = await openLakeStorage(dataDir);
  try {
    for (let attempt = 1; ; attempt++) {
      const streams = await readLakeState(dataDir, catalog, { storage });
      try {
        await download(storage, streams, lakeDir);
        await removeOthers(streams, lakeDir);
        return { lakeDir, streams };
      } catch (error) {
        if (attempt >= ATTEMPTS || !isMissing(error)) throw error;
      }
    }
  } finally {
    storage.close();
  }
}

/**
 * A file not found where the commit log read a moment ago put it: merged away by a compaction since (the
 * log read again no longer names it), or, when it does, deleted from the bucket (LakeFileDamagedError).
 */
const isMissing = (error: unknown) =>
  (error instanceof StorageUnavailableError && error.missing) ||
  (error instanceof LakeFileDamagedError && error.found === undefined);

async function download(storage: LakeStorage, streams: Map<string, StreamState>, lakeDir: string) {
  const wanted: (LiveFile & { stream: string })[] = [];
  for (const [stream, state] of streams)
    for (const file of mirrored(state)) {
      const local = join(lakeDir, ...file.path.split('/'));
      const size = await stat(local).then(
        (s) => s.size,
        () => undefined,
      );
      if (size !== file.bytes) wanted.push({ ...file, stream });
    }
  await eachLimited(wanted.length, DOWNLOADS, async (i) => {
    const file = wanted[i] as LiveFile & { stream: string };
    const local = join(lakeDir, ...file.path.split('/'));
    await mkdirDurable(dirname(local));
    await rm(local, { force: true });
    await downloadCommitted(storage, file, local);
    await expectCommittedSize(file, local);
  });
}

/**
 * Downloads a committed file from its place, or from staging: committed a moment ago and not yet copied
 * into place (its staged copy goes only after the copy). In neither place, it is named as missing.
 */
async function downloadCommitted(storage: LakeStorage, file: LiveFile & { stream: string }, local: string) {
  const inPlace = await storage.download(file.path, local).then(
    () => true,
    (error) => {
      if (error instanceof StorageUnavailableError && error.missing) return false;
      throw error;
    },
  );
  if (inPlace) return;
  await storage.download(stagedPath(file.stream, baseName(file.path)), local).catch((error) => {
    if (!(error instanceof StorageUnavailableError && error.missing)) throw error;
    throw new LakeFileDamagedError(file.stream, file.path, file, undefined, BUCKET_LAKE);
  });
}

/**
 * Objects are never rewritten, so one of another size than its commit records was replaced by hand (cut
 * short, a restore gone wrong): named here, and not left in the mirror, rather than read by DuckDB.
 */
async function expectCommittedSize(file: LiveFile & { stream: string }, local: string) {
  const { size } = await stat(local);
  if (size === file.bytes) return;
  await rm(local, { force: true });
  throw new LakeFileDamagedError(file.stream, file.path, file, size, BUCKET_LAKE);
}

/** Deletes mirrored files the lake no longer names (merged away), and partial downloads. */
async function removeOthers(streams: Map<string, StreamState>, lakeDir: string) {
  const live = new Set([...streams.values()].flatMap((s) => mirrored(s).map((f) => f.path)));
  const entries = await readdir(lakeDir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = relative(lakeDir, join(entry.parentPath, entry.name)).split(sep).join('/');
    if (!live.has(path)) await rm(join(lakeDir, path), { force: true });
  }
}
