import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/cli/extract.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { resolveExtractConfig } from '../../src/extract/config.ts';
import { createHttpClient } from '../../src/extract/http.ts';
import { PipelineSchema } from '../../src/extract/pipeline.ts';
import { runExtract } from '../../src/extract/run.ts';
import { STREAMS } from '../../src/extract/streams/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, pipelineWorkspace, smallPipeline } from '../helpers/extract.ts';
import { startFront } from '../helpers/front.ts';
import { duplicateRows } from '../helpers/lake.ts';
import { lakeTotals, truthOf } from '../helpers/truth.ts';

/** The length of the emulator's quota "day", in the seconds of the limiter's clock below. */
const DAY_SECONDS = 3;

/**
 * The limiter's clock, stepped by the test alone: each run has a whole "day" of quota, however long it
 * takes on a busy machine (on the real clock a slow run crossed into the next day, spent two days'
 * quota, and the backfill needed fewer runs than the test asks for).
 */
let quotaNow = 1_000 * DAY_SECONDS;
const nextDay = () => {
  quotaNow += DAY_SECONDS;
};

let emulator: Emulator | undefined;
afterAll(() => emulator?.close());

describe('a per-day compute-unit quota', () => {
  it('spreads a backfill over several runs, each exiting 0 with progress, ending equal to the truth', async () => {
    // 3,000 CUs a "day": thirty 100-CU reward or staking pages. The backfill needs several days.
    emulator = await startEmulator({
      rateLimit: `minute=1,day=${DAY_SECONDS},perMinute=1000000,perDay=3000`,
      rateLimitClock: () => quotaNow,
    });
    // Streams whose records are final once read: an up-to-date partition costs one page a run.
    const names = ['staking_transactions', 'rewards'];
    const workspace = coreWorkspace(emulator, (p) => {
      p.pageSize = { staking_transactions: 5, rewards: 5 };
    });
    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
    const streams = STREAMS.filter((s) => names.includes(s.name));
    const http = createHttpClient({ userAgent: 'avalake/test' });
    const runs: { status: string; rows: number; quota?: string }[] = [];
    try {
      for (let day = 0; day < 30; day++) {
        nextDay();
        const summary = await runExtract({
          pipeline,
          streams,
          dataDir: workspace.dataDir,
          http,
          // A reset further away than this is a spent quota: stop cleanly instead of waiting.
          maxRateWaitMs: 200,
        });
        runs.push({
          status: summary.status,
          rows: summary.partitions.reduce((n, p) => n + p.rows, 0),
          ...(summary.quota ? { quota: summary.quota } : {}),
        });
        expect(exitCodeOf(summary)).toBe(0);
        if (summary.status === 'ok') break;
      }
    } finally {
      await http.close();
    }
    // Every run, so that a failure on a slow machine says which run did what.
    const told = JSON.stringify(runs);
    expect(runs.length, told).toBeGreaterThan(2);
    expect(runs.at(-1)?.status, told).toBe('ok');
    for (const run of runs.slice(0, -1)) {
      expect(run.status, told).toBe('quota');
      expect(run.quota, told).toMatch(/compute-unit quota .* \(3000 CUs\) is spent; it resets at /);
      expect(run.rows, told).toBeGreaterThan(0);
    }
    for (const name of names) expect(await duplicateRows(workspace.dataDir, name)).toBe(0);
    const lake = await lakeTotals(workspace.dataDir, names);
    const truth = await truthOf(emulator, pipeline, names);
    for (const name of names) expect(lake[name]).toEqual(truth[name]);
  }, 180_000);
});

describe('a service that answers nothing but 429, each asking for a short wait', () => {
  it('is a spent quota once that lasts longer than the run waits: exit 0, its host named, the next run continues', async () => {
    const good = await startEmulator();
    // A quarter second's wait each time, no ratelimit-* headers: a run waits one second at most. The nine
    // attempts of one request then span two seconds, past that second (at 0.1 s a request could spend
    // them all just under it and fail as rate limited, as it did once in CI).
    const limited = await startFront(good.url, () => ({
      status: 429,
      headers: { 'retry-after': '0.25' },
      body: { message: 'Too many requests' },
    }));
    const http = createHttpClient({ userAgent: 'avalake/test' });
    try {
      const w = pipelineWorkspace(smallPipeline(good));
      const extractFrom = async (baseUrl: string, maxRateWaitMs?: number) => {
        const config = await resolveExtractConfig(
          { pipeline: w.pipelinePath, dataDir: w.dataDir, baseUrl },
          {},
        );
        return runExtract({
          pipeline: config.pipeline,
          streams: config.streams,
          dataDir: w.dataDir,
          http,
          ...(maxRateWaitMs !== undefined ? { maxRateWaitMs } : {}),
        });
      };
      const started = Date.now();
      const summary = await extractFrom(limited.url, 1_000);
      // The whole retry policy, partition after partition, would take about a second each.
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(summary.status).toBe('quota');
      expect(exitCodeOf(summary)).toBe(0);
      expect(summary.quota).toMatch(
        new RegExp(
          `^${limited.url.replace(/\./g, '\\.')} has answered nothing but 429 for \\d+ s, longer than a run waits for its allowance: its quota is taken as spent$`,
        ),
      );
      expect(summary.partitions.filter((p) => p.status === 'failed')).toEqual([]);
      // The service answers again: the next run carries on from the checkpoints kept, and ends ok.
      const next = await extractFrom(good.url);
      expect(next.status, JSON.stringify(next.partitions.filter((p) => p.status !== 'done'))).toBe('ok');
    } finally {
      await http.close();
      await limited.close();
      await good.close();
    }
  }, 60_000);
});
