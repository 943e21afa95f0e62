import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/run.ts';
import { createClock } from '../../src/emulator/clock.ts';
import { createContinuedEmulator, GENESIS_FILE } from '../../src/emulator/continued.ts';
import { demoPipelineOf } from '../../src/emulator/demo-pipeline.ts';
import { createEmulator, DEFAULT_SEED } from '../../src/emulator/index.ts';
import { createWorld } from '../../src/emulator/world/index.ts';

/**
 * `npm run demo` on any day: pipelines/demo.json names only what every world of the seed holds, so the
 * emulator started a month or a year after the file was written still has all of it (issue 11).
 */

const DAY = 86_400;
/** 2026-11-23, the day pipelines/demo.json was last written by `npm run demo-pipeline`. */
const WRITTEN = 1_795_392_000;
const DEMO = 'pipelines/demo.json';
const demo = JSON.parse(readFileSync(DEMO, 'utf8')) as Record<string, unknown>;

/** What `npm run demo-pipeline` would write on the day `at`. */
const demoOn = (at: number) => {
  const world = createWorld({ seed: DEFAULT_SEED, scale: 'small', clock: createClock(`fixed:${at}`) });
  return {
    ...demoPipelineOf(world, 'fuji', (demo.urls as { data: string }).data),
    streams: demo.streams,
    start: demo.start,
  };
};

describe('the demo on any date', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('names the same ids whatever day the world started', () => {
    for (const days of [-400, 0, 30, 365, 3650]) expect(demoOn(WRITTEN + days * DAY)).toEqual(demo);
  });

  // Like `faketime '+N days' npm run demo`: the emulator and avalake both live N days later. A year on,
  // the two whole-chain EVM walks are left out (they name no id, only chain ids, which the test above
  // holds; they are two thirds of the run's time, and their own tests bound them by `start`).
  it.each([
    { days: 30, skip: [] },
    { days: 365, skip: ['evm_blocks', 'evm_transactions'] },
  ])(
    'runs $days days after the file was written: exit 0, every stream ok',
    async ({ days, skip }) => {
      const at = WRITTEN + days * DAY;
      vi.useFakeTimers({ toFake: ['Date'], now: at * 1000, shouldAdvanceTime: true });
      const emulator = await createEmulator({ seed: DEFAULT_SEED, clock: `fixed:${at}`, rateLimit: 'off' });
      const streams = (demo.streams as string[]).filter((s) => !skip.includes(s));
      const printed: string[] = [];
      const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
        printed.push(String(chunk));
        return true;
      });
      let code: number;
      try {
        code = await run(
          {
            pipeline: DEMO,
            dataDir: join(mkdtempSync(join(tmpdir(), 'avalake-demo-')), 'data'),
            baseUrl: emulator.url,
            metricsUrl: emulator.url,
            nodeUrl: `${emulator.url}/fuji`,
            ...(skip.length > 0 ? { streams: streams.join(',') } : {}),
            json: true,
            quiet: true,
          },
          {},
        );
      } finally {
        write.mockRestore();
        await emulator.close();
      }
      const report = JSON.parse(printed.join('')) as {
        status: string;
        extract: { streams: Record<string, { failed: number; rows: number }> };
        test: { failed: unknown[] };
      };
      expect({ code, status: report.status, testsFailed: report.test.failed }).toEqual({
        code: 0,
        status: 'ok',
        testsFailed: [],
      });
      const ran = report.extract.streams;
      expect(Object.keys(ran).sort()).toEqual(streams.sort());
      for (const [name, s] of Object.entries(ran))
        expect({ name, failed: s.failed }).toEqual({ name, failed: 0 });
      // The genesis block, read by its id: the one P-Chain block id every world of the seed has.
      expect(ran.p_chain_blocks_by_id?.rows).toBe(1);
    },
    240_000,
  );

  // `npm run demo` today and again tomorrow: the second world must be the first one, a day on, or the
  // snapshot it takes disagrees with the staking transactions the first run stored.
  it('runs again a day later on the same world (its genesis kept in the data directory): exit 0 both times', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'avalake-demo-')), 'data');
    const runOn = async (at: number) => {
      vi.useFakeTimers({ toFake: ['Date'], now: at * 1000, shouldAdvanceTime: true });
      const emulator = await createContinuedEmulator(dataDir, {
        seed: DEFAULT_SEED,
        clock: `fixed:${at}`,
        rateLimit: 'off',
      });
      const printed: string[] = [];
      const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
        printed.push(String(chunk));
        return true;
      });
      try {
        const code = await run(
          {
            pipeline: DEMO,
            dataDir,
            baseUrl: emulator.url,
            metricsUrl: emulator.url,
            nodeUrl: `${emulator.url}/fuji`,
            streams: 'validators,staking_transactions,validator_delegators',
            json: true,
            quiet: true,
          },
          {},
        );
        const report = JSON.parse(printed.join('')) as { test: { failed: { name: string }[] } };
        return { code, failed: report.test.failed.map((f) => f.name) };
      } finally {
        write.mockRestore();
        await emulator.close();
        vi.useRealTimers();
      }
    };
    const first = WRITTEN + 30 * DAY;
    expect(await runOn(first)).toEqual({ code: 0, failed: [] });
    expect(readFileSync(join(dataDir, GENESIS_FILE), 'utf8')).toMatch(/^\d{4}-\d{2}-\d{2}\n$/);
    expect(await runOn(first + DAY + 3600)).toEqual({ code: 0, failed: [] });
  }, 240_000);
});
