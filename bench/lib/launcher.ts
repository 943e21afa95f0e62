import { delimiter, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `avalake` as users start it: bin/avalake, the launcher npm links (it sets glibc's mmap threshold). */
export const LAUNCHER = fileURLToPath(new URL('../../bin/avalake', import.meta.url));

/**
 * The shell's environment without its `AVALAKE_*` variables (a measured run must not pick up a data
 * directory, pipeline or key from it), with the `node` running the bench first on the PATH: the
 * launcher starts `node`.
 */
export function launcherEnv(): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AVALAKE_'))),
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
  };
}
