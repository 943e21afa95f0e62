import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { BuildInputs } from '../../scripts/build.ts';
import { COMMANDS } from '../../src/cli/commands.js';
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
      // yargs's words stay English whatever LANG says: the built CLI bundles yargs without its locale
      // files, and the source CLI would otherwise mix German headings into an English page.
      const help = await runCli(['extract', '--help'], { ...env, LANG: 'de_DE.UTF-8' });
      expect(help.stdout).toContain('Options:');
      expect(help.stdout).toContain('Show help');
    }
  });

  it('prints the same help pages from the source and the build, which measures their text itself', async () => {
    if (process.env.CI) expect(builtIsCurrent(new URL('../../', import.meta.url))).toBe(true);
    const pages = [['--help'], ...COMMANDS.map((c) => [String(c.command).split(' ')[0] as string, '--help'])];
    for (const args of pages) {
      const [source, built] = await Promise.all([
        runCli(args, { AVALAKE_FROM_SOURCE: '1' }),
        runCli(args, { AVALAKE_FROM_SOURCE: '0' }),
      ]);
      expect(source.code, args.join(' ')).toBe(0);
      expect(built.stdout, args.join(' ')).toBe(source.stdout);
    }
  });

  const built = join(new URL('../../', import.meta.url).pathname, 'dist', 'cli');
  // Without a build (`npm ci` always makes one) the test is reported as skipped, not passed.
  it.skipIf(!existsSync(join(built, 'inputs.json')))(
    'bundles the packages every command starts with, and a new version of one makes the build stale',
    () => {
      const { files } = JSON.parse(readFileSync(join(built, 'inputs.json'), 'utf8')) as BuildInputs;
      const chunks = readdirSync(built)
        .filter((name) => name.endsWith('.js'))
        .map((name) => readFileSync(join(built, name), 'utf8'));
      for (const bundled of ['yargs', 'zod', 'undici', 'p-retry']) {
        expect(files.map((f) => f.path)).toContain(`node_modules/${bundled}/package.json`);
        expect(chunks.some((code) => code.includes(`from "${bundled}"`))).toBe(false);
      }
      // DuckDB is native code: it stays in node_modules.
      expect(chunks.some((code) => code.includes('"@duckdb/node-api"'))).toBe(true);
    },
  );
});
