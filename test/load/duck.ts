import { queryLake } from '../helpers/lake.ts';

/** Runs one query on a fresh in-memory DuckDB (see queryLake). */
export const query = queryLake;

/** column name → DuckDB type of what `from` yields. */
export async function columnTypes(from: string): Promise<Record<string, string>> {
  const rows = await query(`describe select * from ${from}`);
  return Object.fromEntries(rows.map((r) => [r.column_name as string, r.column_type as string]));
}
