import { ConfigError } from '../extract/errors.ts';
import { resolveCatalog, resolveLakeLocation } from '../extract/location.ts';
import { CatalogImportError } from '../load/catalog.ts';
import { type CatalogImport, IMPORTED_LOG, importIntoCatalog } from '../load/catalog-import.ts';
import { localCommitLogKind } from '../load/commit-log-kind.ts';
import { isObjectStorage } from '../load/index.ts';
import { dataDirOf, noLakeIn } from './data-dir.ts';
import { EXIT } from './exit.js';
import { lakeFailureExit } from './lake-failure.ts';

export interface CatalogImportArgs {
  dataDir?: string;
  catalog?: string;
  /** `s3://bucket/prefix`: the lake's files move there too. */
  to?: string;
  json?: boolean;
}

/**
 * `avalake catalog-import`: a local lake's commit log moved into a PostgreSQL catalog, and with `--to`
 * its files to object storage (load/catalog-import.ts). Exit 0; 2 for what was asked wrong (no catalog,
 * a bad bucket URL, a lake already kept by a catalog or moved, a catalog already holding one of its
 * streams); 75 while a run holds the data directory; 1 when the catalog, the bucket or the lake fails.
 * The catalog is opened and checked before anything is uploaded: a refusal, or a catalog that cannot
 * be opened, leaves the bucket as it was.
 */
export async function catalogImport(
  args: CatalogImportArgs,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const dataDir = dataDirOf(args.dataDir, env);
  const refuse = (message: string) => {
    process.stderr.write(`avalake: ${message}\n`);
    return EXIT.usage;
  };
  let catalog: string | undefined;
  try {
    catalog = resolveCatalog(
      args.catalog ?? env.AVALAKE_CATALOG,
      undefined,
      args.catalog !== undefined ? '--catalog' : 'AVALAKE_CATALOG',
    );
    // The bucket's URL checked as every command checks a lake's: a bad one is exit 2 before anything moves.
    if (catalog && args.to !== undefined) {
      if (!isObjectStorage(args.to))
        return refuse(`--to ${args.to}: expected an object-storage lake, s3://bucket/prefix`);
      await resolveLakeLocation({ dataDir: args.to, catalog }, env);
    }
  } catch (error) {
    if (error instanceof ConfigError) return refuse(error.message);
    throw error;
  }
  if (!catalog)
    return refuse(
      'catalog-import needs the catalog to move the lake into: --catalog postgres://… (or AVALAKE_CATALOG)',
    );
  if (isObjectStorage(dataDir))
    return refuse(
      `--data-dir ${dataDir}: a lake on object storage keeps its commit log in a catalog already`,
    );
  const noLake = await noLakeIn(dataDir);
  if (noLake) return refuse(noLake);
  const kind = await localCommitLogKind(dataDir);
  if (typeof kind === 'object')
    return refuse(`--data-dir ${dataDir}: its lake moved to ${kind.movedTo} already`);
  if (kind === 'catalog')
    return refuse(
      `--data-dir ${dataDir}: its lake keeps its commit log in a catalog already; open it with --catalog`,
    );
  if (kind === 'none')
    return refuse(
      `--data-dir ${dataDir}: nothing committed there yet, so there is no commit log to move; extract with --catalog from the start`,
    );

  let report: CatalogImport;
  try {
    report = await importIntoCatalog(dataDir, catalog, args.to !== undefined ? { to: args.to } : {});
  } catch (error) {
    if (error instanceof CatalogImportError) return refuse(error.message);
    const failed = lakeFailureExit(error);
    if (failed !== undefined) return failed;
    throw error;
  }
  const partitions = report.streams.reduce((n, s) => n + s.partitions, 0);
  const files = report.streams.reduce((n, s) => n + s.files, 0);
  const from =
    args.to === undefined
      ? 'open this lake with --catalog from now on'
      : `uploaded ${report.uploaded} of its files to ${args.to}; open the lake there (--data-dir ${args.to} --catalog …) from now on`;
  process.stdout.write(
    args.json
      ? `${JSON.stringify(report)}\n`
      : `moved the commit log of ${report.streams.length} streams (${partitions} partitions, ${files} files) into the catalog; ` +
          `${from} (the old log is kept in ${dataDir}/lake/${IMPORTED_LOG})\n`,
  );
  return EXIT.ok;
}
