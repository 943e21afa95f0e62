import { ConfigError, resolveCatalog } from '../extract/config.ts';
import { EXIT } from './exit.js';

/**
 * `--catalog` or AVALAKE_CATALOG for the commands that read or maintain a lake without a pipeline
 * (build, test, status, compact): `{ catalog }` to spread into their options, or exit 2 with the reason.
 */
export function catalogOption(
  args: { catalog?: string },
  env: Readonly<Record<string, string | undefined>>,
): { catalog?: string } | number {
  try {
    const catalog = resolveCatalog(args.catalog ?? env.AVALAKE_CATALOG);
    return catalog ? { catalog } : {};
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`avalake: ${error.message}\n`);
    return EXIT.usage;
  }
}
