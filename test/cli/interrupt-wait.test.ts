import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demoPipelineOf } from '../../src/emulator/demo-pipeline.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { acquireLock, readLockHolder } from '../../src/load/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { extractOnce } from '../helpers/extract.ts';
import { duplicateRows, fileHashes } from '../helpers/lake.ts';

/**
 * Issue 11: Ctrl-C (or SIGTERM) during any wait (a retry-after, a rate-budget wait, a backoff) exits within
 * 2 s with 130 and a consistent lake. The real thing: `avalake extract` in a child process, signalled while
 * it waits on the emulator.
 */

const EXIT_BOUND_MS = 2_000;
const emulators: Emulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.close()));
});

async function emulatorWith(options: Parameters<typeof startEmulator>[0] = {}) {
  const e = await startEmulator(options);
  emulators.push(e);
  return e;
}

/** One address and one node of the primary network, as a pipeline file pointing at `emulator`. */
function workspace(emulator: Emulator) {
  const dir = mkdtempSync(join(tmpdir(), 'avalake-interrupt-'));
  const demo = demoPipelineOf(emulator.truth, 'fuji', emulator.url);
  const pipelinePath = join(dir, 'pipeline.json');
  writeFileSync(
    pipelinePath,
    JSON.stringify({
      network: 'fuji',
      urls: demo.urls,
      primary: { addresses: demo.primary.addresses.slice(0, 1), nodeIds: demo.primary.nodeIds.slice(0, 1) },
    }),
  );
  return { pipelinePath, dataDir: join(dir, 'data') };
}

/** `avalake extract` against `emulator`'s URLs, in a child process, its JSON log lines collected. */
function spawnExtract(
  w: { pipelinePath: string; dataDir: string },
  emulator: Emulator,
  extra: string[] = [],
) {
  const url = emulator.url;
  const child = spawn(
    process.execPath,
    [
      'bin/avalake.js',
      'extract',
      w.pipelinePath,
      '--data-dir',
      w.dataDir,
      '--base-url',
      url,
      '--metrics-url',
      url,
      '--node-url',
      `${url}/fuji`,
      '--log-format',
      'json',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const run = { child, stderr: '', exited: exitOf(child) };
  child.stderr?.on('data', (chunk) => {
    run.stderr += chunk;
  });
  return run;
}

const exitOf = (child: ChildProcess) =>
  new Promise<{ code: number | null; at: number }>((resolve) =>
    child.on('exit', (code) => resolve({ code, at: Date.now() })),
  );

async function until(condition: () => boolean, what: string, timeoutMs = 30_000) {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a signal during a wait', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s during a 60 s retry-after: exit 130 within 2 s, the lake as it was committed',
    async (signal) => {
      const good = await emulatorWith();
      const w = workspace(good);
      expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
      const before = fileHashes(w.dataDir);

      // Every answer is a 429 asking for a minute's wait.
      const limited = await emulatorWith({ faults: '429=1:60' });
      const run = spawnExtract(w, limited);
      await until(() => /"msg":"retrying".*"delayMs":60000/.test(run.stderr), 'a 60 s retry wait');
      const signalled = Date.now();
      run.child.kill(signal);
      const { code, at } = await run.exited;
      expect(code, run.stderr).toBe(130);
      expect(at - signalled).toBeLessThan(EXIT_BOUND_MS);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(fileHashes(w.dataDir)).toEqual(before);
      // The lake opens cleanly and the next run carries on from the checkpoints.
      expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
    },
    90_000,
  );

  it('SIGINT while --wait waits for another run’s lock: exit 130 within 2 s, the lock left to its holder', async () => {
    const e = await emulatorWith();
    const w = workspace(e);
    mkdirSync(w.dataDir, { recursive: true });
    const held = await acquireLock(join(w.dataDir, 'avalake.lock'), { command: 'a test holding the lock' });
    try {
      const run = spawnExtract(w, e, ['--wait']);
      await until(
        () => /waiting for another run to release the data directory/.test(run.stderr),
        'the lock wait',
      );
      const signalled = Date.now();
      run.child.kill('SIGINT');
      const { code, at } = await run.exited;
      expect(code, run.stderr).toBe(130);
      expect(at - signalled).toBeLessThan(EXIT_BOUND_MS);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect((await readLockHolder(join(w.dataDir, 'avalake.lock')))?.command).toBe(
        'a test holding the lock',
      );
    } finally {
      await held.release();
    }
  }, 60_000);

  it('SIGINT while the rate budget waits for its window: exit 130 within 2 s, no row lost or doubled', async () => {
    // A 150-CU allowance per 250 s window: one 100-CU rewards page, then the budget waits for the reset.
    const WINDOW_S = 250;
    const intoWindow = (Date.now() / 1000) % WINDOW_S;
    if (intoWindow > WINDOW_S - 20)
      await new Promise((r) => setTimeout(r, (WINDOW_S - intoWindow + 1) * 1000));
    const limited = await emulatorWith({ rateLimit: `minute=${WINDOW_S},perMinute=150` });
    const w = workspace(limited);
    const run = spawnExtract(w, limited, ['--streams', 'rewards']);
    await until(() => limited.requests.total >= 1, 'the first request');
    // The client is waiting, not sending: no request for a second and a half, and no 429 ever.
    const seen = limited.requests.total;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(limited.requests.total).toBe(seen);
    expect(limited.requests.byStatus.get(429) ?? 0).toBe(0);
    const signalled = Date.now();
    run.child.kill('SIGINT');
    const { code, at } = await run.exited;
    expect(code, run.stderr).toBe(130);
    expect(at - signalled).toBeLessThan(EXIT_BOUND_MS);

    const good = await emulatorWith();
    // The lake opens cleanly; the next run, with the limit gone, completes the work without doubling a row.
    writeFileSync(w.pipelinePath, readFileSync(w.pipelinePath, 'utf8').split(limited.url).join(good.url));
    expect((await extractOnce(w.pipelinePath, w.dataDir, { streams: 'rewards' })).status).toBe('ok');
    expect(await duplicateRows(w.dataDir, 'rewards')).toBe(0);
  }, 120_000);
});
