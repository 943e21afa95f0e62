// @ts-check
import { readFileSync, statSync } from 'node:fs';

/**
 * Which CLI bin/avalake.js runs: the built one (dist/cli, scripts/build.ts) while every source file it was
 * built from is as the build read it (same size, same modification time), else src/ under tsx. So an
 * edit is never run stale, and a checkout works without a build. AVALAKE_FROM_SOURCE=1 runs src/ always.
 *
 * Note: plain JavaScript, read before any loader exists; a stat per input (about 240: the source files and
 * the bundled packages' package.json) costs a few milliseconds.
 * @param {URL} root the repository's folder
 * @param {NodeJS.ProcessEnv} env
 * @returns {boolean}
 */
export function builtIsCurrent(root, env = process.env) {
  if (env.AVALAKE_FROM_SOURCE === '1') return false;
  try {
    /** @type {import('../../scripts/build.ts').BuildInputs} */
    const inputs = JSON.parse(readFileSync(new URL('dist/cli/inputs.json', root), 'utf8'));
    return (
      inputs.files.length > 0 &&
      inputs.files.every((f) => {
        const stat = statSync(new URL(f.path, root));
        return stat.size === f.size && stat.mtimeMs === f.mtimeMs;
      })
    );
  } catch {
    // No build, an unreadable one, or a source file gone: run the source.
    return false;
  }
}
