/** Where the warehouse and its models live, by default. */
export const WAREHOUSE_FILE = 'warehouse.duckdb';
export const DEFAULT_MODELS_DIR = 'sql/models';
