import { readFileSync } from 'node:fs';
import { afterEach, expect, it, vi } from 'vitest';
import type { HttpClient } from '../../src/extract/http.ts';
import { readLakeState } from '../../src/load/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { durationText } from '../../src/warehouse/duration.ts';
import { parseMaxAge } from '../../src/warehouse/freshness.ts';
import { runWarehouseTests } from '../../src/warehouse/test.ts';
import { fetchJson, TEST_EPOCH, useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

const HOUR_MS = 3_600_000;
const T0 = TEST_EPOCH * 1000;

const emulator = useEmulator();
afterEach(() => {
  vi.useRealTimers();
});

it('freshness is each partition’s last check: a quiet stream stays fresh, a partition left behind fails by name', async () => {
  // Four UTXO partitions (two addresses on the P- and X-Chain); the world's clock stands still, so the
  // second run finds nothing new anywhere.
  let addresses: string[] = [];
  const w = demoWorkspace(emulator, (p) => {
    const primary = p.primary as { addresses: string[] };
    addresses = primary.addresses.slice(0, 2);
    primary.addresses = addresses;
  });
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
  expect((await extractOnce(w.pipelinePath, w.dataDir, { streams: 'utxos' })).status).toBe('ok');
  vi.setSystemTime(T0 + 20 * HOUR_MS);
  const quiet = await extractOnce(w.pipelinePath, w.dataDir, { streams: 'utxos' });
  expect(quiet.partitions.reduce((n, p) => n + p.rows, 0)).toBe(0);
  vi.useRealTimers();
  await buildWarehouse({ dataDir: w.dataDir, select: 'stg_utxos' });

  // 30 hours after the data last changed, 10 after the last (empty) check: fresh.
  const later = await runWarehouseTests({ dataDir: w.dataDir, select: 'stg_utxos', now: T0 + 30 * HOUR_MS });
  expect(later.outcomes.find((o) => o.name === 'freshness utxos')?.status).toBe('pass');

  // One address is no longer read (as if its partitions failed every run since): 30 hours later they
  // are named, while the other address keeps the stream fresh.
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0 + 40 * HOUR_MS);
  const edited = demoWorkspace(emulator, (p) => {
    (p.primary as { addresses: string[] }).addresses = addresses.slice(0, 1);
  });
  expect((await extractOnce(edited.pipelinePath, w.dataDir, { streams: 'utxos' })).status).toBe('ok');
  vi.useRealTimers();
  const now = T0 + 50 * HOUR_MS;
  const report = await runWarehouseTests({
    dataDir: w.dataDir,
    select: 'stg_utxos',
    now,
    maxAge: parseMaxAge(['24h']),
  });
  const stale = report.outcomes.find((o) => o.name === 'freshness utxos');
  expect(stale?.status).toBe('fail');
  expect(stale?.message).toBe(
    `2 of 4 partitions last checked more than 1d 0h ago (oldest: network=fuji chain=p-chain address=${addresses[1]}, 1d 6h ago)`,
  );
  expect(stale?.sample?.rows.map((r) => r[1])).toEqual([
    `network=fuji chain=p-chain address=${addresses[1]}`,
    `network=fuji chain=x-chain address=${addresses[1]}`,
  ]);

  // `run` judges only the partitions its pipeline reads now: the address taken out is not stale forever.
  const planned = new Map([
    [
      'utxos',
      ['p-chain', 'x-chain'].map((chain) => ({ network: 'fuji', chain, address: addresses[0] as string })),
    ],
  ]);
  const judged = await runWarehouseTests({
    dataDir: w.dataDir,
    select: 'stg_utxos',
    now,
    partitions: planned,
  });
  expect(judged.outcomes.find((o) => o.name === 'freshness utxos')?.status).toBe('pass');
}, 120_000);

it('a series the source stopped extending fails freshness by its cadence, though every run succeeds', async () => {
  // One chain's daily txCount and its daily TPS: series the service extends once a day.
  const w = demoWorkspace(emulator, (p) => {
    const metrics = p.metrics as { chains: string[]; metrics?: string[]; intervals: string[] };
    metrics.chains = metrics.chains.slice(0, 1);
    metrics.metrics = ['txCount'];
    metrics.intervals = ['day'];
  });
  const chain = JSON.parse(readFileSync(w.pipelinePath, 'utf8')).metrics.chains[0] as string;
  const streams = 'metrics,avg_tps';
  // The truth: the newest point the service publishes now, and its clock.
  const newest = await fetchJson<{ results: { timestamp: number }[] }>(
    `${emulator.url}/v2/chains/${chain}/metrics/txCount?timeInterval=day&pageSize=1`,
  );
  const newestPoint = (newest.body.results[0] as { timestamp: number }).timestamp;
  const clock = Math.floor(emulator.clock.now());

  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
  expect((await extractOnce(w.pipelinePath, w.dataDir, { streams })).status).toBe('ok');
  const [state] = [...((await readLakeState(w.dataDir)).get('metrics')?.partitions.values() ?? [])];
  expect(state).toMatchObject({
    newestRecordAt: newestPoint * 1000,
    sourceAt: clock * 1000,
    cadence: 86_400 + 3_600,
  });
  const judge = async (now: number) =>
    (await runWarehouseTests({ dataDir: w.dataDir, select: 'stg_metrics,stg_avg_tps', now })).outcomes.filter(
      (o) => o.kind === 'freshness',
    );
  vi.useRealTimers();
  await buildWarehouse({ dataDir: w.dataDir, select: 'stg_metrics,stg_avg_tps' });
  expect((await judge(T0 + HOUR_MS)).map((o) => [o.subject, o.status])).toEqual([
    ['avg_tps', 'pass'],
    ['metrics', 'pass'],
  ]);

  // Three days on, the service answers with its clock moved on and its series as they were (a stalled
  // aggregation): every run succeeds and commits a check, yet the newest point is three days old.
  const stalled = (http: HttpClient): HttpClient => ({
    async send(request) {
      const answer = await http.send(request);
      return {
        ...answer,
        headers: { ...answer.headers, date: new Date((clock + 3 * 86_400) * 1000).toUTCString() },
      };
    },
    close: () => http.close(),
  });
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0 + 72 * HOUR_MS);
  const quiet = await extractOnce(w.pipelinePath, w.dataDir, { streams }, stalled);
  expect(quiet.status).toBe('ok');
  expect(quiet.partitions.reduce((n, p) => n + p.rows, 0)).toBe(0);
  vi.useRealTimers();

  const outcomes = await judge(T0 + 73 * HOUR_MS);
  const lag = clock + 3 * 86_400 - newestPoint;
  expect(outcomes.map((o) => [o.subject, o.status])).toEqual([
    ['avg_tps', 'fail'],
    ['metrics', 'fail'],
  ]);
  const metrics = outcomes.find((o) => o.subject === 'metrics');
  expect(metrics?.message).toBe(
    `1 of 1 partitions with a newest record more than 1d 0h overdue (worst: network=fuji chain=${chain} metric=txCount interval=day, newest record ${durationText(lag)} behind the source, one is due every 1d 1h)`,
  );
  expect(metrics?.sample?.rows[0]?.slice(5, 8)).toEqual([
    new Date(newestPoint * 1000).toISOString(),
    new Date((clock + 3 * 86_400) * 1000).toISOString(),
    durationText(lag),
  ]);

  // A longer maximum age for the stream tolerates it; the last check alone never noticed.
  const tolerant = await runWarehouseTests({
    dataDir: w.dataDir,
    select: 'stg_metrics',
    now: T0 + 73 * HOUR_MS,
    maxAge: parseMaxAge(['24h', 'metrics=3d']),
  });
  expect(tolerant.outcomes.find((o) => o.subject === 'metrics')?.status).toBe('pass');
}, 120_000);

it('a window with an end is not held to a cadence: its newest record is meant to stay where the window ends', async () => {
  const w = demoWorkspace(emulator, (p) => {
    const metrics = p.metrics as { chains: string[]; metrics?: string[]; intervals: string[] };
    metrics.chains = metrics.chains.slice(0, 1);
    metrics.metrics = ['txCount'];
    metrics.intervals = ['day'];
    p.start = '2026-10-01';
    p.end = '2026-10-08';
  });
  expect((await extractOnce(w.pipelinePath, w.dataDir, { streams: 'metrics' })).status).toBe('ok');
  const [state] = [...((await readLakeState(w.dataDir)).get('metrics')?.partitions.values() ?? [])];
  expect(state?.newestRecordAt).toBe(Date.parse('2026-10-07T00:00:00Z'));
  expect(state?.cadence).toBeUndefined();
  await buildWarehouse({ dataDir: w.dataDir, select: 'stg_metrics' });
  const report = await runWarehouseTests({ dataDir: w.dataDir, select: 'stg_metrics', now: Date.now() });
  expect(report.outcomes.find((o) => o.subject === 'metrics')?.status).toBe('pass');
}, 60_000);
