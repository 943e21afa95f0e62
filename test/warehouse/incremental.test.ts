import { copyFileSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { openLake } from '../../src/load/index.ts';
import { type BuildResult, buildWarehouse } from '../../src/warehouse/build.ts';
import { loadModels } from '../../src/warehouse/models.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { expectSameWarehouse, modeOf } from '../helpers/warehouse.ts';

/** Incremental models (rewards, UTXOs, metrics, delegators, ICM) beside ones built whole (ERC-20, validators). */
const STREAMS = 'rewards,utxos,metrics,delegators,icm_messages,erc20_transfers,validators';
const HOUR = 3600;
const DAY = 24 * HOUR;

const emulator = useEmulator();

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

  const names = await expectSameWarehouse(kept, join(w.dataDir, 'warehouse.duckdb'));
  expect(names.length).toBeGreaterThan(10);
}, 240_000);

it('a model built whole is kept while nothing it reads changed, through a compaction; new rows or new SQL rebuild it, and the result equals a build from scratch', async () => {
  const w = demoWorkspace(emulator);
  const models = join(mkdtempSync(join(tmpdir(), 'avalake-models-')), 'models');
  cpSync('sql/models', models, { recursive: true });
  const extract = async (streams: string) => {
    const summary = await extractOnce(w.pipelinePath, w.dataDir, { streams });
    expect(summary.status).toBe('ok');
    return summary.partitions.reduce((n, p) => n + p.rows, 0);
  };
  const build = () => buildWarehouse({ dataDir: w.dataDir, modelsDir: models });
  const modes = (result: BuildResult) =>
    Object.fromEntries(
      [
        'stg_erc20_transfers',
        'erc20_flows_daily',
        'stg_metrics',
        'partition_reads',
        'address_balances_daily',
      ].map((name) => [name, modeOf(result, name)]),
    );
  // The source's clock at 01:00 UTC, so that the next hours stay on one day.
  const now = Math.floor(emulator.clock.now());
  emulator.advance(DAY - (now % DAY) + HOUR);

  await extract('erc20_transfers,metrics,utxos');
  expect(modes(await build())).toEqual({
    stg_erc20_transfers: 'full',
    erc20_flows_daily: 'full',
    stg_metrics: 'full',
    partition_reads: 'full',
    address_balances_daily: 'full',
  });

  // Only metrics moved: the ERC-20 staging model and its mart stay as they are. The build's record of
  // the lake (_lake.partitions) is rewritten, and partition_reads built again from it, but its days
  // are the same: the UTXO balances built on it are kept.
  emulator.advance(HOUR);
  await extract('metrics');
  expect(modes(await build())).toEqual({
    stg_erc20_transfers: 'unchanged',
    erc20_flows_daily: 'unchanged',
    stg_metrics: 'incremental',
    partition_reads: 'unchanged',
    address_balances_daily: 'unchanged',
  });

  // New transfers: both rebuilt (from the generation before the last, which would rebuild them too).
  emulator.advance(6 * HOUR);
  expect(await extract('erc20_transfers')).toBeGreaterThan(0);
  const changed = await build();
  expect(changed.startedFrom).toBe('previous');
  expect(modes(changed)).toMatchObject({ stg_erc20_transfers: 'full', erc20_flows_daily: 'full' });

  // A compaction merges the files it read: the same rows, so kept.
  const lake = await openLake({ dataDir: w.dataDir });
  try {
    expect((await lake.compact('all', ['erc20_transfers'])).length).toBe(1);
  } finally {
    await lake.close();
  }
  // The generation before the last predates the new transfers: it would rebuild them, so this build
  // starts from a copy of the last.
  const compacted = await build();
  expect(compacted.startedFrom).toBe('copy');
  expect(modes(compacted)).toMatchObject({
    stg_erc20_transfers: 'unchanged',
    erc20_flows_daily: 'unchanged',
  });

  // The next day the UTXOs are read again: their day moved, so the balances are built again (to that day).
  emulator.advance(DAY);
  await extract('utxos');
  expect(modes(await build())).toMatchObject({ partition_reads: 'full', address_balances_daily: 'full' });

  // The mart's SQL changed (a comment is enough): it alone is built again.
  const mart = join(models, 'marts', 'erc20_flows_daily.sql');
  writeFileSync(mart, `${readFileSync(mart, 'utf8')}\n-- edited\n`);
  expect(modes(await build())).toMatchObject({ stg_erc20_transfers: 'unchanged', erc20_flows_daily: 'full' });

  const kept = join(w.dir, 'kept.duckdb');
  copyFileSync(join(w.dataDir, 'warehouse.duckdb'), kept);
  await buildWarehouse({ dataDir: w.dataDir, modelsDir: models, fromScratch: true });
  const names = await expectSameWarehouse(kept, join(w.dataDir, 'warehouse.duckdb'));
  expect(names).toEqual(
    expect.arrayContaining(['stg_erc20_transfers BASE TABLE', 'erc20_flows_daily BASE TABLE']),
  );
}, 240_000);
