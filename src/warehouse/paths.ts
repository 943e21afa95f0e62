import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the warehouse lives in its directory. */
export const WAREHOUSE_FILE = 'warehouse.duckdb';

/** Where a project keeps its own models and SQL tests, relative to the working directory. */
export const DEFAULT_MODELS_DIR = 'sql/models';
export const DEFAULT_TESTS_DIR = 'sql/tests';

/**
 * The SQL avalake ships, beside its package.json: two folders up from this module both in the sources
 * (src/warehouse) and in the built CLI (dist/cli).
 */
const SHIPPED_SQL = fileURLToPath(new URL('../../sql/', import.meta.url));

/**
 * The models' folder when none is named: the working directory's, where a project keeps its own, else the
 * ones avalake ships, so that an installed avalake builds from any directory (a cron line without a `cd`).
 */
export function defaultModelsDir(): string {
  return existsSync(DEFAULT_MODELS_DIR) ? DEFAULT_MODELS_DIR : join(SHIPPED_SQL, 'models');
}

/**
 * The SQL tests' folder when none is named: `tests` beside the models' folder (sql/models, sql/tests), so
 * that tests are those written for the models they check, shipped or a project's own.
 */
export const testsBeside = (modelsDir: string): string => join(dirname(modelsDir), 'tests');

/** The warehouse built in `dir` (the data directory, or the local one beside an object-storage lake). */
export const warehouseIn = (dir: string): string => resolve(dir, WAREHOUSE_FILE);

/** A warehouse's build lock: its builds take turns, and compaction waits for them (build.ts). */
export const buildLockOf = (warehouse: string): string => `${warehouse}.lock`;
