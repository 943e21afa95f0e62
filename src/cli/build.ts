import { type BuildResult, buildWarehouse } from '../warehouse/build.ts';
import { ModelError } from '../warehouse/models.ts';
import { catalogOption } from './catalog.ts';
import { EXIT } from './exit.js';

interface BuildArgs {
  dataDir?: string;
  catalog?: string;
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

/** The whole command, returning its exit code: 2 for a mistake in the models, 1 for a failed build. */
export async function build(
  args: BuildArgs,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  const catalog = catalogOption(args, env);
  if (typeof catalog === 'number') return catalog;
  try {
    const result = await buildWarehouse({
      ...catalog,
      dataDir: args.dataDir ?? 'data',
      modelsDir: args.models ?? 'sql/models',
      ...(args.select !== undefined ? { select: args.select } : {}),
    });
    process.stdout.write(`${args.json ? JSON.stringify(result) : formatBuild(result)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof ModelError) {
      process.stderr.write(`avalake: ${error.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`avalake: ${(error as Error).message}\n`);
    return EXIT.failed;
  }
}
