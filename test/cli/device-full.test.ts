import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { readLakeState } from '../../src/load/lake.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce } from '../helpers/extract.ts';
import { lakeRows } from '../helpers/lake.ts';
import { type CliResult, LAUNCHER, launcherEnv, runCli } from '../helpers/output.ts';

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
}, 60_000);
afterAll(() => emulator?.close());

/**
 * `avalake ARGS` with every file it writes limited to `kib` KiB (ulimit -f): a write past it fails with
 * EFBIG, as one on a full disk fails with ENOSPC, without needing a small file system to mount.
 */
function runCliLimited(kib: number, args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', `ulimit -f ${kib} && exec "$0" "$@"`, LAUNCHER, ...args], {
      env: launcherEnv({ NO_COLOR: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

it('run --json on a device that takes no more: exit 1, one line saying so, what committed before it reported; the next run completes the lake', async () => {
  const w = coreWorkspace(emulator);
  const reference = join(w.dir, 'reference');
  try {
    expect((await extractOnce(w.pipelinePath, reference)).status).toBe('ok');
    const args = ['run', w.pipelinePath, '--data-dir', w.dataDir, '--json', '--quiet'];

    // Small files fit, the first larger one does not.
    const cut = await runCliLimited(24, args);
    expect(cut.code, cut.stderr).toBe(1);
    const lines = cut.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0] as string);
    expect(report).toMatchObject({
      status: 'failed',
      exitCode: 1,
      failedStep: 'extract',
      extract: { status: 'failed' },
      build: { status: 'not run', reason: 'the extract failed' },
    });
    const said = `writing the lake in ${w.dataDir} failed: a file outgrew the size this process may write`;
    expect(report.extract.reason).toContain(said);
    expect(report.extract.reason).toContain('what was committed stays');
    expect(cut.stderr).toContain(`avalake: ${said}`);
    expect(cut.stderr).not.toMatch(/^\s+at\s/m);
    // What ended before the failure is reported, and no more than what the lake holds.
    const reported = Object.values(report.extract.streams as Record<string, { rows: number }>);
    const reportedRows = reported.reduce((n, s) => n + s.rows, 0);
    const committed = [...(await readLakeState(w.dataDir)).values()].reduce(
      (n, state) => n + [...state.partitions.values()].reduce((m, p) => m + p.rows, 0),
      0,
    );
    expect(reportedRows).toBeGreaterThan(0);
    expect(reportedRows).toBeLessThanOrEqual(committed);

    // With room again, the next run picks up where the lake stands and ends as one uninterrupted run.
    const next = await runCli(args);
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ status: 'ok', build: { status: 'ok' } });
    const [lake, referenceLake] = await Promise.all([
      lakeRows(w.dataDir, (await readLakeState(w.dataDir)).keys()),
      lakeRows(reference, (await readLakeState(reference)).keys()),
    ]);
    expect(Object.keys(lake).sort()).toEqual(Object.keys(referenceLake).sort());
    for (const stream of Object.keys(referenceLake))
      expect(lake[stream], stream).toEqual(referenceLake[stream]);
  } finally {
    await rm(w.dir, { recursive: true, force: true });
  }
}, 240_000);
