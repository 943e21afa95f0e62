import { CatalogRefusedError } from '../load/records.ts';
import { ModelError } from '../warehouse/models.ts';
import {
  formatResult,
  type OutputFormat,
  QueryFailedError,
  runOneQuery,
  withWarehouse,
} from '../warehouse/sql.ts';
import { WarehouseUsageError } from '../warehouse/usage-error.ts';
import { warehouseDirOf } from './data-dir.ts';
import { EXIT } from './exit.js';

interface SqlArgs {
  query?: string;
  dataDir?: string;
  format?: OutputFormat;
}

/**
 * The exit code of a warehouse command's error, after printing it as one line: the caller's mistake
 * (no warehouse, unknown model, bad SQL) is 2, anything that failed while running is 1.
 */
export function reportWarehouseError(error: unknown): number {
  const message = (error as Error).message;
  if (
    error instanceof WarehouseUsageError ||
    error instanceof ModelError ||
    error instanceof CatalogRefusedError
  ) {
    process.stderr.write(`avalake: ${message}\n`);
    return EXIT.usage;
  }
  if (error instanceof QueryFailedError) {
    process.stderr.write(`avalake: the query failed: ${message}\n`);
    return EXIT.failed;
  }
  process.stderr.write(`avalake: ${message}\n`);
  return EXIT.failed;
}

/** The whole command, returning its exit code. */
export async function sql(
  args: SqlArgs,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const query = args.query?.trim() ?? '';
  if (query === '') {
    process.stderr.write('avalake: name a query, e.g. avalake sql "select * from stg_rewards limit 5"\n');
    return EXIT.usage;
  }
  try {
    const result = await withWarehouse(warehouseDirOf(args.dataDir, env), (db) => runOneQuery(db, query));
    process.stdout.write(`${formatResult(result, args.format ?? 'table')}\n`);
    return EXIT.ok;
  } catch (error) {
    return reportWarehouseError(error);
  }
}
