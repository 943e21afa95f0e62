import type { Lake } from '../../src/load/lake.ts';
import { queryLake } from '../helpers/lake.ts';
import { PARTITIONS, STREAM } from './fixtures/crash-shape.ts';

/** Runs one query on a fresh in-memory DuckDB (see queryLake). */
export const query = queryLake;

/** column name → DuckDB type of what `from` yields. */
export async function columnTypes(from: string): Promise<Record<string, string>> {
  const rows = await query(`describe select * from ${from}`);
  return Object.fromEntries(rows.map((r) => [r.column_name as string, r.column_type as string]));
}

/**
 * The crash tests' verdict on a lake written by the crash writers: per partition, the rows a reader of
 * `lakeDir` sees (count, distinct ids, their range, exact amounts) beside what its checkpoint says they
 * must be — the ids [0, next), each once. Equal means nothing was lost and nothing duplicated.
 */
export async function idsAgainstCheckpoints(lakeDir: string, lake: Pick<Lake, 'readCheckpoint'>) {
  const actual = await query(
    `select address, count(*)::integer as n, count(distinct id)::integer as distinct_ids,
            min(id)::integer as lo, max(id)::integer as hi,
            bool_and(amount::varchar = if(id = 0, '0', id::varchar || repeat('0', 30))) as amounts_exact
     from read_parquet('${lakeDir}/${STREAM}/**/*.parquet', hive_partitioning = true)
     group by address order by address`,
  );
  const expected = PARTITIONS.map((p) => {
    const next = lake.readCheckpoint(STREAM, p)?.next as number;
    return { address: p.address, n: next, distinct_ids: next, lo: 0, hi: next - 1, amounts_exact: true };
  });
  return { actual, expected };
}
