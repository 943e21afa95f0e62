import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { mkdirDurable, replaceDurable } from './durable.ts';

/**
 * A local lake keeps its commit log beside its files (`lake/_commits/`) or in a PostgreSQL catalog, and
 * the files alone do not say which. Opened with the other one, the lake would look empty: every stream
 * would be read again from its start, into new files beside the old ones. So a lake opened with a
 * catalog is marked (`lake/_catalog`), and the commands refuse the mix before anything is written
 * (extract/location.ts). A lake moved to object storage (`catalog-import --to`) is marked with where
 * it went (`lake/_moved`), and no command opens it any more.
 */

const MARK = '_catalog';
const MOVED = '_moved';
const MARK_TEXT =
  'This lake keeps its commit log in a PostgreSQL catalog: open it with --catalog postgres://… (or AVALAKE_CATALOG).\n';

export type CommitLogKind = 'files' | 'catalog' | 'none' | { movedTo: string };

/** Which commit log the local lake of `dataDir` keeps, as far as its directory tells. */
export async function localCommitLogKind(dataDir: string): Promise<CommitLogKind> {
  const lakeDir = join(dataDir, 'lake');
  const moved = await readFile(join(lakeDir, MOVED), 'utf8').catch(() => undefined);
  if (moved !== undefined) return { movedTo: moved.trim() };
  if (await stat(join(lakeDir, MARK)).catch(() => undefined)) return 'catalog';
  const streams = await readdir(join(lakeDir, '_commits')).catch(() => []);
  return streams.length > 0 ? 'files' : 'none';
}

/** Marks a local lake as kept by a catalog (once: later opens find the mark). */
export async function markCatalogLake(lakeDir: string): Promise<void> {
  if (await stat(join(lakeDir, MARK)).catch(() => undefined)) return;
  await mkdirDurable(lakeDir);
  await replaceDurable(join(lakeDir, MARK), new TextEncoder().encode(MARK_TEXT));
}

/** Marks a local lake whose files and commit log moved to object storage (`to`, its `s3://` URL). */
export async function markMovedLake(lakeDir: string, to: string): Promise<void> {
  await replaceDurable(join(lakeDir, MOVED), new TextEncoder().encode(`${to}\n`));
}
