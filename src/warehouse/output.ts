import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { WAREHOUSE_FILE } from './paths.ts';
import { WarehouseUsageError } from './usage-error.ts';

/** What an errno code means, in words, for a message that names the path it happened on. */
const REASONS: Readonly<Record<string, string>> = {
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'part of the path is a file, not a folder',
  EISDIR: 'it is a folder',
  ENOENT: 'no such folder',
  EEXIST: 'it exists',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
  EFBIG: 'a file outgrew the size this process may write (see ulimit -f)',
  EIO: 'the device failed to read or write',
};

/** Codes that a different path or the path's permissions fix: the caller's to change (exit 2). */
const USER_FIXABLE = new Set(['EROFS', 'EACCES', 'EPERM', 'ENOTDIR', 'EISDIR', 'ENOENT', 'EEXIST']);

/** `the file system is read-only (EROFS)`: an errno error's reason, without the paths it names. */
export function errnoReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return REASONS[code] ? `${REASONS[code]} (${code})` : (error as Error).message;
}

/**
 * A device that cannot take more, or failed (full, over quota, a file size limit, EIO): its errno code,
 * as an errno error carries it or as DuckDB words it (DuckDB gives no code). Undefined for any other
 * error. What was written before stays; the next run continues once the device has room.
 */
export function deviceFailureCode(error: unknown): string | undefined {
  const errno = (error as NodeJS.ErrnoException).code;
  if (DEVICE_WORDS.some(([, code]) => code === errno)) return errno;
  const message = (error as Error).message ?? '';
  return DEVICE_WORDS.find(([words]) => words.test(message))?.[1];
}

const DEVICE_WORDS: readonly [RegExp, string][] = [
  [/No space left on device/i, 'ENOSPC'],
  [/Disk quota exceeded/i, 'EDQUOT'],
  [/File too large/i, 'EFBIG'],
  [/Input\/output error/i, 'EIO'],
];

/** Whether an errno error is one a different path or its permissions would fix. */
export const isUserFixable = (error: unknown): boolean =>
  USER_FIXABLE.has((error as NodeJS.ErrnoException).code ?? '');

/**
 * An error writing `out` (the value of `flag`) as one line that names the flag and not the temporary
 * file it happened on: a WarehouseUsageError (exit 2) when another path would fix it, else a failure.
 */
export function outputError(flag: string, out: string, error: unknown, failed = 'cannot write it'): Error {
  // ENOENT once the folders exist: a file system that makes no files there, such as /proc.
  const reason =
    (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? 'the file system makes none there (ENOENT)'
      : errnoReason(error);
  const message = `${flag} ${out}: ${failed}: ${reason}`;
  return isUserFixable(error)
    ? new WarehouseUsageError(`${message}; choose another ${flag}`, { cause: error })
    : new Error(message, { cause: error });
}

/**
 * Checks before any work that `out` (the value of `flag`) can be written as a file: not empty, not a
 * folder (unless `folder`: a partitioned export writes one), not one of the data directory's own files
 * (`dataDir`: see ownFileError), in a folder that exists (or, with `createFolders`, below one) that we
 * may write in. WarehouseUsageError otherwise, naming `flag`.
 */
export async function checkOutput(
  flag: string,
  out: string,
  options: { createFolders?: boolean; folder?: boolean; dataDir?: string } = {},
): Promise<void> {
  if (out.trim() === '') throw new WarehouseUsageError(`${flag} is empty: name the file to write`);
  const path = resolve(out);
  const own = options.dataDir === undefined ? undefined : await ownFileError(flag, out, options.dataDir);
  if (own) throw new WarehouseUsageError(own);
  if (!options.folder && (await stat(path).catch(() => undefined))?.isDirectory())
    throw new WarehouseUsageError(`${flag} ${out} is a folder; name a file in it`);
  // The nearest ancestor that exists: it must be a folder we can write in.
  let at = dirname(path);
  let missing: string | undefined;
  for (;;) {
    const info = await stat(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      throw new WarehouseUsageError(`${flag} ${out}: cannot reach ${at}: ${errnoReason(error)}`);
    });
    if (info?.isDirectory()) break;
    if (info)
      throw new WarehouseUsageError(`${flag} ${out}: ${at} is a file, not a folder; choose another ${flag}`);
    missing = at;
    if (dirname(at) === at) break;
    at = dirname(at);
  }
  if (missing !== undefined && !options.createFolders)
    throw new WarehouseUsageError(
      `${flag} ${out}: the folder ${dirname(path)} does not exist; create it first or choose another ${flag}`,
    );
  try {
    await access(at, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new WarehouseUsageError(
      `${flag} ${out}: cannot write in ${at}: ${errnoReason(error)}; choose another ${flag} or make it writable`,
    );
  }
}

/**
 * Why `out` must not be written: it is inside the data directory's lake (whose files only commits
 * write: one overwritten is lost until a full refresh, and builds fail on it), or the warehouse or a
 * file beside it that builds keep (`.previous`, `.lock`, `.wal`). Followed through symlinks, since the
 * lake's stream folders are links. Undefined for any other path.
 */
async function ownFileError(flag: string, out: string, dataDir: string): Promise<string | undefined> {
  const target = await realPathOf(resolve(out));
  const lake = await realPathOf(resolve(dataDir, 'lake'));
  if (target === lake || target.startsWith(lake + sep))
    return `${flag} ${out} is inside the lake (${lake}), whose files only avalake's commits write; choose a path outside ${lake}`;
  if (dirname(target) === (await realPathOf(resolve(dataDir))) && basename(target).startsWith(WAREHOUSE_FILE))
    return `${flag} ${out} is the warehouse's own file (${basename(target)}); choose another ${flag}`;
  return undefined;
}

/** `path` with every symlink of the part that exists followed; the part that does not kept as named. */
async function realPathOf(path: string): Promise<string> {
  const rest: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    const real = await realpath(at).catch(() => undefined);
    if (real !== undefined) return join(real, ...rest);
    if (dirname(at) === at) return path;
    rest.unshift(basename(at));
  }
}

/**
 * Writes `content` to `out` aside, then renames it into place, so a reader never sees half a file;
 * missing folders are made one at a time (Note: node's recursive mkdir loops forever on a path that
 * cannot be made, such as one under /proc). Errors name `flag` and `out`, never the temporary file.
 */
export async function writeOutput(flag: string, out: string, content: string): Promise<string> {
  const path = resolve(out);
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await makeFolders(dirname(path)).catch((error: NodeJS.ErrnoException) => {
    throw outputError(flag, out, error, `cannot create the folder ${error.path ?? dirname(path)}`);
  });
  try {
    await writeFile(temporary, content);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw outputError(flag, out, error);
  }
  return path;
}

async function makeFolders(folder: string): Promise<void> {
  if ((await stat(folder).catch(() => undefined))?.isDirectory()) return;
  if (dirname(folder) !== folder) await makeFolders(dirname(folder));
  // Another process may make it meanwhile (two reports at once): that is as good.
  await mkdir(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
}
