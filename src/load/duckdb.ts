import { type DuckDBConnection, DuckDBInstance, DuckDBTimestampTZValue } from '@duckdb/node-api';

// The client prints TIMESTAMPTZ values with the machine's offset unless told otherwise: UTC, as the
// session below computes (so `sql`, CSV exports and the report read the same under any TZ).
DuckDBTimestampTZValue.timezoneOffsetInMinutes = 0;

/**
 * Opens a DuckDB database with extension downloads off (parquet and json are built in; nothing may be
 * fetched from the network) and its time zone UTC, and runs `work` on one connection, closing both
 * whatever happens.
 */
export async function withDuckDB<T>(
  path: string,
  work: (connection: DuckDBConnection) => Promise<T>,
  options: { readOnly?: boolean } = {},
): Promise<T> {
  const instance = await DuckDBInstance.create(path, {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    ...(options.readOnly ? { access_mode: 'READ_ONLY' } : {}),
  });
  const connection = await instance.connect();
  try {
    // Times print, cast and export in UTC whatever the machine's TZ: the same query, the same answer.
    await connection.run(`set TimeZone = 'UTC'`);
    return await work(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** A query's rows as JSON-safe objects: DECIMALs and BIGINTs as exact strings, never lossy numbers. */
export async function queryRows(
  connection: DuckDBConnection,
  sql: string,
): Promise<Record<string, unknown>[]> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRowObjectsJson() as Record<string, unknown>[];
}

/** Quotes an identifier for SQL. */
export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Quotes a string literal for SQL. */
export const quoteLiteral = (text: string): string => `'${text.replaceAll("'", "''")}'`;
