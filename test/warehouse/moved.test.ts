import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

const emulator = useEmulator();

it('the warehouse holds its own rows: it reads the same after the data directory moves, and its lake follows', async () => {
  const w = demoWorkspace(emulator);
  // rewards_daily reads the reward UTXOs (when each reward was paid) beside the rewards.
  expect((await extractOnce(w.pipelinePath, w.dataDir, { streams: 'rewards,utxos,validators' })).status).toBe(
    'ok',
  );
  await buildWarehouse({ dataDir: w.dataDir });
  const counts = (dataDir: string) =>
    withDuckDB(
      join(dataDir, 'warehouse.duckdb'),
      (db) =>
        queryRows(
          db,
          'select (select count(*) from stg_rewards) as rewards, (select count(*) from rewards_daily) as days, (select count(*) from validators_history) as versions',
        ),
      { readOnly: true },
    );
  const before = await counts(w.dataDir);
  expect(Number(before[0]?.rewards)).toBeGreaterThan(0);

  const moved = join(w.dir, 'moved');
  renameSync(w.dataDir, moved);
  expect(await counts(moved)).toEqual(before);
  // The lake's stream folders are relative links: the next build from the new place reads the same rows.
  await buildWarehouse({ dataDir: moved, fromScratch: true });
  expect(await counts(moved)).toEqual(before);
}, 120_000);
