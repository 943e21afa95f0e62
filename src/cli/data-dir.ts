import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isObjectStorage } from '../load/storage.ts';
import { errnoReason } from '../warehouse/output.ts';

/** `--data-dir`, else AVALAKE_DATA_DIR, else `data`: flags win over the environment, as everywhere. */
export function dataDirOf(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return flag ?? (env.AVALAKE_DATA_DIR || 'data');
}

/**
 * Where the warehouse is, for the commands that only read it (sql, export, report, docs): the data
 * directory; when AVALAKE_DATA_DIR names a lake on object storage (set for the workers), the local
 * directory that holds its warehouse. A bucket given as --data-dir is left for them to explain.
 */
export function warehouseDirOf(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const dataDir = dataDirOf(flag, env);
  return flag === undefined && isObjectStorage(dataDir) ? env.AVALAKE_LOCAL_DIR || 'data' : dataDir;
}

/**
 * Why a local data directory cannot be built from or compacted: it is not a directory, or holds no lake
 * (a mistyped --data-dir would otherwise be created, with an empty warehouse in it). Undefined when it
 * can; a lake on object storage is the catalog's to describe.
 */
export async function noLakeIn(dataDir: string): Promise<string | undefined> {
  if (isObjectStorage(dataDir)) return undefined;
  const info = await stat(dataDir).catch(() => undefined);
  if (info && !info.isDirectory())
    return `${dataDir} is not a directory; name the data directory with --data-dir`;
  if (!(await stat(join(dataDir, 'lake')).catch(() => undefined))?.isDirectory())
    return (
      `nothing extracted yet into ${dataDir}: no lake there. Run "avalake extract [pipeline] --data-dir ${dataDir}" ` +
      'first, or name the data directory with --data-dir'
    );
  return undefined;
}

/**
 * A directory we may not write in (read-only file system, permissions) as one line naming its flag, or
 * undefined for any other error.
 */
export function unwritable(flag: string, dir: string, error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'EROFS' && code !== 'EACCES' && code !== 'EPERM') return undefined;
  return `${flag} ${dir}: cannot write in it: ${errnoReason(error)}; choose another ${flag} or make it writable`;
}
