import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { DEFAULT_QUORUM_PERCENTAGE } from '../../src/schemas/warp-validators.ts';

/**
 * Issue 11: `--help` and `--version` load yargs and the command table only; each command loads what it uses
 * when it runs. (How fast that is goes in the commit log, measured, not in a timed test.)
 */

// A resolve hook that appends every module URL the process resolves to a file named by the environment,
// and every file it requires (CommonJS, which the hook does not see: DuckDB is required).
const RECORD_HOOK = `data:text/javascript,${encodeURIComponent(`
  import Module, { register } from 'node:module';
  import { appendFileSync } from 'node:fs';
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (...args) {
    const file = resolveFilename.apply(this, args);
    appendFileSync(process.env.AVALAKE_TEST_MODULES, file + '\\n');
    return file;
  };
  register('data:text/javascript,' + encodeURIComponent(\`
    import { appendFileSync } from 'node:fs';
    export async function resolve(specifier, context, next) {
      const resolved = await next(specifier, context);
      appendFileSync(process.env.AVALAKE_TEST_MODULES, resolved.url + '\\\\n');
      return resolved;
    }
  \`));
`)}`;

/** Runs the CLI; returns its output and every module it loaded. */
function cli(...args: string[]) {
  const modulesFile = join(mkdtempSync(join(tmpdir(), 'avalake-help-')), 'modules.txt');
  const result = spawnSync(process.execPath, ['--import', RECORD_HOOK, 'bin/avalake.js', ...args], {
    encoding: 'utf8',
    env: { ...process.env, AVALAKE_TEST_MODULES: modulesFile },
  });
  let modules: string[] = [];
  try {
    modules = readFileSync(modulesFile, 'utf8').trim().split('\n');
  } catch {
    // Nothing resolved through the hook.
  }
  return { ...result, modules };
}

// src/load/process-limits.js is the one module of load/ the front door loads: small and plain, so that
// a module loader failing on `ulimit -n` is named in one line (bin/avalake.js, commands.js).
const HEAVY =
  /@duckdb|apache-arrow|parquet-wasm|@noble|\/src\/(emulator|load\/(?!process-limits\.js$)|warehouse|warp|report)\//;

describe('avalake --help and --version', () => {
  it('--help lists every command and loads none of their modules', () => {
    const out = cli('--help');
    expect(out.status, out.stderr).toBe(0);
    for (const command of COMMANDS) {
      const name = String(command.command).split(' ')[0] as string;
      expect(out.stdout).toMatch(new RegExp(`^  avalake ${name}\\b`, 'm'));
    }
    expect(out.modules.length).toBeGreaterThan(0);
    expect(out.modules.filter((m) => HEAVY.test(m))).toEqual([]);
    expect(out.modules.filter((m) => m.includes('/src/cli/'))).not.toContain(
      expect.stringMatching(/\/(extract|run|build|sql|status)\.ts$/),
    );
  });

  it('--version prints the package version and loads none of the commands', () => {
    const out = cli('--version');
    expect(out.status, out.stderr).toBe(0);
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(out.stdout.trim()).toBe(pkg.version);
    expect(out.modules.filter((m) => HEAVY.test(m))).toEqual([]);
  });

  it('a command loads what it uses: sql opens DuckDB, and not the emulator', () => {
    const out = cli('sql', 'select 1', '--data-dir', join(tmpdir(), 'avalake-help-none'));
    expect(out.modules.some((m) => m.includes('@duckdb'))).toBe(true);
    expect(out.modules.filter((m) => /\/src\/emulator\//.test(m))).toEqual([]);
  });

  it('a command’s help shows its flags, with the defaults the code uses', () => {
    const out = cli('aggregate', '--help');
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain(`service default ${DEFAULT_QUORUM_PERCENTAGE}`);
    expect(cli('verify-message', '--help').stdout).toContain(`(default ${DEFAULT_QUORUM_PERCENTAGE})`);
    for (const flag of ['--base-url', '--metrics-url', '--node-url', '--retries', '--max-age'])
      expect(cli('run', '--help').stdout).toContain(flag);
  });
});
