import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { openCatalog } from './catalog.ts';
import { createCommitLog } from './commit.ts';
import { markCatalogLake } from './commit-log-kind.ts';
import { fsyncDir } from './durable.ts';
import { lakePaths } from './layout.ts';
import { acquireLock } from './lock.ts';

/**
 * One box, then several: a local lake's commit log (`lake/_commits/`) moved into a PostgreSQL catalog,
 * so workers on this machine and others (on a shared disk) go on from where the box stood, without
 * reading a year of history again. Under the data directory's lock: recovery (staged files moved in
 * or removed), every stream folded to one state, the states adopted by the catalog in one transaction
 * (their partitions' heads, the sequence past every seq used), then the lake marked as the catalog's
 * (`lake/_catalog`) and its old log kept aside as `lake/_commits-imported/`. Run again after a crash at
 * any step, it finishes: the catalog takes the very same states again without complaint.
 */

export interface CatalogImport {
  streams: { stream: string; partitions: number; files: number }[];
}

/** Where a local lake's old commit log is kept once its catalog took over. */
export const IMPORTED_LOG = '_commits-imported';

export async function importIntoCatalog(dataDir: string, catalogUrl: string): Promise<CatalogImport> {
  const paths = lakePaths(dataDir);
  const lock = await acquireLock(paths.lockFile);
  try {
    const log = createCommitLog(paths);
    await log.open();
    await log.fold(1);
    const states = log.streams().flatMap((stream) => log.state(stream) ?? []);
    const catalog = await openCatalog(catalogUrl);
    try {
      await catalog.adopt(states);
    } finally {
      await catalog.close();
    }
    await markCatalogLake(paths.lakeDir);
    await rename(join(paths.lakeDir, '_commits'), join(paths.lakeDir, IMPORTED_LOG));
    await fsyncDir(paths.lakeDir);
    return {
      streams: states.map((s) => ({
        stream: s.stream,
        partitions: s.partitions.size,
        files: s.files.length,
      })),
    };
  } finally {
    await lock.release();
  }
}
