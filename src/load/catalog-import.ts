import { copyFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { CatalogImportError, openCatalog } from './catalog.ts';
import { createCommitLog } from './commit.ts';
import { markCatalogLake, markMovedLake } from './commit-log-kind.ts';
import { fsyncDir } from './durable.ts';
import { fileRecordStore } from './file-records.ts';
import { openLakeStorage, storageWhileHeld, whileHeld } from './lake.ts';
import { checkLakeIdentity, markLakeIdentity } from './lake-identity.ts';
import { lakePaths } from './layout.ts';
import { acquireLock } from './lock.ts';
import type { StreamState } from './state.ts';
import { diskStorage, type LakeStorage } from './storage.ts';

/**
 * One box, then several: a local lake's commit log (`lake/_commits/`) moved into a PostgreSQL catalog,
 * so workers on this machine and others (on a shared disk) go on from where the box stood, without
 * reading a year of history again. Under the data directory's lock: recovery (staged files moved in
 * or removed), every stream folded to one state, the states adopted by the catalog in one transaction
 * (their partitions' heads, the sequence past every seq used), then the lake marked as the catalog's
 * (`lake/_catalog`) and its old log kept aside as `lake/_commits-imported/`. Run again after a crash at
 * any step, it finishes: the catalog takes the very same states again without complaint. A catalog that
 * cannot be reached, or that holds one of the streams as something else, stops the import before
 * anything moves.
 *
 * `to` (`s3://bucket/prefix`): the lake moves to object storage as well. Once the catalog has been
 * checked, every file the states name is uploaded to the same place under the prefix before the
 * catalog adopts them (one already there, the same file by its sha256, is not sent again; another file
 * there refuses the move), and the local lake is marked as moved (`lake/_moved`), so no command opens
 * it any more.
 */

export interface CatalogImport {
  streams: { stream: string; partitions: number; files: number }[];
  /** With `to`: the files uploaded (those already there not counted). */
  uploaded?: number;
}

/** Where a local lake's old commit log is kept once its catalog took over. */
export const IMPORTED_LOG = '_commits-imported';

export async function importIntoCatalog(
  dataDir: string,
  catalogUrl: string,
  { to }: { to?: string } = {},
): Promise<CatalogImport> {
  const paths = lakePaths(dataDir);
  const lock = await acquireLock(paths.lockFile);
  try {
    // Written only while the lock is still this import's, as every writer of the local log (lake.ts).
    const log = createCommitLog(
      paths,
      whileHeld(fileRecordStore(paths), lock),
      storageWhileHeld(diskStorage(paths.lakeDir), lock),
    );
    await log.open();
    await log.fold(1);
    const states = log.streams().flatMap((stream) => log.state(stream) ?? []);
    // The catalog first: one that cannot be reached, or that would refuse the streams, stops the move
    // before a byte of the lake (gigabytes, a year in) is uploaded. A catalog holding these very states
    // is an import run again after a crash, which goes on to finish it.
    let uploaded: number | undefined;
    const catalog = await openCatalog(catalogUrl);
    try {
      await catalog.checkAdoption(states);
      // The lake the catalog is to keep, the box's or the bucket prefix it moves to: one the catalog
      // does not keep is refused here, before anything is sent; it is marked as the catalog's once its
      // files are there.
      const storage = to === undefined ? diskStorage(paths.lakeDir) : await openLakeStorage(to);
      try {
        const marked = await checkLakeIdentity(catalog, storage);
        if (to !== undefined) uploaded = await upload(paths.lakeDir, states, storage, to);
        if (!marked) await markLakeIdentity(catalog, storage);
      } finally {
        storage.close();
      }
      // Checked again as it takes the streams: another import may have taken them since. And the lock
      // once more: a run that took it over while this import was paused may have committed beside it.
      lock.assertHeld();
      await catalog.adopt(states);
    } finally {
      await catalog.close();
    }
    if (to === undefined) await markCatalogLake(paths.lakeDir);
    else await markMovedLake(paths.lakeDir, to);
    await rename(join(paths.lakeDir, '_commits'), join(paths.lakeDir, IMPORTED_LOG));
    await fsyncDir(paths.lakeDir);
    return {
      streams: states.map((s) => ({
        stream: s.stream,
        partitions: s.partitions.size,
        files: s.files.length,
      })),
      ...(uploaded !== undefined ? { uploaded } : {}),
    };
  } finally {
    await lock.release();
  }
}

/**
 * Uploads every file the states name to the object-storage lake `to`; returns how many were sent. An
 * object already at a file's path is kept only when it is that very file, by size and sha256 (the
 * import run again after a crash). Any other object there (a lake that was at that prefix before)
 * refuses the move before anything is uploaded: no object is replaced, and the catalog adopts nothing.
 */
async function upload(
  lakeDir: string,
  states: readonly StreamState[],
  remote: LakeStorage,
  to: string,
): Promise<number> {
  const files = states.flatMap((state) => state.files);
  const uploaded = new Set<string>();
  for (const file of files) {
    const size = await remote.size(file.path);
    if (size === undefined) continue;
    if (size !== file.bytes || (await remote.sha256(file.path)) !== file.sha256)
      throw new CatalogImportError(
        `--to ${to}: the lake's file ${file.path} is there already with other content (another lake at that prefix?); nothing was moved. Choose an empty prefix, or remove what is there`,
      );
    uploaded.add(file.path);
  }
  let sent = 0;
  for (const file of files) {
    if (uploaded.has(file.path)) continue;
    await remote.writeFrom(file.path, (local) => copyFile(join(lakeDir, ...file.path.split('/')), local));
    sent++;
  }
  return sent;
}
