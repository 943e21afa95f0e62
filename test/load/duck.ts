import { DuckDBInstance } from '@duckdb/node-api';

/** Runs one query on a fresh in-memory DuckDB; no extension is installed or loaded behind our back. */
export async function query(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run('SET autoinstall_known_extensions=false; SET autoload_known_extensions=false');
    const reader = await connection.runAndReadAll(sql);
    // Note: getRowObjectsJson keeps DECIMALs exact (as strings); getRowObjectsJS would not.
    return reader.getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** column name → DuckDB type of what `from` yields. */
export async function columnTypes(from: string): Promise<Record<string, string>> {
  const rows = await query(`describe select * from ${from}`);
  return Object.fromEntries(rows.map((r) => [r.column_name as string, r.column_type as string]));
}
