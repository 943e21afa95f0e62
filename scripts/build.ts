/**
 * Builds the CLI into dist/cli: the TypeScript of src/ bundled into plain JavaScript (one file per command
 * and the chunks they share, ES modules for Node 20, the pure JavaScript packages bundled in and the
 * others left to node_modules), and the Parquet encoder's worker beside it. `npm ci` and `npm install`
 * run it (the `prepare` script); so can you, after changing src/: `npm run build`.
 *
 * Why: run from src/, every process first starts the TypeScript loader (tsx), which compiles and
 * resolves each module through a thread of its own. Measured on 2026-11-25 on the 200k-record whale
 * walk: the built CLI uses 0.8 s less CPU, ends 0.6 s sooner and peaks 55 MB lower. Every command starts
 * faster. Bundling yargs, zod, undici and p-retry in too took a cron run that finds nothing new (the
 * bench's tick) from 1.54 to 1.44 s, 1.69 to 1.57 CPU-seconds (medians of 6, 2026-11-26).
 *
 * dist/cli/inputs.json lists every source file the build read, with its size and modification time, and
 * the package.json of each package bundled in:
 * bin/avalake.js runs the build only while each of them is unchanged, and src/ otherwise, so an edit is
 * never run stale. The build writes into a fresh folder and swaps it in, so a CLI starting meanwhile runs
 * the old build, the new one, or (for the instant between) src/, never a half-written one.
 *
 * Usage: npx tsx scripts/build.ts
 */
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const OUT = join(DIST, 'cli');

/** Packages left in node_modules (see the build's `external`). */
const EXTERNAL = [
  '@duckdb/node-api',
  'parquet-wasm',
  'apache-arrow',
  'pg',
  '@aws-sdk/*',
  'tsx',
  'tsx/*',
  'esbuild',
];

/**
 * yargs's help pages measure text with src/cli/string-width.js, not the `string-width` package (that file
 * says why: 55 ms of every command's start-up).
 */
const lightStringWidth: Plugin = {
  name: 'light-string-width',
  setup(build) {
    const path = join(ROOT, 'src', 'cli', 'string-width.js');
    build.onResolve({ filter: /^string-width$/ }, () => ({ path }));
  },
};

/**
 * zod's namespace object `z` exports its 64 locales (`z.locales`), so no bundler can drop them: half of
 * zod's bundled code, compiled by every command. avalake speaks English only, the locale zod sets itself,
 * so zod's index of locales becomes one that holds English alone; `z.locales.fr` and the rest are then
 * undefined in the built CLI.
 */
const englishOnlyZod: Plugin = {
  name: 'english-only-zod',
  setup(build) {
    build.onLoad({ filter: /node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: "export { default as en } from './en.js';\n",
      loader: 'js',
    }));
  },
};

/**
 * The package.json of each package bundled in, so that installing another version of one makes the build
 * stale, as an edited source file does (a stat each, not one per file of the package).
 */
function bundledPackages(inputs: string[]): string[] {
  const roots = inputs.flatMap((path) => {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(path);
    return match ? [`${match[1]}/package.json`] : [];
  });
  return [...new Set(roots)];
}

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
    // The pure JavaScript packages every command starts with (yargs, zod, undici, p-retry) are bundled
    // in: node loads one file faster than it resolves and links a package's hundreds. Packages with
    // native code or files of their own beside their JavaScript (DuckDB, parquet-wasm's wasm), those
    // loaded only by some commands (S3, Postgres) and the build tools stay in node_modules.
    external: [...EXTERNAL],
    plugins: [lightStringWidth, englishOnlyZod],
    // The bundled packages' CommonJS (undici's) calls require for node's own modules. (A source module
    // declaring a top-level `require` of its own would clash with this one: the built CLI would not load.)
    banner: {
      js: "import { createRequire as __require_ } from 'node:module'; const require = __require_(import.meta.url);",
    },
    // src/cli/commands.js registers the TypeScript loader unless it runs built.
    define: { __AVALAKE_BUILT__: 'true' },
    metafile: true,
    logLevel: 'warning',
  });
  const inputs = Object.keys(result.metafile.inputs);
  const files = inputs
    .filter((path) => !path.includes('node_modules/'))
    .concat('package.json', bundledPackages(inputs))
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
