import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { loadModels, ModelError } from '../../src/warehouse/models.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

/**
 * `-- optional: model (columns)`: a model that can do without another's rows is built when that one is
 * not, reading an empty table in its place. rewards_daily reads the reward UTXOs for when each reward
 * was paid, and infers it from the RewardValidatorTx otherwise, so a pipeline that reads rewards but no
 * UTXOs (a validator operator's, by node id) still gets the mart.
 */

const emulator = useEmulator();

const rewardsDaily = (dataDir: string) =>
  withDuckDB(
    join(dataDir, 'warehouse.duckdb'),
    async (db) => ({
      rows: await queryRows(db, 'select * from rewards_daily order by all'),
      standIns: await queryRows(
        db,
        "select table_catalog, table_schema from information_schema.tables where table_name = 'stg_utxos'",
      ),
    }),
    { readOnly: true },
  );

it('rewards_daily is built from the rewards alone when the pipeline reads no UTXOs, with the same days as with them', async () => {
  const withUtxos = demoWorkspace(emulator);
  const rewardsOnly = demoWorkspace(emulator);
  expect(
    (await extractOnce(withUtxos.pipelinePath, withUtxos.dataDir, { streams: 'rewards,utxos' })).status,
  ).toBe('ok');
  expect(
    (await extractOnce(rewardsOnly.pipelinePath, rewardsOnly.dataDir, { streams: 'rewards' })).status,
  ).toBe('ok');

  const full = await buildWarehouse({ dataDir: withUtxos.dataDir, select: '+rewards_daily' });
  expect(full.skipped).toEqual([]);
  const alone = await buildWarehouse({ dataDir: rewardsOnly.dataDir, select: '+rewards_daily' });
  expect(alone.skipped).toEqual([{ name: 'stg_utxos', reason: 'no data extracted yet for stream utxos' }]);
  expect(alone.built.map((b) => b.name)).toContain('rewards_daily');

  const expected = await rewardsDaily(withUtxos.dataDir);
  const got = await rewardsDaily(rewardsOnly.dataDir);
  expect(expected.rows.length).toBeGreaterThan(10);
  expect(got.rows).toEqual(expected.rows);
  // The empty stand-in lived for the build alone: the warehouse has no stg_utxos.
  expect(got.standIns).toEqual([]);
  expect(expected.standIns).toEqual([{ table_catalog: 'warehouse', table_schema: 'main' }]);
});

it.each([
  [
    'a model it does not read',
    {
      'marts/m.sql': '-- optional: stg_x (id integer)\nselect 1 as id\n',
      'staging/stg_x.sql': 'select 1 as id\n',
    },
    /m\.sql: optional names stg_x, which is not a model it reads/,
  ],
  [
    'a view',
    {
      'marts/m.sql': '-- materialized: view\n-- optional: stg_x (id integer)\nselect * from stg_x\n',
      'staging/stg_x.sql': 'select 1 as id\n',
    },
    /m\.sql: a model with an optional one is a table/,
  ],
  [
    'no columns',
    { 'marts/m.sql': '-- optional: stg_x\nselect * from stg_x\n', 'staging/stg_x.sql': 'select 1 as id\n' },
    /m\.sql: optional needs "model \(column type, …\)"/,
  ],
])('refuses an optional model for %s (ModelError, exit 2)', (_, files, says) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'avalake-optional-')), 'models');
  for (const [path, sql] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), sql);
  }
  expect(() => loadModels(dir)).toThrow(ModelError);
  expect(() => loadModels(dir)).toThrow(says);
});
