import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { partitionId } from '../../src/load/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { parseMaxAge, runWarehouseTests } from '../../src/warehouse/test.ts';
import { startEmulator, TEST_EPOCH } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

const HOUR_MS = 3_600_000;
const T0 = TEST_EPOCH * 1000;

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator.close());
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
      new Set(
        ['p-chain', 'x-chain'].map((chain) =>
          partitionId({ network: 'fuji', chain, address: addresses[0] as string }),
        ),
      ),
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
