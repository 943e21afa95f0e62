import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { readLakeState } from '../../src/load/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { startEmulator, TEST_EPOCH } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

/** Snapshot streams whose answers stay put while the world's clock does. */
const STREAMS = 'validators,validator_delegators,p_chain_balances,current_supply';
const DAY = 86_400;

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator.close());
afterEach(() => {
  vi.useRealTimers();
});

/** Data files of the streams, as the commit log lists them. */
const dataFiles = async (dataDir: string) =>
  [...(await readLakeState(dataDir)).values()].reduce(
    (n, s) => n + s.files.filter((f) => f.table === 'data').length,
    0,
  );

it('an unchanged snapshot writes no data file, and the validators history equals the one from full snapshots', async () => {
  const kept = demoWorkspace(emulator); // snapshots compared with the last answer
  const full = demoWorkspace(emulator); // every snapshot written whole, as before
  // Both lakes observe at the same moments: a run stamps its snapshots with its start time.
  vi.useFakeTimers({ toFake: ['Date'] });
  const observe = async (at: number) => {
    vi.setSystemTime(at * 1000);
    expect((await extractOnce(kept.pipelinePath, kept.dataDir, { streams: STREAMS })).status).toBe('ok');
    expect(
      (await extractOnce(full.pipelinePath, full.dataDir, { streams: STREAMS, fullRefresh: true })).status,
    ).toBe('ok');
  };

  await observe(TEST_EPOCH);
  emulator.advance(DAY); // delegations move on: the validator set changes
  await observe(TEST_EPOCH + DAY);
  const afterChange = await dataFiles(kept.dataDir);
  await observe(TEST_EPOCH + DAY + 900); // the world stood still: the same answers
  await observe(TEST_EPOCH + DAY + 1800);

  expect(await dataFiles(kept.dataDir)).toBe(afterChange);
  expect(await dataFiles(full.dataDir)).toBeGreaterThan(afterChange);
  const state = await readLakeState(kept.dataDir);
  const partitions = [...state.values()].flatMap((s) => [...s.partitions.values()]);
  // Every partition was confirmed at the two quiet runs' start times (one that did not change over the
  // day, a quiet address's balance say, was confirmed at the second run already).
  expect(partitions.length).toBeGreaterThan(4);
  for (const p of partitions)
    expect(p.confirmations.map(([at]) => at).slice(-2)).toEqual([
      (TEST_EPOCH + DAY + 900) * 1000,
      (TEST_EPOCH + DAY + 1800) * 1000,
    ]);
  vi.useRealTimers();

  await buildWarehouse({
    dataDir: kept.dataDir,
    select: '+validators_history,stg_validator_delegators,stg_p_chain_balances,stg_current_supply',
  });
  await buildWarehouse({
    dataDir: full.dataDir,
    select: '+validators_history,stg_validator_delegators,stg_p_chain_balances,stg_current_supply',
  });
  await withDuckDB(':memory:', async (db) => {
    await db.run(`attach '${kept.dataDir}/warehouse.duckdb' as kept (read_only)`);
    await db.run(`attach '${full.dataDir}/warehouse.duckdb' as whole (read_only)`);
    for (const table of [
      'stg_validators',
      'stg_validator_delegators',
      'stg_p_chain_balances',
      'stg_current_supply',
      'validators_history',
    ]) {
      const [counts] = await queryRows(
        db,
        `select (select count(*) from kept.${table}) as kept_rows,
                (select count(*) from whole.${table}) as full_rows,
                (select count(*) from (select * from kept.${table} except all select * from whole.${table})) as only_kept,
                (select count(*) from (select * from whole.${table} except all select * from kept.${table})) as only_full`,
      );
      expect({ table, ...counts }).toEqual({
        table,
        kept_rows: counts?.full_rows,
        full_rows: counts?.full_rows,
        only_kept: '0',
        only_full: '0',
      });
      expect(Number(counts?.full_rows)).toBeGreaterThan(0);
    }
    // Four observations: the history knows the validators were still there at the last one.
    const [current] = await queryRows(
      db,
      `select count(*) filter (where is_current) as current, max(last_seen_at) as last_seen from kept.validators_history`,
    );
    expect(Number(current?.current)).toBeGreaterThan(0);
    expect(Date.parse(String(current?.last_seen))).toBe((TEST_EPOCH + DAY + 1800) * 1000);
  });
}, 180_000);
