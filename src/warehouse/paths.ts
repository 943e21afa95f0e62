import { resolve } from 'node:path';

/** Where the warehouse and its models live, by default. */
export const WAREHOUSE_FILE = 'warehouse.duckdb';
export const DEFAULT_MODELS_DIR = 'sql/models';

/** The warehouse built in `dir` (the data directory, or the local one beside an object-storage lake). */
export const warehouseIn = (dir: string): string => resolve(dir, WAREHOUSE_FILE);

/** A warehouse's build lock: its builds take turns, and compaction waits for them (build.ts). */
export const buildLockOf = (warehouse: string): string => `${warehouse}.lock`;
