import { isObjectStorage } from '../load/index.ts';
import { type BuildResult, buildWarehouse } from '../warehouse/build.ts';
import { ModelError } from '../warehouse/models.ts';
import { lakeOption } from './catalog.ts';
import { noLakeIn, unwritable } from './data-dir.ts';
import { EXIT } from './exit.js';
import { lakeFailureExit } from './lake-failure.ts';

interface BuildArgs {
  dataDir?: string;
  catalog?: string;
  localDir?: string;
  select?: string;
  models?: string;
  json?: boolean;
  wait?: boolean;
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

/**
 * The whole command, returning its exit code: 2 for a mistake in the models, a data directory with no
 * lake or one not writable, 1 for a failed build, 75 when another build of the warehouse is running
 * (unless `--wait`).
 */
export async function build(
  args: BuildArgs,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  const lake = await lakeOption(args, env);
  if (typeof lake === 'number') return lake;
  const noLake = await noLakeIn(lake.dataDir);
  if (noLake) {
    process.stderr.write(`avalake: ${noLake}\n`);
    return EXIT.usage;
  }
  try {
    const result = await buildWarehouse({
      ...lake,
      ...(args.models !== undefined ? { modelsDir: args.models } : {}),
      ...(args.select !== undefined ? { select: args.select } : {}),
      lock: {
        wait: args.wait ?? false,
        onWait: (holder) =>
          process.stderr.write(
            `avalake: waiting for the build of pid ${holder.pid} on ${holder.hostname} (${holder.command}) to finish\n`,
          ),
      },
    });
    if (result.rebuilt) process.stderr.write(`avalake: warning: ${result.rebuilt}\n`);
    process.stdout.write(`${args.json ? JSON.stringify(result) : formatBuild(result)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof ModelError) {
      process.stderr.write(`avalake: ${error.message}\n`);
      return EXIT.usage;
    }
    const failed = lakeFailureExit(error);
    if (failed !== undefined) return failed;
    const flag = isObjectStorage(lake.dataDir) ? '--local-dir' : '--data-dir';
    const refused = unwritable(flag, lake.localDir, error);
    process.stderr.write(`avalake: ${refused ?? (error as Error).message}\n`);
    return refused ? EXIT.usage : EXIT.failed;
  }
}
