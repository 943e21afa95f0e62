import { type ExportFormat, exportModel } from '../warehouse/export.ts';
import { warehouseDirOf } from './data-dir.ts';
import { EXIT } from './exit.js';
import { reportWarehouseError } from './sql.ts';

interface ExportArgs {
  model?: string;
  format?: ExportFormat;
  out?: string;
  partitionBy?: string;
  dataDir?: string;
  json?: boolean;
}

/** The whole command, returning its exit code. */
export async function exportCommandRun(
  args: ExportArgs,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  try {
    const result = await exportModel({
      dataDir: warehouseDirOf(args.dataDir, env),
      model: args.model ?? '',
      format: args.format ?? 'parquet',
      out: args.out ?? '',
      ...(args.partitionBy !== undefined ? { partitionBy: args.partitionBy } : {}),
    });
    process.stdout.write(
      args.json
        ? `${JSON.stringify(result)}\n`
        : `exported ${result.model}: ${result.rows} rows to ${result.out}` +
            (args.partitionBy !== undefined ? ` (${result.files.length} files)\n` : '\n'),
    );
    return EXIT.ok;
  } catch (error) {
    return reportWarehouseError(error);
  }
}
