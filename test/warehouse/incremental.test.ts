import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { openLake } from '../../src/load/index.ts';
import { type BuildResult, buildWarehouse } from '../../src/warehouse/build.ts';
import { loadModels } from '../../src/warehouse/models.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { warehouseDifferences } from '../helpers/warehouse.ts';

/** Incremental models (rewards, UTXOs, metrics, delegators, ICM) beside ones built whole (ERC-20, validators). */
const STREAMS = 'rewards,utxos,metrics,delegators,icm_messages,erc20_transfers,validators';
const HOUR = 3600;

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator.close());

const modeOf = (result: BuildResult, name: string) => result.built.find((b) => b.name === name)?.mode;

it('an incremental build after small extracts, across a compaction, equals a build from scratch', async () => {
  const w = demoWorkspace(emulator);
  const incremental = new Set(
    loadModels('sql/models')
      .filter((m) => m.incremental || m.incrementalBy)
      .map((m) => m.name),
  );
  expect([...incremental]).toEqual(expect.arrayContaining(['chain_metrics_daily', 'icm_delivery']));
  const extract = async () =>
    expect((await extractOnce(w.pipelinePath, w.dataDir, { streams: STREAMS })).status).toBe('ok');

  await extract();
  const first = await buildWarehouse({ dataDir: w.dataDir });
  expect(modeOf(first, 'stg_rewards')).toBe('full');
  expect(first.startedFrom).toBe('scratch');

  emulator.advance(HOUR);
  await extract();
  const second = await buildWarehouse({ dataDir: w.dataDir });
  const read = second.built.filter((b) => incremental.has(b.name));
  expect(read.length).toBeGreaterThanOrEqual(5);
  expect(read.every((b) => b.mode === 'incremental' || b.mode === 'unchanged')).toBe(true);
  expect(read.some((b) => b.mode === 'incremental')).toBe(true);
  // The marts over them recompute only the days (or messages) the new rows touch.
  expect(modeOf(second, 'chain_metrics_daily')).toBe('incremental');

  // Compaction (after the build, as run does it) replaces the files the warehouse holds by merged ones;
  // the next build follows them and reads only what is new.
  // From the generation before the last (kept beside the warehouse): it catches up on two extracts.
  emulator.advance(HOUR);
  await extract();
  expect((await buildWarehouse({ dataDir: w.dataDir })).startedFrom).toBe('previous');
  const lake = await openLake({ dataDir: w.dataDir });
  try {
    expect((await lake.compact('all')).length).toBeGreaterThan(0);
  } finally {
    await lake.close();
  }
  emulator.advance(HOUR);
  await extract();
  const third = await buildWarehouse({ dataDir: w.dataDir });
  // The generation before the last never read files the compaction merged: this build copies the last.
  expect(third.startedFrom).toBe('copy');
  for (const b of third.built.filter((b) => incremental.has(b.name)))
    expect([b.name, b.mode]).not.toEqual([b.name, 'full']);

  const kept = join(w.dir, 'incremental.duckdb');
  copyFileSync(join(w.dataDir, 'warehouse.duckdb'), kept);
  const scratch = await buildWarehouse({ dataDir: w.dataDir, fromScratch: true });
  expect(scratch.built.every((b) => b.mode === 'full')).toBe(true);

  const { names, otherNames, tables } = await warehouseDifferences(kept, join(w.dataDir, 'warehouse.duckdb'));
  expect(names).toEqual(otherNames);
  expect(names.length).toBeGreaterThan(10);
  for (const t of tables) expect(t).toEqual({ table: t.table, rows: t.rows, only_a: '0', only_b: '0' });
}, 240_000);
