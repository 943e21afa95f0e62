import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtIsCurrent } from '../../src/cli/entry.js';
import { runCli } from '../helpers/output.ts';

/** A folder laid out as the repository: two source files and, unless told not to, a build of them. */
function repo(built = true) {
  const dir = mkdtempSync(join(tmpdir(), 'avalake-built-'));
  mkdirSync(join(dir, 'src'));
  mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
  const files = ['src/a.ts', 'package.json'].map((path) => {
    writeFileSync(join(dir, path), `// ${path}\n`);
    return path;
  });
  const inputs = () => ({
    files: files.map((path) => {
      const stat = statSync(join(dir, path));
      return { path, size: stat.size, mtimeMs: stat.mtimeMs };
    }),
  });
  if (built) writeFileSync(join(dir, 'dist', 'cli', 'inputs.json'), JSON.stringify(inputs()));
  return { dir, root: pathToFileURL(`${dir}/`) };
}

describe('which CLI bin/avalake.js runs', () => {
  it('the built one while every source file is as the build read it', () => {
    const { root } = repo();
    expect(builtIsCurrent(root, {})).toBe(true);
    expect(builtIsCurrent(root, { AVALAKE_FROM_SOURCE: '1' })).toBe(false);
  });

  it('the source when a file changed, its time moved, it is gone, or there is no build', () => {
    const changed = repo();
    writeFileSync(join(changed.dir, 'src/a.ts'), '// edited, longer than before\n');
    expect(builtIsCurrent(changed.root, {})).toBe(false);

    const touched = repo();
    utimesSync(join(touched.dir, 'src/a.ts'), new Date(), new Date(Date.now() + 5_000));
    expect(builtIsCurrent(touched.root, {})).toBe(false);

    const gone = repo();
    rmSync(join(gone.dir, 'src/a.ts'));
    expect(builtIsCurrent(gone.root, {})).toBe(false);

    expect(builtIsCurrent(repo(false).root, {})).toBe(false);
  });

  it('runs from the source and from the build alike: --version and a bad pipeline give the same answers', async () => {
    // In CI the build is current (`npm ci` runs it), so the second run is the built CLI's.
    if (process.env.CI) expect(builtIsCurrent(new URL('../../', import.meta.url))).toBe(true);
    for (const env of [{ AVALAKE_FROM_SOURCE: '1' }, { AVALAKE_FROM_SOURCE: '0' }]) {
      const version = await runCli(['--version'], env);
      expect(version.code).toBe(0);
      expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
      const bad = await runCli(['extract', '/nonexistent/pipeline.json', '--data-dir', tmpdir()], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('/nonexistent/pipeline.json');
    }
  });
});
