import { join } from 'node:path';
import { expect, it } from 'vitest';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { withDuckDB } from '../../src/warehouse/duckdb.ts';
import {
  applyDelta,
  attachScratch,
  ensureBookkeeping,
  keyHoldsAfterDelta,
  recordUnique,
  uniqueKeyHolds,
} from '../../src/warehouse/incremental.ts';
import type { Model } from '../../src/warehouse/models.ts';
import { runWarehouseTests } from '../../src/warehouse/test.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

/**
 * The tests group an incremental model's whole table for its key only until a build has seen it hold:
 * after that each build records whether it still holds (the rows it added had keys of their own), so a
 * table of a year of snapshots is not grouped again every run. A key broken by new rows, or rows written
 * by hand, make the tests group it again, and fail.
 */

const model = (name: string): Model => ({
  name,
  layer: 'staging',
  path: `${name}.sql`,
  sql: `-- ${name}`,
  materialized: 'table',
  description: '',
  columns: [],
  unique: ['id'],
  notNull: [],
  acceptedValues: [],
  incremental: true,
  compareToLast: false,
  lakeStreams: ['s'],
  dependsOn: [],
  optional: [],
});

it('a delta whose keys hold keeps the record; one with a repeated or null key drops it', async () => {
  await withDuckDB(':memory:', async (db) => {
    await ensureBookkeeping(db);
    await attachScratch(db);
    const t = model('t');
    await db.run('create table t as select i as id, i * 10 as v from range(5) as r(i)');
    // Nothing recorded: the first delta checks the whole table once.
    expect(await keyHoldsAfterDelta(db, t, await applyDelta(db, t, 'select 5 as id, 50 as v'))).toBe(true);
    await recordUnique(db, t, true);
    expect(await uniqueKeyHolds(db, t)).toBe(true);
    // A new version of a key replaces it.
    expect(await applyDelta(db, t, 'select 1 as id, 11 as v')).toBe(true);
    await recordUnique(db, t, await keyHoldsAfterDelta(db, t, true));
    expect(await uniqueKeyHolds(db, t)).toBe(true);
    for (const broken of [
      'select 7 as id, 1 as v union all select 7, 2',
      'select null::bigint as id, 1 as v',
    ]) {
      const holds = await keyHoldsAfterDelta(db, t, await applyDelta(db, t, broken));
      expect(holds, broken).toBe(false);
      await recordUnique(db, t, holds);
      expect(await uniqueKeyHolds(db, t)).toBe(false);
      await recordUnique(db, t, true);
    }
    // Another SQL for the model: the record is not its.
    expect(await uniqueKeyHolds(db, { ...t, sql: '-- t, edited' })).toBe(false);
  });
});

const emulator = useEmulator();

it('avalake test takes the key of a model extended since its check as held, and groups it again when rows were written by hand', async () => {
  const w = demoWorkspace(emulator);
  const streams = 'validators,rewards,current_supply';
  const step = async () => {
    emulator.advance(3600);
    expect((await extractOnce(w.pipelinePath, w.dataDir, { streams })).status).toBe('ok');
    await buildWarehouse({ dataDir: w.dataDir });
  };
  const uniqueOf = async (name: string) => {
    const report = await runWarehouseTests({ dataDir: w.dataDir, select: name });
    return report.outcomes.find((o) => o.kind === 'unique' && o.subject === name);
  };

  await step();
  // Built whole: grouped by the test.
  expect(await uniqueOf('stg_validators')).toMatchObject({ status: 'pass', message: '' });
  await step();
  await step();
  for (const name of ['stg_validators', 'validators_history', 'stg_rewards'])
    expect(await uniqueOf(name), name).toMatchObject({
      status: 'pass',
      message: expect.stringContaining('as the build recorded it'),
    });

  // A row copied into the warehouse by hand: the count moved, so the key is grouped again, and fails.
  const warehouse = join(w.dataDir, 'warehouse.duckdb');
  await withDuckDB(warehouse, (db) =>
    db.run('insert into stg_validators select * from stg_validators limit 1'),
  );
  expect(await uniqueOf('stg_validators')).toMatchObject({ status: 'fail', failures: 1 });
}, 120_000);
