import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/run.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { extractCaptured, extractOnce, pipelineWorkspace, smallPipeline } from '../helpers/extract.ts';
import { committedRows, fileHashes } from '../helpers/lake.ts';
import { captureOutput, runCli } from '../helpers/output.ts';

/** A line of a stack trace: what a user must never see for a limit of their machine. */
const STACK = /^\s+at\s.+(:\d+:\d+\)?|<anonymous>)$/m;

/** What the next request fails with, as undici reports it (undefined: requests go through). */
const failing = vi.hoisted(() => ({ error: undefined as Error | undefined }));
vi.mock('../../src/extract/http.ts', async (original) => {
  const http = await original<typeof import('../../src/extract/http.ts')>();
  return {
    ...http,
    createHttpClient: (options: Parameters<typeof http.createHttpClient>[0]) => {
      const client = http.createHttpClient(options);
      return {
        send: (request: Parameters<typeof client.send>[0]) =>
          failing.error ? Promise.reject(failing.error) : client.send(request),
        close: () => client.close(),
      };
    },
  };
});

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
}, 60_000);
afterAll(() => emulator?.close());

/** A connection refused by the limit of open files, as undici reports it. */
const connectEmfile = () =>
  Object.assign(new Error('connect EMFILE 127.0.0.1:8417 - Local (undefined:undefined)'), {
    code: 'EMFILE',
    errno: -24,
    syscall: 'connect',
  });

describe('too many open files', () => {
  it('at start-up (the module loader): exit 2, one line naming `ulimit -n` and its value, nothing written', async () => {
    const w = pipelineWorkspace(smallPipeline(emulator));
    try {
      for (const command of [
        ['extract', w.pipelinePath, '--data-dir', w.dataDir],
        ['status', '--data-dir', w.dataDir],
        ['build', '--data-dir', w.dataDir],
      ]) {
        // 16: below what node itself needs (the launcher says so); 30: node starts, its loader fails.
        for (const openFiles of [16, 30]) {
          const result = await runCli(command, {}, { openFiles });
          expect(result.code, `${command[0]} ${openFiles}: ${result.stderr}`).toBe(2);
          expect(result.stderr).toBe(
            `avalake: too many open files: raise \`ulimit -n\` (now ${openFiles}), to 1024 or more; avalake stopped as it loaded, before it read or wrote anything\n`,
          );
          expect(result.stdout).toBe('');
        }
      }
      expect(existsSync(w.dataDir)).toBe(false);
    } finally {
      await rm(w.dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('mid-run (a connection, a file): not retried, exit 1, one line, the lake and its checkpoints as they were', async () => {
    const w = pipelineWorkspace(smallPipeline(emulator));
    try {
      expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
      const before = fileHashes(join(w.dataDir, 'lake'));
      const rows = await committedRows(w.dataDir);
      failing.error = connectEmfile();
      const started = Date.now();
      const result = await extractCaptured({ pipeline: w.pipelinePath, dataDir: w.dataDir, quiet: true });
      failing.error = undefined;
      expect(result.code, result.stderr).toBe(1);
      // Not retried with backoff (8 attempts, seconds each): the first failure stops the run.
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(result.stderr).not.toMatch(STACK);
      const lines = result.stderr.split('\n').filter((l) => l.startsWith('avalake: '));
      expect(lines).toEqual([
        expect.stringMatching(
          new RegExp(
            `^avalake: too many open files: raise \`ulimit -n\` \\(now \\d+\\), to 1024 or more; the run stopped: what was committed to the lake in ${w.dataDir} stays, and the next run continues from it$`,
          ),
        ),
      ]);
      expect(result.stdout).toMatch(/: failed\n/);
      // The summary's failed partitions say it in the same words, once, not as undici's "connect EMFILE …".
      expect(result.stdout).not.toMatch(/EMFILE/);
      expect(result.stdout.match(/too many open files/g)).toHaveLength(1);
      expect(result.stdout).toMatch(
        /^ {2}.+: too many open files: raise `ulimit -n` \(now \d+\), to 1024 or more$/m,
      );
      expect(await committedRows(w.dataDir)).toBe(rows);
      expect(fileHashes(join(w.dataDir, 'lake'))).toEqual(before);
      // The next run, with files to spare, goes on from the lake as it stands.
      expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
    } finally {
      failing.error = undefined;
      await rm(w.dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("mid-run under `avalake run`: the streams' failed partitions point at the one line that says it", async () => {
    const w = pipelineWorkspace(smallPipeline(emulator));
    try {
      failing.error = connectEmfile();
      const result = await captureOutput(() =>
        run({ pipeline: w.pipelinePath, dataDir: w.dataDir, logFormat: 'json', quiet: true }, {}),
      );
      failing.error = undefined;
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).not.toMatch(/EMFILE/);
      expect(result.stdout).toMatch(/^ {2}\S+ .* partitions failed: what stopped the run, below$/m);
      expect(result.stdout.match(/too many open files/g)).toHaveLength(1);
      expect(result.stdout).toMatch(/^ {2}stopped by: too many open files: raise `ulimit -n` \(now \d+\)/m);
    } finally {
      failing.error = undefined;
      await rm(w.dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('a virtual memory limit (ulimit -v)', () => {
  it("WebAssembly's reservation refused in-process: exit 1, one line naming `ulimit -v`, the lake as it was", async () => {
    const w = pipelineWorkspace(smallPipeline(emulator));
    try {
      expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
      const before = fileHashes(join(w.dataDir, 'lake'));
      // undici starts its HTTP parser's WebAssembly as it opens a connection.
      failing.error = new RangeError(
        'WebAssembly.Instance(): Out of memory: Cannot allocate Wasm memory for new instance',
      );
      const result = await extractCaptured({ pipeline: w.pipelinePath, dataDir: w.dataDir, quiet: true });
      failing.error = undefined;
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).not.toMatch(STACK);
      const lines = result.stderr.split('\n').filter((l) => l.startsWith('avalake: '));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^avalake: out of virtual memory: `ulimit -v`.* is too small for WebAssembly/);
      expect(lines[0]).toContain(`what was committed to the lake in ${w.dataDir} stays`);
      expect(fileHashes(join(w.dataDir, 'lake'))).toEqual(before);
    } finally {
      failing.error = undefined;
      await rm(w.dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('as a process under `ulimit -v 4000000` (4 GB): exit 1 at once, one line with the limit, no stack', async () => {
    const w = pipelineWorkspace(smallPipeline(emulator));
    try {
      const result = await runCli(
        ['extract', w.pipelinePath, '--data-dir', w.dataDir, '--quiet'],
        {},
        { virtualMemoryKiB: 4_000_000 },
      );
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).not.toMatch(STACK);
      expect(result.stderr).toContain(
        'avalake: out of virtual memory: `ulimit -v` (now 4000000 KiB) is too small for WebAssembly',
      );
      expect(result.stderr.split('\n').filter((l) => l.startsWith('avalake: '))).toHaveLength(1);
      expect(await committedRows(w.dataDir)).toBe(0);
    } finally {
      await rm(w.dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/** Whether `chattr +i` works here: as root, on a file system that keeps the flag (ext4, xfs; not tmpfs). */
function canMakeImmutable(dir: string): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = join(dir, 'probe');
  spawnSync('touch', [probe]);
  const made = spawnSync('chattr', ['+i', probe]).status === 0;
  if (made) spawnSync('chattr', ['-i', probe]);
  spawnSync('rm', ['-f', probe]);
  return made;
}

describe('an immutable file of the warehouse', () => {
  const w = pipelineWorkspace({});
  const immutable = canMakeImmutable(w.dir);
  afterAll(() => rm(w.dir, { recursive: true, force: true }));

  // Note: needs root and a file system with the immutable flag (the tests' tmpdir on ext4): skipped elsewhere.
  it.skipIf(!immutable)(
    'build with warehouse.duckdb.previous immutable (chattr +i): exit 1, one line naming it and the fix, the warehouse as it was',
    async () => {
      const ws = pipelineWorkspace(smallPipeline(emulator));
      const previous = join(ws.dataDir, 'warehouse.duckdb.previous');
      try {
        expect((await extractOnce(ws.pipelinePath, ws.dataDir)).status).toBe('ok');
        // The second build keeps the first one's warehouse as the previous generation.
        for (let i = 0; i < 2; i++) expect((await runCli(['build', '--data-dir', ws.dataDir])).code).toBe(0);
        expect(existsSync(previous)).toBe(true);
        expect(spawnSync('chattr', ['+i', previous]).status).toBe(0);
        const warehouse = readFileSync(join(ws.dataDir, 'warehouse.duckdb'));
        const result = await runCli(['build', '--data-dir', ws.dataDir]);
        expect(result.code, result.stderr).toBe(1);
        expect(result.stdout).toBe('');
        expect(result.stderr).toBe(
          `avalake: the build cannot replace or remove ${previous}: operation not permitted (EPERM); it may be immutable (lsattr shows an i: \`chattr -i ${previous}\`) or not yours; fix that or delete the file. The warehouse is unchanged\n`,
        );
        expect(readFileSync(join(ws.dataDir, 'warehouse.duckdb')).equals(warehouse)).toBe(true);
        spawnSync('chattr', ['-i', previous]);
        expect((await runCli(['build', '--data-dir', ws.dataDir])).code).toBe(0);
      } finally {
        spawnSync('chattr', ['-i', previous]);
        await rm(ws.dir, { recursive: true, force: true });
      }
    },
    240_000,
  );
});
