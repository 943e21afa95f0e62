import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { openLake, partitionId, readLakeState } from '../../src/load/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { TEST_EPOCH, useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { queryLake } from '../helpers/lake.ts';

/** Snapshot streams whose answers stay put while the world's clock does. */
const STREAMS = 'validators,validator_delegators,p_chain_balances,current_supply';
const DAY = 86_400;
const MODELS = '+validators_history,stg_validator_delegators,stg_p_chain_balances,stg_current_supply';

const emulator = useEmulator();
afterEach(() => {
  vi.useRealTimers();
});

/** Data files of the streams, as the commit log lists them. */
const dataFiles = async (dataDir: string) =>
  [...(await readLakeState(dataDir)).values()].reduce(
    (n, s) => n + s.files.filter((f) => f.table === 'data').length,
    0,
  );

/** Each stream's partitions' confirmation times, pending in the commit log's state or folded into its files. */
async function confirmationsOf(dataDir: string): Promise<Map<string, number[]>> {
  const byPartition = new Map<string, number[]>();
  const add = (partition: string, at: number) =>
    byPartition.set(
      partition,
      [...(byPartition.get(partition) ?? []), at].sort((a, b) => a - b),
    );
  for (const state of (await readLakeState(dataDir)).values()) {
    const key = (partition: string) => `${state.stream} ${partition}`;
    for (const p of state.partitions.values()) {
      const id = key(partitionId(p.partition));
      byPartition.set(id, byPartition.get(id) ?? []);
      for (const [at] of p.confirmations) add(id, at);
    }
    const files = state.files.filter((f) => f.table === 'confirmations');
    if (files.length === 0) continue;
    const rows = await queryLake(
      `select "partition", epoch_ms(confirmedAt) as at from read_parquet([${files.map((f) => `'${join(dataDir, 'lake', f.path)}'`).join(', ')}])`,
    );
    for (const r of rows) add(key(String(r.partition)), Number(r.at));
  }
  return byPartition;
}

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
  // A warehouse built now, so the one built at the end adds the confirmations incrementally.
  await buildWarehouse({ dataDir: kept.dataDir, select: MODELS });
  await observe(TEST_EPOCH + DAY + 900); // the world stood still: the same answers
  await observe(TEST_EPOCH + DAY + 1800);

  expect(await dataFiles(kept.dataDir)).toBe(afterChange);
  expect(await dataFiles(full.dataDir)).toBeGreaterThan(afterChange);
  const confirmed = await confirmationsOf(kept.dataDir);
  // Every partition was confirmed at the two quiet runs' start times (one that did not change over the
  // day, a quiet address's balance say, was confirmed at the second run already).
  expect(confirmed.size).toBeGreaterThan(4);
  for (const times of confirmed.values())
    expect(times.slice(-2)).toEqual([(TEST_EPOCH + DAY + 900) * 1000, (TEST_EPOCH + DAY + 1800) * 1000]);
  vi.useRealTimers();

  // Folding moves the confirmations out of the commit log's state into a Parquet file of the lake's
  // bookkeeping, so the state does not grow with every run; the warehouse reads them there.
  const lake = await openLake({ dataDir: kept.dataDir });
  await lake.compact('all');
  await lake.close();
  const folded = await readLakeState(kept.dataDir);
  for (const s of folded.values()) {
    expect([...s.partitions.values()].every((p) => p.confirmations.length === 0)).toBe(true);
    expect(s.files.filter((f) => f.table === 'confirmations').length, s.stream).toBe(1);
  }

  const incremental = await buildWarehouse({ dataDir: kept.dataDir, select: MODELS });
  expect(incremental.built.find((b) => b.name === 'stg_p_chain_balances')?.mode).toBe('incremental');
  await buildWarehouse({ dataDir: full.dataDir, select: MODELS });
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
