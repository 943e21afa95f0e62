import { readdir, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import {
  eachLimited,
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
        if (attempt >= ATTEMPTS || !(error instanceof StorageUnavailableError) || !error.missing) throw error;
      }
    }
  } finally {
    storage.close();
  }
}

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
    const { path, stream } = wanted[i] as LiveFile & { stream: string };
    const local = join(lakeDir, ...path.split('/'));
    await mkdirDurable(dirname(local));
    await rm(local, { force: true });
    await storage.download(path, local).catch(async (error) => {
      // Committed a moment ago and not yet copied into place: its staged copy goes only after the copy.
      if (!(error instanceof StorageUnavailableError && error.missing)) throw error;
      await storage.download(stagedPath(stream, path.slice(path.lastIndexOf('/') + 1)), local);
    });
  });
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
