import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The modules a source file loads as it starts: what its static imports reach, in src/ and the packages
 * (dynamic imports, loaded only when a path needs them, are not followed).
 */
async function loadedAtStart(entry: string): Promise<Set<string>> {
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    metafile: true,
    logLevel: 'silent',
  });
  const reached = new Set<string>([entry]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const imported of metafile.inputs[file]?.imports ?? []) {
      if (imported.kind !== 'import-statement' || reached.has(imported.path)) continue;
      reached.add(imported.path);
      queue.push(imported.path);
    }
  }
  return reached;
}

describe('what `avalake extract` loads as it starts', () => {
  it('not DuckDB: a cron job that only extracts does not pay for loading it (~70 ms a run)', async () => {
    const extract = await loadedAtStart('src/cli/extract.ts');
    expect(extract.has('src/extract/run.ts')).toBe(true);
    // undici's Pool alone, not its index, which loads fetch, WebSocket and the rest (src/extract/http.ts).
    expect(extract.has('undici/lib/dispatcher/pool.js')).toBe(true);
    expect(extract.has('undici')).toBe(false);
    // DuckDB is loaded by src/load/duckdb.ts (with require, so no import of the package shows).
    expect(extract.has('src/load/duckdb.ts')).toBe(false);
    // The build does load it, which shows the walk above follows imports through to it.
    expect((await loadedAtStart('src/cli/build.ts')).has('src/load/duckdb.ts')).toBe(true);
  });
});
