/**
 * Builds the CLI into dist/cli: the TypeScript of src/ bundled into plain JavaScript (one file per command
 * and the chunks they share, ES modules for Node 20, packages left to node_modules), and the Parquet
 * encoder's worker beside it. `npm ci` and `npm install` run it (the `prepare` script); so can you, after
 * changing src/: `npm run build`.
 *
 * Why: run from src/, every process first starts the TypeScript loader (tsx), which compiles and
 * resolves each module through a thread of its own. Measured on 2026-11-25 on the 200k-record whale
 * walk: the built CLI uses 0.8 s less CPU, ends 0.6 s sooner and peaks 55 MB lower. Every command starts
 * faster.
 *
 * dist/cli/inputs.json lists every source file the build read, with its size and modification time:
 * bin/avalake.js runs the build only while each of them is unchanged, and src/ otherwise, so an edit is
 * never run stale. The build writes into a fresh folder and swaps it in, so a CLI starting meanwhile runs
 * the old build, the new one, or (for the instant between) src/, never a half-written one.
 *
 * Usage: npx tsx scripts/build.ts
 */
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const OUT = join(DIST, 'cli');

/** What bin/avalake.js checks: each source file as it was when the build read it. */
export interface BuildInputs {
  files: { path: string; size: number; mtimeMs: number }[];
}

const staging = join(DIST, `.cli-${process.pid}`);
rmSync(staging, { recursive: true, force: true });
mkdirSync(staging, { recursive: true });
try {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'src/cli/main.js', 'encode-worker': 'src/load/encode-worker.js' },
    outdir: staging,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    // src/cli/commands.js registers the TypeScript loader unless it runs built.
    define: { __AVALAKE_BUILT__: 'true' },
    metafile: true,
    logLevel: 'warning',
  });
  const files = Object.keys(result.metafile.inputs)
    .filter((path) => !path.includes('node_modules/'))
    .concat('package.json')
    .sort()
    .map((path) => {
      const stat = statSync(join(ROOT, path));
      return { path, size: stat.size, mtimeMs: stat.mtimeMs };
    });
  writeFileSync(join(staging, 'inputs.json'), `${JSON.stringify({ files } satisfies BuildInputs)}\n`);
  // Swap: a CLI starting now reads either the old folder or the new one, never a half-written one.
  const old = join(DIST, `.old-${process.pid}`);
  try {
    renameSync(OUT, old);
  } catch (error) {
    // No earlier build is the only reason to go on.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  renameSync(staging, OUT);
  rmSync(old, { recursive: true, force: true });
  console.log(`built ${relative(ROOT, OUT)} from ${files.length} source files`);
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  throw error;
}
