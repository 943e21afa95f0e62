import { join } from 'node:path';
import { WAREHOUSE_FILE } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';

/** Runs a query on a data directory's built warehouse, read-only; DECIMALs come back as exact strings. */
export const queryWarehouse = (dataDir: string, sql: string): Promise<Record<string, unknown>[]> =>
  withDuckDB(join(dataDir, WAREHOUSE_FILE), (db) => queryRows(db, sql), { readOnly: true });

/** The UTC day (YYYY-MM-DD) of a Unix time in seconds. */
export const utcDay = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);

/** An integer count of 10^-scale units as the exact decimal DuckDB prints (`1234n, 2` → `12.34`). */
export function scaled(units: bigint, scale: number): string {
  const sign = units < 0n ? '-' : '';
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
  return scale === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
