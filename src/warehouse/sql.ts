import { stat } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { isObjectStorage } from '../load/layout.ts';
import { openDuckDB } from './duckdb.ts';
import { warehouseIn } from './paths.ts';
import { WarehouseUsageError } from './usage-error.ts';

/** A query that was well formed but failed while it ran (exit 1); the cause is DuckDB's error. */
export class QueryFailedError extends Error {
  override name = 'QueryFailedError';
}

/** A query's answer: column names and types in order, and each row as JSON-safe values (exact decimals). */
export interface QueryResult {
  columns: string[];
  types: string[];
  rows: unknown[][];
}

export type OutputFormat = 'table' | 'csv' | 'json';

/**
 * Opens `<dataDir>/warehouse.duckdb` read-only (a build swaps in a new file beside it, so this never
 * blocks one) and runs `work`. A missing warehouse is a WarehouseUsageError that says how to make one.
 */
export async function withWarehouse<T>(
  dataDir: string,
  work: (connection: DuckDBConnection) => Promise<T>,
): Promise<T> {
  if (isObjectStorage(dataDir))
    throw new WarehouseUsageError(
      `--data-dir ${dataDir}: the warehouse is a local file, built beside a mirror of that lake; name the ` +
        'local directory the build used (its --local-dir, default data) with --data-dir',
    );
  const path = warehouseIn(dataDir);
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile())
    throw new WarehouseUsageError(
      `no warehouse at ${path}: run "avalake build --data-dir ${dataDir}" first (or name the data directory with --data-dir)`,
    );
  const database = await openDuckDB(path, { readOnly: true }).catch((error: Error) => {
    if (!isNotDuckDB(error)) throw error;
    throw new Error(
      `the warehouse ${path} is not a DuckDB database file (damaged, or not written by avalake); ` +
        `it is rebuilt from the lake: run "avalake build --data-dir ${dataDir}"`,
      { cause: error },
    );
  });
  try {
    return await work(await database.connect());
  } finally {
    database.close();
  }
}

/** DuckDB's refusal to open a file that is not one of its databases (nothing a retry would change). */
export const isNotDuckDB = (error: unknown): boolean =>
  /is not a valid DuckDB database file/.test((error as Error).message);

/**
 * Runs one query and reads its whole answer. DuckDB's parser, binder and catalog errors (a typo, an
 * unknown table or column) and writes refused by the read-only warehouse are WarehouseUsageErrors; other
 * failures are QueryFailedErrors; both keep DuckDB's message and cause.
 */
export async function runQuery(connection: DuckDBConnection, sql: string): Promise<QueryResult> {
  try {
    const reader = await connection.runAndReadAll(sql);
    return {
      columns: reader.columnNames(),
      types: reader.columnTypes().map((t) => t.toString()),
      rows: reader.getRowsJson() as unknown[][],
    };
  } catch (error) {
    const message = (error as Error).message;
    if (isUsageMistake(message)) throw new WarehouseUsageError(message, { cause: error });
    throw new QueryFailedError(message, { cause: error });
  }
}

/**
 * Runs the one statement `sql` holds, as `runQuery`. Several (`select 1; select 2`) are the caller's
 * mistake: DuckDB would run them all and answer only the last, so earlier ones would go unseen.
 */
export async function runOneQuery(connection: DuckDBConnection, sql: string): Promise<QueryResult> {
  // A statement DuckDB cannot parse is left to runQuery, which reports it as a usage mistake.
  const statements = await connection.extractStatements(sql).catch(() => undefined);
  if (statements && statements.count > 1)
    throw new WarehouseUsageError(
      `the query holds ${statements.count} statements; give one at a time (one avalake sql each), or join their answers in one query`,
    );
  return runQuery(connection, sql);
}

const isUsageMistake = (message: string): boolean =>
  /^(Parser|Binder|Catalog) Error/.test(message) || /read-only mode/i.test(message);

/** The names of the tables and views in the warehouse's main schema. */
export async function warehouseObjects(connection: DuckDBConnection): Promise<Map<string, 'table' | 'view'>> {
  const { rows } = await runQuery(
    connection,
    `select table_name, table_type from information_schema.tables where table_catalog = current_database() and table_schema = 'main' order by table_name`,
  );
  return new Map(rows.map((r) => [String(r[0]), r[1] === 'VIEW' ? 'view' : 'table']));
}

/** A cell as text: null as NULL, lists and structs as JSON. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const NUMERIC = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

/** A plain-text table with a header rule; numbers right-aligned, long cells cut at `maxCellWidth`. */
export function formatTable(result: QueryResult, options: { maxCellWidth?: number } = {}): string {
  const max = options.maxCellWidth ?? Number.POSITIVE_INFINITY;
  const cut = (text: string) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
  const cells = result.rows.map((row) => row.map((v) => cut(cellText(v))));
  const header = result.columns.map(cut);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] as string).length)));
  const numeric = result.columns.map(
    (_, i) => cells.length > 0 && cells.every((r) => r[i] === 'NULL' || NUMERIC.test(r[i] as string)),
  );
  const line = (row: string[]) =>
    row
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  const lines = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)];
  lines.push(`(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`);
  return lines.join('\n');
}

/** RFC 4180 CSV with a header line; nulls are empty fields, lists and structs JSON. */
export function formatCsv(result: QueryResult): string {
  const field = (value: unknown) => {
    if (value === null || value === undefined) return '';
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return [result.columns.map(field), ...result.rows.map((r) => r.map(field))]
    .map((r) => r.join(','))
    .join('\n');
}

/**
 * A JSON array of row objects; DECIMALs and BIGINTs stay exact strings. A column name the result repeats
 * (a join's two `network`s) is suffixed `_1`, `_2`… from its second time on, as DuckDB names them in a
 * data frame: an object keeps one value per name, and would drop the others.
 */
export function formatJson(result: QueryResult): string {
  const names = uniqueNames(result.columns);
  return JSON.stringify(result.rows.map((r) => Object.fromEntries(names.map((c, i) => [c, r[i]]))));
}

function uniqueNames(columns: readonly string[]): string[] {
  const taken = new Set(columns);
  const seen = new Set<string>();
  return columns.map((column) => {
    if (!seen.has(column)) {
      seen.add(column);
      return column;
    }
    let n = 1;
    while (taken.has(`${column}_${n}`)) n++;
    taken.add(`${column}_${n}`);
    return `${column}_${n}`;
  });
}

export function formatResult(result: QueryResult, format: OutputFormat): string {
  if (format === 'csv') return formatCsv(result);
  if (format === 'json') return formatJson(result);
  return formatTable(result);
}
