import type { CommandModule } from 'yargs';
import { type BuildResult, buildWarehouse } from '../warehouse/build.ts';
import { ModelError } from '../warehouse/models.ts';
import { EXIT } from './exit.ts';

interface BuildArgs {
  dataDir?: string;
  select?: string;
  models?: string;
  json?: boolean;
}

export function formatBuild(result: BuildResult): string {
  const lines = result.built.map((b) =>
    `built  ${b.name.padEnd(32)} ${b.materialized.padEnd(5)} ${b.rows !== undefined ? `${b.rows} rows` : ''}`.trimEnd(),
  );
  for (const s of result.skipped) lines.push(`skip   ${s.name.padEnd(32)} ${s.reason}`);
  if (result.kept.length > 0) lines.push(`kept   ${result.kept.length} models from the last build`);
  lines.push(`warehouse: ${result.path}`);
  return lines.join('\n');
}

export const buildCommand: CommandModule<object, BuildArgs> = {
  command: 'build',
  describe: 'Build the SQL models into data/warehouse.duckdb, aside, then swap it in',
  builder: (y) =>
    y
      .option('data-dir', { type: 'string', default: 'data', describe: 'Data directory' })
      .option('select', {
        type: 'string',
        describe: 'Models to rebuild: name, name+ (and downstream), +name',
      })
      .option('models', { type: 'string', default: 'sql/models', describe: 'Folder of the models' })
      .option('json', { type: 'boolean', describe: 'Print the result as JSON' }),
  handler: async (args) => {
    try {
      const result = await buildWarehouse({
        dataDir: args.dataDir ?? 'data',
        modelsDir: args.models ?? 'sql/models',
        ...(args.select !== undefined ? { select: args.select } : {}),
      });
      process.stdout.write(`${args.json ? JSON.stringify(result) : formatBuild(result)}\n`);
      process.exitCode = EXIT.ok;
    } catch (error) {
      if (error instanceof ModelError) {
        process.stderr.write(`avalake: ${error.message}\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      process.stderr.write(`avalake: ${(error as Error).message}\n`);
      process.exitCode = EXIT.failed;
    }
  },
};
