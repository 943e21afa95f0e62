import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryRows, quoteLiteral, withDuckDB } from '../../src/warehouse/duckdb.ts';

/** What a data directory's lake holds, counted the ways a reader and a disk see it. */
export interface LakeCensus {
  /** Parquet files a reader globbing `lake/<stream>/**\/*.parquet` sees, summed over stream folders. */
  visibleFiles: number;
  /** The same, per stream folder (folders whose name does not start with `_` or `.`). */
  visibleByStream: Record<string, number>;
  /** Every `*.parquet` file under the lake, bookkeeping folders included; symlinks are not followed. */
  diskParquetFiles: number;
  /** Bytes of those Parquet files. */
  diskParquetBytes: number;
  /** Every file under the lake (Parquet, commit records, rejects, anything). */
  diskFiles: number;
  /** Files under `lake/_commits/**`. */
  commitFiles: number;
  commitBytes: number;
  /** Sum of file sizes under the lake (apparent size), symlinks not followed. */
  lakeBytes: number;
  /** Allocated bytes, as `du` counts them (512-byte blocks): small files cost a whole block. */
  lakeDiskBytes: number;
}

interface Tally {
  files: number;
  parquet: number;
  parquetBytes: number;
  bytes: number;
  diskBytes: number;
}

function walk(dir: string, tally: Tally): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, tally);
    else if (entry.isFile()) {
      // Note: a file may vanish between readdir and lstat if a writer is busy; the bench runs between runs.
      const stat = lstatSync(path);
      tally.files++;
      if (entry.name.endsWith('.parquet')) {
        tally.parquet++;
        tally.parquetBytes += stat.size;
      }
      tally.bytes += stat.size;
      tally.diskBytes += stat.blocks * 512;
    }
  }
}

const isStreamFolder = (lakeDir: string, name: string): boolean =>
  !name.startsWith('_') && !name.startsWith('.') && statSync(join(lakeDir, name)).isDirectory();

async function globCount(connection: DuckDBConnection, folder: string): Promise<number> {
  const rows = await queryRows(
    connection,
    `select count(*) as n from glob(${quoteLiteral(join(folder, '**', '*.parquet'))})`,
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Counts a lake. Visible files are counted by DuckDB's own `glob()`, so they are exactly what
 * `read_parquet('lake/<stream>/**\/*.parquet')` would read (a stream folder that is a symlink is followed,
 * as a reader follows it); the disk counts walk the real tree once, following no symlink.
 */
export async function censusOf(lakeDir: string): Promise<LakeCensus> {
  const census: LakeCensus = {
    visibleFiles: 0,
    visibleByStream: {},
    diskParquetFiles: 0,
    diskParquetBytes: 0,
    diskFiles: 0,
    commitFiles: 0,
    commitBytes: 0,
    lakeBytes: 0,
    lakeDiskBytes: 0,
  };
  if (!existsSync(lakeDir)) return census;
  const all: Tally = { files: 0, parquet: 0, parquetBytes: 0, bytes: 0, diskBytes: 0 };
  walk(lakeDir, all);
  census.diskFiles = all.files;
  census.diskParquetFiles = all.parquet;
  census.diskParquetBytes = all.parquetBytes;
  census.lakeBytes = all.bytes;
  census.lakeDiskBytes = all.diskBytes;
  const commits = join(lakeDir, '_commits');
  if (existsSync(commits)) {
    const tally: Tally = { files: 0, parquet: 0, parquetBytes: 0, bytes: 0, diskBytes: 0 };
    walk(commits, tally);
    census.commitFiles = tally.files;
    census.commitBytes = tally.bytes;
  }
  const streams = readdirSync(lakeDir)
    .filter((name) => isStreamFolder(lakeDir, name))
    .sort();
  await withDuckDB(':memory:', async (connection) => {
    for (const stream of streams) {
      const n = await globCount(connection, join(lakeDir, stream));
      census.visibleByStream[stream] = n;
      census.visibleFiles += n;
    }
  });
  return census;
}
