import { stat } from 'node:fs/promises';
import { fsyncFile, sha256File } from './durable.ts';
import type { WrittenFile } from './parquet.ts';
import type { LakeStorage } from './storage.ts';

/**
 * Writes the rows of Parquet files, in their order, as one new zstd Parquet file at `target` (fsynced;
 * the caller fsyncs its folder), and says what it wrote. DuckDB streams the copy, so memory stays flat
 * whatever the size. Compaction and the folding of snapshot confirmations merge with it.
 */
export async function mergeParquetFiles(sources: readonly string[], target: string): Promise<WrittenFile> {
  // Loaded when a merge runs: an extract that neither compacts nor folds confirmations never loads DuckDB.
  const { queryRows, quoteLiteral, withDuckDB } = await import('./duckdb.ts');
  const list = sources.map(quoteLiteral).join(', ');
  const rows = await withDuckDB(':memory:', async (db) => {
    // Note: hive_partitioning off, or DuckDB would add the folders' keys as columns to the merged file.
    await db.run(
      `copy (select * from read_parquet([${list}], hive_partitioning = false, union_by_name = true)) ` +
        `to ${quoteLiteral(target)} (format parquet, compression zstd)`,
    );
    return Number(
      (await queryRows(db, `select count(*) as n from read_parquet(${quoteLiteral(target)})`))[0]?.n,
    );
  });
  await fsyncFile(target);
  return { rows, bytes: (await stat(target)).size, sha256: await sha256File(target) };
}

/** Merges lake files (lake-relative paths) into a new lake file, wherever the lake's storage keeps them. */
export function mergeLakeFiles(
  storage: LakeStorage,
  sources: readonly string[],
  target: string,
): Promise<WrittenFile> {
  return storage.readLocally(sources, (files) =>
    storage.writeFrom(target, (file) => mergeParquetFiles(files, file)),
  );
}
