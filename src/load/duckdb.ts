import { createRequire } from 'node:module';
import type * as DuckDBApi from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';

// Required as the CommonJS package it is: imported as an ES module, node first parses each of its files
// for their exports (cjs-module-lexer), which took 60-70 ms of every command that opens DuckDB (130-148
// ms to import it, 62-72 to require it, on 2026-11-26).
const { DuckDBInstance, DuckDBTimestampTZValue } = createRequire(import.meta.url)(
  '@duckdb/node-api',
) as typeof DuckDBApi;

export { DuckDBTimestampTZValue };

// The client prints TIMESTAMPTZ values with the machine's offset unless told otherwise: UTC, as the
// session below computes (so `sql`, CSV exports and the report read the same under any TZ).
DuckDBTimestampTZValue.timezoneOffsetInMinutes = 0;

/** An open DuckDB database: connections to it, each a session of its own, all closed with it. */
export interface DuckDBDatabase {
  /** A new connection with its time zone UTC. Temp tables and settings are the connection's own. */
  connect(): Promise<DuckDBConnection>;
  /** Closes every connection still open, then the database. */
  close(): void;
}

/**
 * Opens a DuckDB database with extension downloads off (parquet and json are built in; nothing may be
 * fetched from the network). Several connections run statements at once (DuckDB's transactions keep
 * them apart); a build runs independent models on connections of their own.
 */
export async function openDuckDB(
  path: string,
  options: { readOnly?: boolean } = {},
): Promise<DuckDBDatabase> {
  const instance = await DuckDBInstance.create(path, {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    ...(options.readOnly ? { access_mode: 'READ_ONLY' } : {}),
  });
  // Closing a connection twice is harmless, so every one opened is closed again with the database.
  const opened: DuckDBConnection[] = [];
  return {
    async connect() {
      const connection = await instance.connect();
      opened.push(connection);
      // Times print, cast and export in UTC whatever the machine's TZ: the same query, the same answer.
      await connection.run(`set TimeZone = 'UTC'`);
      return connection;
    },
    close() {
      for (const connection of opened) connection.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * Opens a DuckDB database as `openDuckDB` does and runs `work` on one connection, closing both whatever
 * happens.
 */
export async function withDuckDB<T>(
  path: string,
  work: (connection: DuckDBConnection) => Promise<T>,
  options: { readOnly?: boolean } = {},
): Promise<T> {
  const database = await openDuckDB(path, options);
  try {
    return await work(await database.connect());
  } finally {
    database.close();
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
