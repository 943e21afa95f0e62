/**
 * The warehouse is missing or a query is the caller's mistake: one clear line, exit 2. A module of its
 * own so that commands which never open DuckDB (extract) can name it without loading DuckDB.
 */
export class WarehouseUsageError extends Error {
  override name = 'WarehouseUsageError';
}
