import { DuckDBInstance } from '@duckdb/node-api';

/** Runs a query over a data directory's lake with DuckDB (extensions never downloaded) and returns JSON rows. */
export async function queryLake(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  try {
    await connection.run('SET autoinstall_known_extensions=false; SET autoload_known_extensions=false');
    const reader = await connection.runAndReadAll(sql);
    return reader.getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

/** `read_parquet` of one stream's committed files, Hive folders as columns. */
export const streamTable = (dataDir: string, stream: string) =>
  `read_parquet('${dataDir}/lake/${stream}/**/*.parquet', hive_partitioning = true, hive_types_autocast = false, union_by_name = true, filename = true)`;

/**
 * The newest version of each record: the raw lake keeps every version of a mutable record (a delegation
 * as it moved from pending to completed); the commit sequence in the file name orders them.
 */
export const newestVersions = (dataDir: string, stream: string, key: string) =>
  `(select * from ${streamTable(dataDir, stream)} qualify row_number() over (partition by ${key} order by filename desc) = 1)`;

/** Rows of a stream's raw lake that are exact copies of another (lineage columns aside): there must be none. */
export async function duplicateRows(dataDir: string, stream: string): Promise<number> {
  const rows = await queryLake(
    `select * exclude (_run_id, _extracted_at, filename) from ${streamTable(dataDir, stream)}`,
  );
  const seen = new Set<string>();
  let duplicates = 0;
  for (const row of rows) {
    const text = JSON.stringify(row);
    if (seen.has(text)) duplicates++;
    else seen.add(text);
  }
  return duplicates;
}
