import type { DuckDBConnection } from '@duckdb/node-api';
import { partitionId } from '../load/index.ts';
import { quoteLiteral } from './duckdb.ts';
import type { LakeSources } from './lake-sources.ts';

/** Rows a statement inserts at most: a pipeline has thousands of partitions, never millions. */
const BATCH = 500;

/**
 * `_lake.partitions`: every partition of the lake and when it was last read, from the commit log the build
 * read, so it matches the rows the models see. A mart ends a partition's daily series at `read_at`: an
 * address whose partition failed, or was taken out of the pipeline, stops where its data stops instead of
 * being carried forward to the newest extract of the others.
 *
 * `read_at` is the source's clock at the partition's newest commit (the time its data is as of), or the
 * commit's own time when the source gave none. `keys` holds its partition keys (network, chain, address, …).
 */
export async function writePartitions(db: DuckDBConnection, lake: LakeSources): Promise<void> {
  await db.run('create schema if not exists _lake');
  await db.run(
    `create or replace table _lake.partitions (stream varchar, "partition" varchar, network varchar, keys map(varchar, varchar), read_at timestamptz)`,
  );
  const rows: string[] = [];
  for (const [stream, state] of lake.streams)
    for (const p of state.partitions.values()) {
      const readAt = p.sourceAt ?? Date.parse(p.committedAt);
      // In key order, as the partition's id has them: a catalog (jsonb) hands the keys back sorted, a
      // local state in the order they were written, and the same lake should make the same table.
      const keys = Object.entries(p.partition)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => `${quoteLiteral(k)}: ${quoteLiteral(v)}`);
      rows.push(
        `(${quoteLiteral(stream)}, ${quoteLiteral(partitionId(p.partition))}, ${
          p.partition.network === undefined ? 'null' : quoteLiteral(p.partition.network)
        }, map {${keys.join(', ')}}, make_timestamptz(${Math.round(readAt * 1000)}))`,
      );
    }
  for (let i = 0; i < rows.length; i += BATCH)
    await db.run(`insert into _lake.partitions values ${rows.slice(i, i + BATCH).join(', ')}`);
}
