import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/run.ts';
import { acquireLock, LockHeldError } from '../../src/load/lock.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { coreWorkspace } from '../helpers/extract.ts';
import { captureOutput, runReportOf } from '../helpers/output.ts';

/**
 * NTP steps the wall clock while avalake is running (a VM resumed, a clock that drifted an hour). What
 * a run measures (its durations, how long it waits) is on the monotonic clock, so the step changes none
 * of it; only the times it records (stamps, `startedAt`) follow the wall clock.
 */

const HOUR_MS = 3600_000;
const emulator = useEmulator();
afterEach(() => {
  vi.restoreAllMocks();
});

/** `Date.now()` from the moment `stepped()` first holds on: the real clock moved by `byMs`. */
function stepWallClock(byMs: number, stepped: () => boolean) {
  const realNow = Date.now.bind(Date);
  let after = false;
  vi.spyOn(Date, 'now').mockImplementation(() => {
    after ||= stepped();
    return realNow() + (after ? byMs : 0);
  });
}

describe('the wall clock steps during a run', () => {
  it('back an hour during the extract: the run --json summary still says how long each step took', async () => {
    const w = coreWorkspace(emulator);
    // The step comes once the extract holds the data directory's lock: after the run began.
    stepWallClock(-HOUR_MS, () => existsSync(join(w.dataDir, 'avalake.lock')));
    const began = performance.now();
    const { code, stdout, stderr } = await captureOutput(() =>
      run({ pipeline: w.pipelinePath, dataDir: w.dataDir, json: true, logFormat: 'json', quiet: true }, {}),
    );
    const tookSeconds = (performance.now() - began) / 1000;
    expect(code, stderr).toBe(0);
    const report = runReportOf(stdout);
    expect(report.status).toBe('ok');
    // Before, the durations measured across the step came out about an hour negative (-3595 s).
    const steps = [report.extract, report.build, report.test, report.compact];
    for (const seconds of [report.seconds, ...steps.map((s) => s.seconds)]) {
      expect(seconds).toBeGreaterThanOrEqual(0);
      expect(seconds).toBeLessThanOrEqual(tookSeconds + 0.1);
    }
    expect(report.extract.seconds).toBeGreaterThan(0);
    const streams = Object.entries(report.extract.streams);
    expect(streams.length).toBeGreaterThan(0);
    for (const [stream, s] of streams) {
      expect(s.seconds, stream).toBeGreaterThanOrEqual(0);
      expect(s.seconds, stream).toBeLessThanOrEqual(report.extract.seconds + 0.1);
    }
  }, 120_000);

  it('forward an hour while waiting for a lock: the wait still lasts its timeout, not zero', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'avalake-lock-step-'));
    const lockFile = join(dir, 'warehouse.duckdb.lock');
    const held = await acquireLock(lockFile, { command: 'another build' });
    try {
      let polls = 0;
      // The step comes after the first look at the held lock: the waiter has started its wait.
      stepWallClock(HOUR_MS, () => polls > 0);
      const began = performance.now();
      const error = await acquireLock(lockFile, {
        wait: true,
        timeoutMs: 1500,
        pollMs: 100,
        onWait: () => {
          polls++;
        },
      }).catch((e: unknown) => e);
      const waitedMs = performance.now() - began;
      expect(error).toBeInstanceOf(LockHeldError);
      // Before, the hour the clock jumped counted as waited: it gave up after one poll.
      expect(waitedMs).toBeGreaterThanOrEqual(1400);
    } finally {
      await held.release();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
