import { ConfigError } from '../extract/errors.ts';
import { type LakeLocation, resolveLakeLocation } from '../extract/location.ts';
import { dataDirOf } from './data-dir.ts';
import { EXIT } from './exit.js';

/**
 * `--data-dir`, `--catalog` (or AVALAKE_CATALOG) and `--local-dir` for the commands that read or maintain
 * a lake without a pipeline (build, test, status, compact): where the lake is, or exit 2 with the reason.
 */
export async function lakeOption(
  args: { dataDir?: string; catalog?: string; localDir?: string },
  env: Readonly<Record<string, string | undefined>>,
): Promise<LakeLocation | number> {
  try {
    return await resolveLakeLocation({ ...args, dataDir: dataDirOf(args.dataDir, env) }, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`avalake: ${error.message}\n`);
    return EXIT.usage;
  }
}
