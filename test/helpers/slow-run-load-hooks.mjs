// Module hooks (slow-run-load.mjs registers them; they run on node's loader thread).
import { writeSync } from 'node:fs';

export const SLOW_LOAD_MARK = 'test hook: loading the run command';

/** The `run` command's module: src/cli/run.ts, or its chunk in the build (dist/cli/run-XXXXXXXX.js). */
const RUN_MODULE = /\/cli\/run(?:-[A-Z0-9]+)?\.(?:js|ts)$/;

export async function load(url, context, nextLoad) {
  if (RUN_MODULE.test(url)) {
    // Straight to file descriptor 2: the loader thread's process.stderr would wait for the main thread.
    writeSync(2, `${SLOW_LOAD_MARK}\n`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return nextLoad(url, context);
}
