import { ConfigError } from '../extract/errors.ts';
import { resolveCatalog } from '../extract/location.ts';
import { CatalogImportError } from '../load/catalog.ts';
import { type CatalogImport, IMPORTED_LOG, importIntoCatalog } from '../load/catalog-import.ts';
import { localCommitLogKind } from '../load/commit-log-kind.ts';
import {
  CatalogUnavailableError,
  isObjectStorage,
  LakeCorruptError,
  LockHeldError,
  StorageUnavailableError,
} from '../load/index.ts';
import { dataDirOf, noLakeIn } from './data-dir.ts';
import { EXIT } from './exit.js';

export interface CatalogImportArgs {
  dataDir?: string;
  catalog?: string;
  json?: boolean;
}

/**
 * `avalake catalog-import`: a local lake's commit log moved into a PostgreSQL catalog (load/catalog-import.ts).
 * Exit 0; 2 for what was asked wrong (no catalog, a bucket, a lake already kept by a catalog, a catalog
 * already holding one of its streams); 75 while a run holds the data directory; 1 when the catalog or
 * the lake fails.
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
    report = await importIntoCatalog(dataDir, catalog);
  } catch (error) {
    if (error instanceof LockHeldError) {
      process.stderr.write(`avalake: ${error.message}\n`);
      return EXIT.locked;
    }
    if (error instanceof CatalogImportError) return refuse(error.message);
    if (
      error instanceof CatalogUnavailableError ||
      error instanceof LakeCorruptError ||
      error instanceof StorageUnavailableError
    ) {
      process.stderr.write(`avalake: ${error.message}\n`);
      return EXIT.failed;
    }
    throw error;
  }
  const partitions = report.streams.reduce((n, s) => n + s.partitions, 0);
  const files = report.streams.reduce((n, s) => n + s.files, 0);
  process.stdout.write(
    args.json
      ? `${JSON.stringify(report)}\n`
      : `moved the commit log of ${report.streams.length} streams (${partitions} partitions, ${files} files) into the catalog; ` +
          `open this lake with --catalog from now on (its old log is kept in ${dataDir}/lake/${IMPORTED_LOG})\n`,
  );
  return EXIT.ok;
}
