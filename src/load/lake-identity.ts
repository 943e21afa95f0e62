import { randomUUID } from 'node:crypto';
import type { Catalog, LakeBinding } from './catalog.ts';
import { filesOf } from './state.ts';
import type { LakeStorage } from './storage.ts';

/**
 * A catalog keeps the commit log of one lake. Opened over another (a mistyped --data-dir, a copy of the
 * lake at another prefix, a second catalog-import of the same box elsewhere), its commits would name
 * files that are not there, or workers would go on writing into the copy while the others write into
 * the lake. So the two are bound on first use: the catalog records an id (`avalake.lake`), and the lake
 * holds it as the name of a file in `_lake/`. A name, not a file's content, because the lake's storage
 * can list folders everywhere (a disk, a bucket) and need not read files back.
 *
 * The catalog's row is written first and the mark after, so workers starting together on a new lake all
 * mark the id that won. A lake and a catalog of an earlier avalake, neither marked, are bound the first
 * time they are opened together.
 */

const MARKS = '_lake';

/** A catalog opened over a lake it does not keep: a usage mistake (exit 2); nothing was written. */
export class LakeMismatchError extends Error {
  override name = 'LakeMismatchError';
}

/** Checks that the catalog keeps the lake of `storage`, and binds the two when neither is bound yet. */
export async function ensureLakeIdentity(catalog: Catalog, storage: LakeStorage): Promise<void> {
  if (!(await checkLakeIdentity(catalog, storage))) await markLakeIdentity(catalog, storage);
}

/**
 * Refuses (LakeMismatchError) a catalog over a lake it does not keep, writing nothing. True when the two
 * are bound already; false when they are still to be (markLakeIdentity).
 */
export async function checkLakeIdentity(catalog: Catalog, storage: LakeStorage): Promise<boolean> {
  const bound = await catalog.lakeBinding();
  // The catalog's own mark, looked for by name: on a bucket a HEAD, which a reader allowed only to get
  // the lake's objects may make, where listing `_lake/` needs the right to list the bucket.
  if (bound && (await storage.size(`${MARKS}/${bound.id}`)) !== undefined) return true;
  const marks = await storage.list(MARKS);
  // A worker opening a new lake beside this one binds the catalog and then marks the lake, perhaps
  // between the reads above: its mark is listed now, and the binding read again names it.
  const latest = bound ?? (await catalog.lakeBinding());
  if (latest && marks.includes(latest.id)) return true;
  if (marks.length > 0)
    throw new LakeMismatchError(
      latest
        ? `${storage.where} is not the lake the catalog ${catalog.name} keeps (that one is at ${latest.location}): ` +
            "name that lake's data directory with --data-dir, or open this one with its own catalog"
        : `${storage.where} is the lake of another catalog, and the catalog ${catalog.name} keeps none of its ` +
            'commits: open it with its own catalog (--catalog)',
    );
  // Unmarked: a new lake, or one of an earlier avalake. A catalog whose commits name files that are not
  // there is over the wrong place, not a lake to bind.
  if (!(await holdsItsFiles(catalog, storage)))
    throw new LakeMismatchError(
      `the catalog ${catalog.name} keeps the commit log of ${latest ? `the lake at ${latest.location}` : 'another lake'}, ` +
        `and ${storage.where} holds none of its files: name that lake's data directory with --data-dir`,
    );
  return false;
}

/** Binds the catalog to the lake of `storage` (unless it is bound) and marks the lake with its id. */
export async function markLakeIdentity(catalog: Catalog, storage: LakeStorage): Promise<void> {
  const binding: LakeBinding =
    (await catalog.lakeBinding()) ?? (await catalog.bindLake({ id: randomUUID(), location: storage.where }));
  const mark = `${MARKS}/${binding.id}`;
  await storage.write(mark, new TextEncoder().encode(`${binding.location}\n`)).catch(async (error) => {
    // Another worker starting beside this one marked it first.
    if ((await storage.size(mark)) === undefined) throw error;
  });
  await storage.sync(MARKS);
}

/**
 * Whether `storage` holds the lake the catalog's commits describe: the first file they name, of any
 * stream, is there. When they name none, nothing tells either way: yes (opening the lake checks its files).
 */
async function holdsItsFiles(catalog: Catalog, storage: LakeStorage): Promise<boolean> {
  let any = false;
  for (const stream of await catalog.streams()) {
    const { state, records } = await catalog.loadStream(stream, { tidy: false });
    const named: { path: string }[] = state?.files ?? [];
    const path = named[0]?.path ?? records.flatMap(filesOf)[0]?.path;
    if (path === undefined) continue;
    any = true;
    if ((await storage.size(path)) !== undefined) return true;
  }
  return !any;
}
