import type { CommandModule } from 'yargs';
import { type ExportFormat, exportModel } from '../warehouse/export.ts';
import { EXIT } from './exit.ts';
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
export async function exportCommandRun(args: ExportArgs): Promise<number> {
  try {
    const result = await exportModel({
      dataDir: args.dataDir ?? 'data',
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

export const exportCommand: CommandModule<object, ExportArgs> = {
  command: 'export <model>',
  describe: 'Copy a model out of the warehouse as Parquet or CSV, for BI tools',
  builder: (y) =>
    y
      .positional('model', { type: 'string', describe: 'A table or view of the warehouse' })
      .option('format', {
        choices: ['parquet', 'csv'] as const,
        default: 'parquet' as const,
        describe: 'File format',
      })
      .option('out', {
        type: 'string',
        demandOption: true,
        describe: 'File to write (a folder with --partition-by)',
      })
      .option('partition-by', {
        type: 'string',
        describe: 'Write a folder with one col=value/ subfolder per value',
      })
      .option('data-dir', { type: 'string', default: 'data', describe: 'Data directory' })
      .option('json', { type: 'boolean', describe: 'Print the result as JSON' }),
  handler: async (args) => {
    process.exitCode = await exportCommandRun(args);
  },
};
