import { constants } from 'node:fs';
import { copyFile, link, rename, stat, unlink } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { type DuckDBDatabase, openDuckDB } from './duckdb.ts';

/**
 * The warehouse's previous generation, kept beside it: where the next build starts.
 *
 * A build writes a file aside and renames it over the warehouse, so that readers never see half a
 * build. Starting that file as a copy of the warehouse rewrote (and fsynced) every byte of it on every
 * run, a cost that grows with the warehouse however little changed; a copy-on-write clone avoids it,
 * but ext4 and most file systems cron runs on have none. So the file the swap replaces is kept
 * (hard-linked before the rename), and the next build brings it up to date instead: its incremental
 * models read the lake files of the last two builds rather than one, everything else is rebuilt as
 * always, and only what changed is written.
 *
 * The previous generation is used only when no one has it open: a reader that opened the warehouse
 * before the last swap holds DuckDB's lock on that file (it reads on undisturbed), and then the build
 * copies instead. Deleting it is always safe; it costs one copy.
 */

/** Where the previous generation of `warehouse` is kept. */
export const previousOf = (warehouse: string): string => `${warehouse}.previous`;

/**
 * Puts the build's starting point at `aside`: the previous generation when `reuse` allows it, it can be
 * written (a DuckDB file, not the warehouse itself, that no reader has open) and `catchesUp` says its
 * models can follow the lake from it; else, when `copy` allows it, a copy of the warehouse (a
 * copy-on-write clone where the file system offers one); else nothing.
 */
export async function startAside(
  warehouse: string,
  aside: string,
  options: { reuse: boolean; copy: boolean; catchesUp: (connection: DuckDBConnection) => Promise<boolean> },
): Promise<'previous' | 'copy' | 'scratch'> {
  const previous = previousOf(warehouse);
  if (options.reuse && (await isUsableGeneration(previous, warehouse, options.catchesUp))) {
    await rename(previous, aside);
    return 'previous';
  }
  // Unlinked only: a reader holding it keeps reading it.
  await removeFile(previous);
  if (!options.copy) return 'scratch';
  await copyFile(warehouse, aside, constants.COPYFILE_FICLONE);
  return 'copy';
}

/**
 * Keeps the warehouse about to be replaced as the previous generation, by a second name for the same
 * file. A file system without hard links keeps none, and the next build copies.
 */
export async function keepAsPrevious(warehouse: string): Promise<void> {
  const previous = previousOf(warehouse);
  await removeFile(previous);
  await link(warehouse, previous).catch(() => undefined);
}

/** Drops the previous generation (a build from scratch, or the warehouse deleted): nothing to start from. */
export const forgetPrevious = (warehouse: string): Promise<void> => removeFile(previousOf(warehouse));

/**
 * Removes a file that may not exist. Note: not `rm({ force: true })`, which takes a file it may not
 * unlink (an immutable one: EPERM) for a folder and reports ENOTDIR from scandir, hiding why.
 */
async function removeFile(path: string): Promise<void> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/**
 * Whether `previous` is a DuckDB file other than the warehouse itself, nobody has it open, and
 * `catchesUp` accepts it. Any doubt (a file of an older layout, an error) means a copy, which is always right.
 */
async function isUsableGeneration(
  previous: string,
  warehouse: string,
  catchesUp: (connection: DuckDBConnection) => Promise<boolean>,
): Promise<boolean> {
  const [kept, current] = await Promise.all([stat(previous).catch(() => undefined), stat(warehouse)]);
  // The same file under both names (a build killed between keeping it and its swap): never written in place.
  if (!kept?.isFile() || (kept.ino === current.ino && kept.dev === current.dev)) return false;
  let database: DuckDBDatabase | undefined;
  try {
    // DuckDB locks a file it opens; a reader's lock refuses this writer's, and nothing is changed.
    database = await openDuckDB(previous);
    return await catchesUp(await database.connect());
  } catch {
    return false;
  } finally {
    database?.close();
  }
}
