import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, readlink, rmdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { isReadableCatalogUrl, redactCatalogUrl } from '../load/catalog-url.ts';
import { localCommitLogKind } from '../load/commit-log-kind.ts';
import { isObjectStorage, parseObjectStorageUrl } from '../load/layout.ts';
import { ConfigError } from './errors.ts';

/** Where a lake is, its catalog, and where its warehouse is built. */
export interface LakeLocation {
  /** A local directory, or `s3://bucket/prefix`. */
  dataDir: string;
  catalog?: string;
  /** The warehouse's directory (and an object-storage lake's local copy): the data directory when local. */
  localDir: string;
}

/**
 * `--data-dir` with `--catalog` (or AVALAKE_CATALOG, then the pipeline's) and `--local-dir` (or
 * AVALAKE_LOCAL_DIR): a lake on object storage needs a catalog and a writable local directory for its
 * warehouse; a local lake keeps its warehouse beside it (commands that write check it themselves).
 */
export async function resolveLakeLocation(
  given: { dataDir: string; catalog?: string; localDir?: string },
  env: Readonly<Record<string, string | undefined>>,
  pipelineCatalog?: string,
): Promise<LakeLocation> {
  const catalog = resolveCatalog(
    given.catalog ?? env.AVALAKE_CATALOG,
    pipelineCatalog,
    given.catalog !== undefined ? '--catalog' : 'AVALAKE_CATALOG',
  );
  const { dataDir } = given;
  const localDir = given.localDir ?? env.AVALAKE_LOCAL_DIR;
  if (!isObjectStorage(dataDir)) {
    if (given.localDir !== undefined)
      throw new ConfigError(
        `--local-dir is for a lake on object storage (--data-dir s3://…); a local lake keeps its warehouse in its data directory ${dataDir}`,
      );
    await checkCommitLog(dataDir, catalog !== undefined);
    return { dataDir, localDir: dataDir, ...(catalog ? { catalog } : {}) };
  }
  checkObjectStorageUrl(dataDir);
  if (!catalog)
    throw new ConfigError(
      `--data-dir ${dataDir}: a lake on object storage keeps its commit log in a catalog, and none is given; ` +
        'add --catalog postgres://… (or AVALAKE_CATALOG, or "catalog" in the pipeline)',
    );
  await checkDataDir(localDir ?? 'data', '--local-dir');
  return { dataDir, catalog, localDir: localDir ?? 'data' };
}

/** A local lake is opened with the commit log it keeps (commit-log-kind.ts): else it would start over. */
async function checkCommitLog(dataDir: string, withCatalog: boolean): Promise<void> {
  const kind = await localCommitLogKind(dataDir);
  if (typeof kind === 'object')
    throw new ConfigError(
      `--data-dir ${dataDir}: its lake moved to ${kind.movedTo} (${join(dataDir, 'lake', '_moved')} says so); ` +
        `open it there: --data-dir ${kind.movedTo} with its catalog`,
    );
  if (withCatalog && kind === 'files')
    throw new ConfigError(
      `--data-dir ${dataDir}: its lake keeps its own commit log (${join(dataDir, 'lake', '_commits')}), so a catalog ` +
        'knows nothing of it and every stream would be read again beside its files; run without --catalog ' +
        '(and AVALAKE_CATALOG, and the pipeline\'s "catalog"), or move the lake into the catalog first: avalake catalog-import',
    );
  if (!withCatalog && kind === 'catalog')
    throw new ConfigError(
      `--data-dir ${dataDir}: its lake keeps its commit log in a PostgreSQL catalog (${join(dataDir, 'lake', '_catalog')} says so); ` +
        'give it with --catalog postgres://… (or AVALAKE_CATALOG, or "catalog" in the pipeline)',
    );
}

/** S3's bucket naming rules, and prefix segments that stay inside the bucket. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PREFIX_SEGMENT = /^[A-Za-z0-9!_.*'()=-]+$/;

function checkObjectStorageUrl(dataDir: string): void {
  const { bucket, prefix } = parseObjectStorageUrl(dataDir) ?? { bucket: '', prefix: '' };
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw new ConfigError(
      `--data-dir ${dataDir}: "${bucket}" is not a bucket name; expected s3://bucket/prefix with a bucket of ` +
        '3 to 63 lowercase letters, digits, dots and hyphens, such as s3://analytics-lake/avalake',
    );
  const bad = prefix
    .split('/')
    .find((segment) => prefix !== '' && (!PREFIX_SEGMENT.test(segment) || /^\.+$/.test(segment)));
  if (bad !== undefined)
    throw new ConfigError(
      `--data-dir ${dataDir}: the prefix segment "${bad}" is not allowed; use letters, digits and ! _ . * ' ( ) = - between single slashes`,
    );
}

/**
 * `--catalog` / AVALAKE_CATALOG over the pipeline's `catalog`; checked for its scheme, and that
 * node-postgres can read it (a port that is no number, a password with an unencoded `/` is a usage
 * mistake, not a catalog that is down). `givenBy` names where `given` came from, for the message.
 */
export function resolveCatalog(
  given: string | undefined,
  fromPipeline?: string,
  givenBy = '--catalog',
): string | undefined {
  const catalog = given ?? fromPipeline;
  if (catalog === undefined) return undefined;
  const source = given !== undefined ? givenBy : 'the pipeline\'s "catalog"';
  if (!/^postgres(ql)?:\/\/./.test(catalog))
    throw new ConfigError(
      `${source}: expected a PostgreSQL URL such as postgres://avalake@db.internal/avalake, got "${redactCatalogUrl(catalog)}"`,
    );
  if (!isReadableCatalogUrl(catalog))
    throw new ConfigError(
      `${source}: "${redactCatalogUrl(catalog)}" does not parse as a URL; expected postgres://user@host:5432/database ` +
        'with a numeric port, and any / ? or # in the password written as %2F %3F %23 ' +
        '(or the password left out of the URL: PGPASSWORD or ~/.pgpass)',
    );
  return catalog;
}

/**
 * The data directory must be a directory we can create files in, or creatable: checked before anything
 * is written, so a mistake there creates nothing.
 */
export async function checkDataDir(dataDir: string, flag = '--data-dir'): Promise<void> {
  if (dataDir.trim() === '') throw new ConfigError(`${flag} is empty: name a directory such as "data"`);
  let at = resolve(dataDir);
  for (;;) {
    const info = await stat(at).catch((error: NodeJS.ErrnoException) => {
      // ENOTDIR: some ancestor is a file; walking up finds it and says so.
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      throw new ConfigError(
        `the data directory ${dataDir} cannot be used: ${at} is not reachable (${error.code}); choose another with ${flag}`,
      );
    });
    if (info === undefined) {
      // A link to nothing (a disk not mounted): making the folder would fail past the checks.
      const target = await readlink(at).catch(() => undefined);
      if (target !== undefined)
        throw new ConfigError(
          `the data directory ${dataDir} cannot be used: ${at} is a link to ${target}, which does not exist (a disk not mounted?); mount it or choose another with ${flag}`,
        );
      const parent = dirname(at);
      if (parent === at) break;
      at = parent;
      continue;
    }
    if (!info.isDirectory()) {
      throw new ConfigError(
        `the data directory ${dataDir} cannot be created: ${at} is a file, not a directory; choose another with ${flag}`,
      );
    }
    try {
      await access(at, constants.W_OK | constants.X_OK);
    } catch {
      throw new ConfigError(
        `the data directory ${dataDir} is not writable: no permission to write in ${at}; choose another with ${flag} or fix its permissions`,
      );
    }
    if (at !== resolve(dataDir)) await checkTakesFolders(at, dataDir, flag);
    return;
  }
}

/**
 * The data directory is to be made inside `at`: try making (and removing) a folder there first. Some
 * directories pass the permission check and still take no new folders (/proc, a read-only mount as
 * root), and a lake that could not make its directory would fail after its checks, not before.
 */
async function checkTakesFolders(at: string, dataDir: string, flag: string): Promise<void> {
  const probe = join(at, `.avalake-probe-${process.pid}-${randomUUID()}`);
  try {
    await mkdir(probe);
  } catch (error) {
    throw new ConfigError(
      `the data directory ${dataDir} cannot be created: ${at} takes no new folders (${(error as NodeJS.ErrnoException).code}); choose another with ${flag}`,
    );
  }
  await rmdir(probe);
}
