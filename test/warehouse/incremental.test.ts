import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { openLake } from '../../src/load/index.ts';
import { type BuildResult, buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, quoteIdent, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { loadModels } from '../../src/warehouse/models.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

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
  emulator.advance(HOUR);
  await extract();
  await buildWarehouse({ dataDir: w.dataDir });
  const lake = await openLake({ dataDir: w.dataDir });
  try {
    expect((await lake.compact('all')).length).toBeGreaterThan(0);
  } finally {
    await lake.close();
  }
  emulator.advance(HOUR);
  await extract();
  const third = await buildWarehouse({ dataDir: w.dataDir });
  for (const b of third.built.filter((b) => incremental.has(b.name)))
    expect([b.name, b.mode]).not.toEqual([b.name, 'full']);

  const kept = join(w.dir, 'incremental.duckdb');
  copyFileSync(join(w.dataDir, 'warehouse.duckdb'), kept);
  const scratch = await buildWarehouse({ dataDir: w.dataDir, fromScratch: true });
  expect(scratch.built.every((b) => b.mode === 'full')).toBe(true);

  await withDuckDB(':memory:', async (db) => {
    await db.run(`attach '${kept}' as inc (read_only)`);
    await db.run(`attach '${join(w.dataDir, 'warehouse.duckdb')}' as fresh (read_only)`);
    const tables = async (catalog: string) =>
      (
        await queryRows(
          db,
          `select table_name from information_schema.tables where table_catalog = '${catalog}' and table_schema = 'main' order by 1`,
        )
      ).map((r) => String(r.table_name));
    const names = await tables('inc');
    expect(names).toEqual(await tables('fresh'));
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) {
      const t = quoteIdent(name);
      const [diff] = await queryRows(
        db,
        `select (select count(*) from inc.${t}) as rows,
                (select count(*) from (select * from inc.${t} except all select * from fresh.${t})) as only_incremental,
                (select count(*) from (select * from fresh.${t} except all select * from inc.${t})) as only_scratch`,
      );
      expect({ name, ...diff }).toEqual({ name, rows: diff?.rows, only_incremental: '0', only_scratch: '0' });
    }
  });
}, 240_000);
