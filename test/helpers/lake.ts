import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type LiveFile, partitionId, readLakeState } from '../../src/load/index.ts';
import { queryRows, quoteLiteral, withDuckDB } from '../../src/warehouse/duckdb.ts';

/** Runs a query on a fresh in-memory DuckDB (extensions never downloaded); rows JSON-safe, DECIMALs exact. */
export const queryLake = (sql: string): Promise<Record<string, unknown>[]> =>
  withDuckDB(':memory:', (connection) => queryRows(connection, sql));

/** `read_parquet` of one stream's committed files, Hive folders as columns. */
export const streamTable = (dataDir: string, stream: string) =>
  `read_parquet('${dataDir}/lake/${stream}/**/*.parquet', hive_partitioning = true, hive_types_autocast = false, union_by_name = true, filename = true)`;

/**
 * The newest version of each record: the raw lake keeps every version of a mutable record (a delegation
 * as it moved from pending to completed); the time it was read orders them, then the commit sequence in
 * the file name.
 */
export const newestVersions = (dataDir: string, stream: string, key: string) =>
  `(select * from ${streamTable(dataDir, stream)} qualify row_number() over (partition by ${key} order by _extracted_at desc, filename desc) = 1)`;

/**
 * A snapshot stream's current answer, partition by partition: the rows of the version its checkpoint
 * names. An unchanged answer stores no rows, and an empty newest answer has none, so neither the newest
 * rows of a partition nor the newest time of the stream says it: the commit log does.
 */
export async function currentSnapshot(dataDir: string, stream: string): Promise<string> {
  const state = (await readLakeState(dataDir)).get(stream);
  const current = [...(state?.partitions.values() ?? [])]
    .filter((p) => typeof p.checkpoint?.snapshotAt === 'number')
    .map((p) => `(${quoteLiteral(partitionId(p.partition))}, ${p.checkpoint?.snapshotAt})`);
  if (current.length === 0) return `(select * from ${streamTable(dataDir, stream)} where false)`;
  return `(select rows.* from ${streamTable(dataDir, stream)} as rows
    semi join (values ${current.join(', ')}) as current(p, snapshot_ms)
    on rows._partition = current.p and epoch_ms(rows._snapshot_at) = current.snapshot_ms)`;
}

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

/**
 * Every file under a directory with a hash of its content (following the lake's stream links, so a
 * stream's files appear under `lake/<stream>/` and again under `_generations/`): equal before and after
 * means nothing was written.
 */
export function fileHashes(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else files[path.slice(dir.length)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir);
  return files;
}

/** Every row of these streams, lineage aside (who read it, when), sorted: two lakes with the same rows are equal. */
export async function lakeRows(
  dataDir: string,
  streams: Iterable<string>,
): Promise<Record<string, string[]>> {
  const rows: Record<string, string[]> = {};
  for (const stream of streams) {
    const found = await queryLake(
      `select * exclude (_run_id, _extracted_at, filename) from ${streamTable(dataDir, stream)}`,
    );
    rows[stream] = found.map(({ _snapshot_at: _, ...row }) => JSON.stringify(row)).sort();
  }
  return rows;
}

/** Data rows committed to the lake of `dataDir` (its commit log in `catalog` when given), every partition's. */
export async function committedRows(dataDir: string, catalog?: string): Promise<number> {
  let rows = 0;
  for (const state of (await readLakeState(dataDir, catalog)).values())
    for (const p of state.partitions.values()) rows += p.rows;
  return rows;
}

/**
 * Expects the lake of `dataDir` (its commit log in `catalog` when given) to hold the streams and rows of
 * the lake of `reference`, lineage aside: what one uninterrupted run took, none twice.
 */
export async function expectLakeAsReference(dataDir: string, reference: string, catalog?: string) {
  const [lake, wanted] = await Promise.all([
    lakeRows(dataDir, (await readLakeState(dataDir, catalog)).keys()),
    lakeRows(reference, (await readLakeState(reference)).keys()),
  ]);
  expect(Object.keys(lake).sort()).toEqual(Object.keys(wanted).sort());
  for (const stream of Object.keys(wanted)) {
    expect(lake[stream]?.length, stream).toBe(wanted[stream]?.length);
    expect(lake[stream], stream).toEqual(wanted[stream]);
  }
}

/** A stream's live data files, as the commit log names them. */
export const dataFiles = async (dataDir: string, stream: string): Promise<LiveFile[]> =>
  ((await readLakeState(dataDir)).get(stream)?.files ?? []).filter((f) => f.table === 'data');
