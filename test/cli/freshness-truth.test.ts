import { afterEach, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/run.ts';
import { formatStatus, readStatus } from '../../src/cli/status.ts';
import { test } from '../../src/cli/test.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { readLakeState } from '../../src/load/index.ts';
import { startEmulator, TEST_EPOCH } from '../helpers/emulator.ts';
import { coreWorkspace } from '../helpers/extract.ts';
import { captureOutput, runReportOf } from '../helpers/output.ts';

/**
 * Freshness as a cron user meets it, through `avalake run` against the emulator: a partition still
 * catching up is not fresh, a planned partition nothing was ever committed for is named, and a
 * quota-limited backfill that progresses is no failure (exit 0, with a warning) while a stuck one is.
 * The clock is faked (Date only): the emulator's compute-unit day is a real day of it, so a run a day
 * later has its quota back, and the commits' times are the days the runs stand for.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const T0 = TEST_EPOCH * 1000;

let emulator: Emulator | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await emulator?.close();
  emulator = undefined;
});

/** `avalake run --json` in-process, at the faked time `at`. */
async function runAt(at: number, args: Parameters<typeof run>[0]) {
  vi.setSystemTime(at);
  const { code, stdout, stderr } = await captureOutput(() =>
    run({ logFormat: 'json', quiet: true, json: true, ...args }, {}),
  );
  return { code, stderr, report: runReportOf(stdout) };
}

it('a quota-limited backfill: each run exits 0 warning of the partitions still catching up, never calling them fresh, until it has caught up', async () => {
  // 3,000 CUs a day: thirty 100-CU pages of five records; the backfill takes several days.
  emulator = await startEmulator({ rateLimit: 'minute=60,day=86400,perMinute=1000000,perDay=3000' });
  const streams = ['staking_transactions', 'rewards'];
  const w = coreWorkspace(emulator, (p) => {
    p.streams = streams;
    p.pageSize = { staking_transactions: 5, rewards: 5 };
  });
  vi.useFakeTimers({ toFake: ['Date'] });
  const runs: { day: number; code: number; status: string; warned: string[]; failed: string[] }[] = [];
  const warnings: string[] = [];
  for (let day = 0; day < 20; day++) {
    // A day and an hour apart: each run has a new day's quota, and what it did not read is past 24 h.
    const { code, report, stderr } = await runAt(T0 + day * (DAY_MS + HOUR_MS), {
      pipeline: w.pipelinePath,
      dataDir: w.dataDir,
    });
    runs.push({
      day,
      code,
      status: report.status,
      warned: report.test.warned?.map((t) => t.name) ?? [],
      failed: report.test.failed.map((t) => `${t.name}: ${t.message}`),
    });
    warnings.push(...(report.test.warned?.map((t) => t.message) ?? []));
    const told = `${JSON.stringify(runs)}\n${stderr}`;
    expect(report.build.status, told).toBe('ok');
    if (report.extract.status === 'ok') {
      // Caught up: fresh, by the same judgement.
      expect(code, told).toBe(0);
      expect(report.test.failed, told).toEqual([]);
      for (const stream of streams) expect(report.test.passed, told).toContain(`freshness ${stream}`);
      break;
    }
    // A backfill progressing under its quota: a clean stop (DESIGN.md), not a page for the cron owner.
    expect(report.extract.status, told).toBe('quota');
    expect(code, told).toBe(0);
    expect(report.status, told).toBe('quota');
    expect(report.test.failed, told).toEqual([]);
    // ... but not fresh either: the partitions the quota stopped have a gap behind their heads.
    const lake = await readLakeState(w.dataDir);
    for (const stream of streams) {
      const behind = [...(lake.get(stream)?.partitions.values() ?? [])].filter((p) => p.caughtUpAt === null);
      if (behind.length === 0) continue;
      expect(report.test.passed, told).not.toContain(`freshness ${stream}`);
      const warning = report.test.warned.find((t) => t.name === `freshness ${stream}`);
      expect(warning?.message, told).toMatch(
        new RegExp(
          `\\b${behind.length} of \\d+ partitions still catching up, read within 1d 0h but not up to the source's head \\(longest behind: network=fuji \\w+=\\S+, never caught up, last read 0s ago\\)`,
        ),
      );
    }
  }
  const told = JSON.stringify(runs);
  expect(runs.length, told).toBeGreaterThan(2);
  expect(runs.at(-1)?.status, told).toBe('ok');
  // Unfinished work goes first, so the partitions caught up early wait for the quota: not read for more
  // than the maximum age, while the backfill progresses. Before, they failed the run (exit 1).
  expect(warnings.join('\n')).toMatch(
    /partitions waiting for the quota, spent before their turn \(longest waiting: .*, last read 1d 1h ago\)/,
  );

  // Stuck: the same world behind a quota that affords no page at all. A day and an hour later nothing of
  // the lake was committed within the maximum age: no backfill is progressing, and that fails (exit 1).
  const starved = await startEmulator({ rateLimit: 'minute=60,day=86400,perMinute=1000000,perDay=50' });
  try {
    const s = coreWorkspace(starved, (p) => {
      p.streams = streams;
      p.pageSize = { staking_transactions: 5, rewards: 5 };
    });
    const last = runs.at(-1)?.day ?? 0;
    const stuck = await runAt(T0 + last * (DAY_MS + HOUR_MS) + DAY_MS + HOUR_MS, {
      pipeline: s.pipelinePath,
      dataDir: w.dataDir,
    });
    expect(stuck.report.extract.status, stuck.stderr).toBe('quota');
    expect(stuck.report.extract.streams.rewards?.rows).toBe(0);
    expect(stuck.code).toBe(1);
    expect(stuck.report).toMatchObject({ status: 'failed', failedStep: 'test' });
    expect(stuck.report.test.failed.map((f) => f.name).sort()).toEqual(
      streams.map((name) => `freshness ${name}`).sort(),
    );
    for (const f of stuck.report.test.failed)
      expect(f.message).toMatch(
        /^\d+ of \d+ partitions last checked more than 1d 0h ago \(oldest: .*, 1d 1h ago\)$/,
      );
  } finally {
    await starved.close();
  }
}, 300_000);

it('after a three-week cron gap, a newest-first walk the quota stopped above its old head is still catching up, not fresh', async () => {
  // One chain's daily txCount since October: a newest-first series; 300 CUs a day, three metric pages.
  emulator = await startEmulator({ rateLimit: 'minute=60,day=86400,perMinute=1000000,perDay=300' });
  const edit = (pageSize?: number) => (p: Record<string, unknown>) => {
    const metrics = p.metrics as { chains: string[]; metrics?: string[]; intervals: string[] };
    metrics.chains = metrics.chains.slice(0, 1);
    metrics.metrics = ['txCount'];
    metrics.intervals = ['day'];
    p.streams = ['metrics'];
    p.start = '2026-10-01';
    if (pageSize) p.pageSize = { metrics: pageSize };
  };
  const w = coreWorkspace(emulator, edit());
  vi.useFakeTimers({ toFake: ['Date'] });
  const first = await runAt(T0, { pipeline: w.pipelinePath, dataDir: w.dataDir });
  expect(first.code, first.stderr).toBe(0);
  expect(first.report.test.passed).toContain('freshness metrics');

  // Three weeks without a run: the source's series grew by 21 daily points. Read five a page, the walk
  // spends the day's quota on the newest fifteen and stops above the head it left three weeks ago.
  emulator.clock.set(TEST_EPOCH + 21 * 86_400);
  const gap = coreWorkspace(emulator, edit(5));
  const behind = await runAt(T0 + 21 * DAY_MS, { pipeline: gap.pipelinePath, dataDir: w.dataDir });
  expect(behind.report.extract.status, behind.stderr).toBe('quota');
  expect(behind.report.extract.streams.metrics?.rows).toBe(15);
  // Committed just now, its newest point the source's newest: before, that read as fresh.
  expect(behind.report.test.passed).not.toContain('freshness metrics');
  expect(behind.report.test.warned).toEqual([
    {
      name: 'freshness metrics',
      message: expect.stringMatching(
        /^1 of 1 partitions still catching up, read within 1d 0h but not up to the source's head \(longest behind: network=fuji chain=\S+ metric=txCount interval=day, last caught up 21d 0h ago, last read 0s ago\)$/,
      ),
    },
  ]);
  // A clean stop on a quota, progressing: exit 0, as the extract alone exits.
  expect(behind.code).toBe(0);
  expect(behind.report.status).toBe('quota');
  // `avalake test` judges it the same way: a warning, exit 0.
  const tested = await captureOutput(() => test({ dataDir: w.dataDir }, T0 + 21 * DAY_MS));
  expect(tested.code, tested.stderr).toBe(0);
  expect(tested.stdout).toMatch(
    /^WARN {3}freshness metrics: 1 of 1 partitions still catching up, read within 1d 0h but not up to the source's head \(.*last caught up 21d 0h ago, last read 0s ago\)$/m,
  );
  expect(tested.stdout).toMatch(/^\d+ passed, 1 warned, 0 failed, 0 errors, \d+ skipped$/m);
  // `status` says so too.
  const status = await readStatus(w.dataDir, T0 + 21 * DAY_MS);
  expect(status.partitions.map((p) => [p.lastCommitAt, p.caughtUpAt])).toEqual([
    [new Date(T0 + 21 * DAY_MS).toISOString(), new Date(T0).toISOString()],
  ]);
  expect(formatStatus(status)).toContain(
    "1 partition still catching up: the last walk stopped before the source's head (a spent quota, an interrupt); the next run goes on (caughtUpAt in --json)",
  );

  // The next days' runs go on down to the old head (page tokens live a day: a walk carried on passes
  // from the top again, skipping what it read), warning until then; then it is fresh again.
  let day = 22;
  for (; day < 30; day++) {
    const next = await runAt(T0 + day * DAY_MS, { pipeline: gap.pipelinePath, dataDir: w.dataDir });
    expect(next.code, next.stderr).toBe(0);
    if (next.report.extract.status === 'ok') {
      expect(next.report.test.passed).toContain('freshness metrics');
      expect(next.report.test.warned).toEqual([]);
      break;
    }
    expect(next.report.test.warned.map((t) => t.message)).toEqual([
      expect.stringContaining(`last caught up ${day}d 0h ago`),
    ]);
  }
  expect(day).toBeLessThan(30);
  const [state] = [...((await readLakeState(w.dataDir)).get('metrics')?.partitions.values() ?? [])];
  expect(state?.caughtUpAt).toBe(new Date(T0 + day * DAY_MS).toISOString());
}, 120_000);

it('a chain whose partitions failed since the day it was added fails freshness as never checked, by name', async () => {
  emulator = await startEmulator();
  const chains = (p: Record<string, unknown>) => (p.evm as { chains: string[] }).chains;
  let known = '';
  const w = coreWorkspace(emulator, (p) => {
    p.streams = ['erc20_transfers'];
    known = chains(p)[0] as string;
    (p.evm as { chains: string[] }).chains = [known];
  });
  vi.useFakeTimers({ toFake: ['Date'] });
  const first = await runAt(T0, { pipeline: w.pipelinePath, dataDir: w.dataDir });
  expect(first.code, first.stderr).toBe(0);

  // A chain id the service does not know is added: its partitions fail every run, the others commit.
  const added = coreWorkspace(emulator, (p) => {
    p.streams = ['erc20_transfers'];
    (p.evm as { chains: string[] }).chains = [known, '999999'];
  });
  for (const day of [1, 2, 3]) {
    const { code, report, stderr } = await runAt(T0 + day * DAY_MS, {
      pipeline: added.pipelinePath,
      dataDir: w.dataDir,
    });
    expect(report.extract.status, stderr).toBe('partial');
    // Before, freshness judged only what the lake held: it passed, and the run exited 3, a partial run
    // a scheduler may accept, day after day.
    expect(report.test.failed.map((f) => f.name)).toEqual(['freshness erc20_transfers']);
    expect(report.test.failed[0]?.message).toMatch(
      /^3 of 6 partitions never checked: nothing committed yet, every run failed or stopped before them \(network=fuji chain=999999 address=0x[0-9a-f]{40}, network=fuji chain=999999 address=0x[0-9a-f]{40}, network=fuji chain=999999 address=0x[0-9a-f]{40}\)$/,
    );
    expect(code).toBe(1);
    expect(report).toMatchObject({ status: 'failed', exitCode: 1, failedStep: 'extract' });
  }
}, 120_000);
