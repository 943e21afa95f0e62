import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { quoteIdent, quoteLiteral } from './duckdb.ts';
import { checkOutput, outputError } from './output.ts';
import { QueryFailedError, runQuery, warehouseObjects, withWarehouse } from './sql.ts';
import { WarehouseUsageError } from './usage-error.ts';

export type ExportFormat = 'parquet' | 'csv';

/** DuckDB types a CSV field cannot hold as they are: lists, arrays, structs, maps, unions. */
const NESTED = /(\]$|^(STRUCT|MAP|UNION)\()/;

export interface ExportOptions {
  dataDir: string;
  /** A table or view of the warehouse. */
  model: string;
  format: ExportFormat;
  /** A file, or with `partitionBy` a folder of Hive-style `col=value/` subfolders. */
  out: string;
  partitionBy?: string;
}

export interface ExportResult {
  model: string;
  format: ExportFormat;
  out: string;
  rows: number;
  /** Files written, relative to `out` when partitioned. */
  files: string[];
}

/**
 * Copies a model out of the warehouse (read-only) with DuckDB's COPY: Parquet with zstd, exact
 * DECIMAL(38,0) amounts and UTC timestamps; or CSV with a header. The export is written aside and renamed
 * into place, so a BI tool polling `out` never reads half a file. A partitioned export writes a folder and
 * refuses to replace an existing one (it would have to delete what is there).
 */
export async function exportModel(options: ExportOptions): Promise<ExportResult> {
  await checkOutput('--out', options.out, { folder: true, dataDir: options.dataDir });
  const out = resolve(options.out);
  const existing = await stat(out).catch(() => undefined);
  if (options.partitionBy !== undefined && existing)
    throw new WarehouseUsageError(
      `--out ${options.out} already exists; a partitioned export writes a new folder: remove it or choose another --out`,
    );
  if (options.partitionBy === undefined && existing?.isDirectory())
    throw new WarehouseUsageError(
      `--out ${options.out} is a folder; name a file, or add --partition-by to write a folder`,
    );

  return withWarehouse(options.dataDir, async (db) => {
    const objects = await warehouseObjects(db);
    if (!objects.has(options.model))
      throw new WarehouseUsageError(
        `no model named "${options.model}" in the warehouse; models: ${[...objects.keys()].join(', ') || '(none: run avalake build)'}`,
      );
    const described = (await runQuery(db, `describe ${quoteIdent(options.model)}`)).rows;
    const columns = described.map((r) => String(r[0]));
    if (options.partitionBy !== undefined && !columns.includes(options.partitionBy))
      throw new WarehouseUsageError(
        `--partition-by: ${options.model} has no column "${options.partitionBy}"; columns: ${columns.join(', ')}`,
      );
    // CSV has no lists or structs: DuckDB would write its own display syntax, which no reader parses.
    // They go as JSON, as `avalake sql --format csv` writes them.
    const select =
      options.format === 'csv'
        ? described
            .map(([name, type]) => {
              const column = quoteIdent(String(name));
              return NESTED.test(String(type)) ? `to_json(${column}) as ${column}` : column;
            })
            .join(', ')
        : '*';
    const aside = join(dirname(out), `.${basename(out)}.exporting-${process.pid}`);
    await rm(aside, { recursive: true, force: true });
    const settings = [
      options.format === 'parquet' ? 'format parquet, compression zstd' : 'format csv, header true',
      ...(options.partitionBy !== undefined ? [`partition_by (${quoteIdent(options.partitionBy)})`] : []),
    ];
    try {
      const copied = await runQuery(
        db,
        `copy (select ${select} from ${quoteIdent(options.model)}) to ${quoteLiteral(aside)} (${settings.join(', ')})`,
      ).catch((error: Error) => {
        // The temporary name means nothing to the caller: say which --out it was for.
        throw new QueryFailedError(`writing --out ${options.out}: ${error.message.replaceAll(aside, out)}`, {
          cause: error,
        });
      });
      await rename(aside, out).catch((error) => {
        throw outputError('--out', options.out, error);
      });
      const files =
        options.partitionBy !== undefined
          ? (await readdir(out, { recursive: true, withFileTypes: true }))
              .filter((e) => e.isFile())
              .map((e) => join(e.parentPath, e.name).slice(out.length + 1))
              .sort()
          : [basename(out)];
      return {
        model: options.model,
        format: options.format,
        out,
        rows: Number(copied.rows[0]?.[0] ?? 0),
        files,
      };
    } finally {
      await rm(aside, { recursive: true, force: true });
    }
  });
}
