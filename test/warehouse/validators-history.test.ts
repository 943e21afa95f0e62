import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { type BuildResult, buildWarehouse } from '../../src/warehouse/build.ts';
import { TEST_EPOCH, useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { expectSameWarehouse, modeOf, queryWarehouse } from '../helpers/warehouse.ts';

/**
 * validators_history over a hand-written stg_validators (no lake): each version of a validator's state
 * is a row, whatever its nulls, and a validator that leaves and returns starts a new version.
 */
const SNAPSHOTS = ['2026-11-01 00:00:00+00', '2026-11-02 00:00:00+00', '2026-11-03 00:00:00+00'];

function row(
  snapshot: number | string,
  nodeId: string,
  txId: string | null,
  validationId: string | null,
  subnet = 'primary',
) {
  const text = (v: string | null) => (v === null ? 'null' : `'${v}'`);
  const at = typeof snapshot === 'number' ? SNAPSHOTS[snapshot] : snapshot;
  return `('fuji', '${subnet}', '${nodeId}', timestamptz '${at}', ${text(txId)}, ${text(validationId)},
    timestamptz '2026-10-01 00:00:00+00', timestamptz '2026-12-01 00:00:00+00', 2000000000000::decimal(38, 0),
    0::decimal(38, 0), 0, 100::decimal(38, 0), 2.0, null)`;
}

/** validators_history built over these stg_validators rows alone, in a folder of its own. */
async function historyOf(rows: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'avalake-history-'));
  const models = join(dir, 'models');
  mkdirSync(join(models, 'staging'), { recursive: true });
  mkdirSync(join(models, 'marts'));
  copyFileSync('sql/models/marts/validators_history.sql', join(models, 'marts', 'validators_history.sql'));
  writeFileSync(
    join(models, 'staging', 'stg_validators.sql'),
    `-- description: hand-written validators snapshots
select * from (values ${rows.join(',\n')}) as t(network, subnet, node_id, snapshot_at, tx_id, validation_id,
  started_at, ends_at, weight, delegator_weight_navax, delegator_count, potential_reward_navax,
  delegation_fee_percent, bls_public_key)`,
  );
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  await buildWarehouse({ dataDir, modelsDir: models });
  return queryWarehouse(
    dataDir,
    `select node_id, tx_id, validation_id, strftime(valid_from, '%d') as valid_from,
            strftime(valid_to, '%d') as valid_to, is_current, count_snapshots
     from validators_history order by node_id, valid_from`,
  );
}

it('validators_history: a state differing only in where a null sits is a new version; leaving and returning is too', async () => {
  const rows = [
    // A: the same value moves from tx_id to validation_id (the old concat_ws hash saw no change).
    row(0, 'NodeID-A', 'X', null),
    row(1, 'NodeID-A', null, 'X'),
    row(2, 'NodeID-A', null, 'X'),
    // B: present, gone, back in the same state.
    row(0, 'NodeID-B', 'T', null),
    row(2, 'NodeID-B', 'T', null),
  ];
  const history = await historyOf(rows);
  expect(history).toEqual([
    {
      node_id: 'NodeID-A',
      tx_id: 'X',
      validation_id: null,
      valid_from: '01',
      valid_to: '02',
      is_current: false,
      count_snapshots: '1',
    },
    {
      node_id: 'NodeID-A',
      tx_id: null,
      validation_id: 'X',
      valid_from: '02',
      valid_to: null,
      is_current: true,
      count_snapshots: '2',
    },
    {
      node_id: 'NodeID-B',
      tx_id: 'T',
      validation_id: null,
      valid_from: '01',
      valid_to: '02',
      is_current: false,
      count_snapshots: '1',
    },
    {
      node_id: 'NodeID-B',
      tx_id: 'T',
      validation_id: null,
      valid_from: '03',
      valid_to: null,
      is_current: true,
      count_snapshots: '1',
    },
  ]);
});

it('validators_history: several workers stamping their snapshots seconds apart give the versions one box gives', async () => {
  // One round of runs, three times: the primary network's partition read by one worker, the subnet's by
  // another that started a few seconds later. Nobody left or changed.
  const rounds = [
    ['2026-11-01 00:00:00+00', '2026-11-01 00:00:04+00'],
    ['2026-11-02 00:00:03+00', '2026-11-02 00:00:01+00'],
    ['2026-11-03 00:00:00+00', '2026-11-03 00:00:02+00'],
  ];
  const rows = rounds.flatMap(([primary, subnet]) => [
    row(primary as string, 'NodeID-P1', 'T1', null),
    row(primary as string, 'NodeID-P2', 'T2', null),
    row(subnet as string, 'NodeID-S1', null, 'V1', 'SubnetS'),
  ]);
  const history = await historyOf(rows);
  expect(history).toEqual(
    ['NodeID-P1', 'NodeID-P2', 'NodeID-S1'].map((node_id) => ({
      node_id,
      tx_id: node_id === 'NodeID-S1' ? null : `T${node_id.slice(-1)}`,
      validation_id: node_id === 'NodeID-S1' ? 'V1' : null,
      valid_from: '01',
      valid_to: null,
      is_current: true,
      count_snapshots: '3',
    })),
  );
});

/**
 * validators_history and stake_distribution_daily against the emulator's validators, extract after
 * extract, the world and avalake's clock moved a few days each time, so that validations end, start and
 * gain delegations between builds.
 */
const emulator = useEmulator();
afterEach(() => {
  vi.useRealTimers();
});

const DAY = 86_400;

it('validators_history and stake_distribution_daily extend the last build with the new snapshots alone, to the tables a build from scratch makes; an older snapshot arriving late rebuilds them whole', async () => {
  // One subnet at first; the other joins the pipeline later, on a host whose clock is behind.
  let subnets: string[] = [];
  const w = demoWorkspace(emulator, (p) => {
    const primary = p.primary as { subnets: string[] };
    subnets = primary.subnets;
    primary.subnets = subnets.slice(0, 1);
  });
  expect(subnets.length).toBeGreaterThan(1);
  // avalake stamps each snapshot with its own clock: it moves with the world's.
  vi.useFakeTimers({ toFake: ['Date'] });
  let now = TEST_EPOCH;
  const step = async (days: number, at = now + days * DAY) => {
    emulator.advance(days * DAY);
    now += days * DAY;
    vi.setSystemTime(at * 1000);
    const streams = 'validators,current_supply';
    expect((await extractOnce(w.pipelinePath, w.dataDir, { streams })).status).toBe('ok');
    return buildWarehouse({ dataDir: w.dataDir });
  };
  const historyOf = () =>
    queryWarehouse(
      w.dataDir,
      `select count(*) as versions, count(*) filter (where not is_current) as closed,
              count(distinct node_id) as validators, sum(count_snapshots) as observations
       from validators_history`,
    );

  const built = await step(0);
  expect(modeOf(built, 'validators_history')).toBe('full');
  expect(modeOf(built, 'stake_distribution_daily')).toBe('full');
  const [first] = await historyOf();
  const extended: BuildResult[] = [];
  for (let i = 0; i < 3; i++) extended.push(await step(3));
  for (const result of extended) {
    expect(modeOf(result, 'stg_validators')).toBe('incremental');
    expect(modeOf(result, 'validators_history')).toBe('incremental');
    expect(modeOf(result, 'stake_distribution_daily')).toBe('incremental');
  }
  const [days] = await queryWarehouse(w.dataDir, 'select count(*) as n from stake_distribution_daily');
  expect(Number(days?.n)).toBe(4);
  const [last] = await historyOf();
  // The extensions closed versions and opened new ones, not only counted snapshots.
  expect(Number(last?.closed)).toBeGreaterThan(Number(first?.closed));
  expect(Number(last?.versions)).toBeGreaterThan(Number(first?.versions));
  const [stored] = await queryWarehouse(w.dataDir, 'select count(*) as n from stg_validators');
  expect(last?.observations).toBe(stored?.n);

  const compare = async () => {
    const extendedFile = join(w.dir, 'extended.duckdb');
    copyFileSync(join(w.dataDir, 'warehouse.duckdb'), extendedFile);
    await buildWarehouse({ dataDir: w.dataDir, fromScratch: true });
    await expectSameWarehouse(extendedFile, join(w.dataDir, 'warehouse.duckdb'));
  };
  await compare();

  // A snapshot stamped before the newest one the history read: the history cannot extend past it, and
  // is built whole, the same as from scratch. A partition read before never stamps one earlier than
  // its last (clock-steps-back.test.ts), so it is the first snapshot of a subnet added to the pipeline,
  // read on a host whose clock is two days behind.
  const pipeline = JSON.parse(readFileSync(w.pipelinePath, 'utf8'));
  pipeline.primary.subnets = subnets;
  writeFileSync(w.pipelinePath, JSON.stringify(pipeline));
  const late = await step(1, now - 2 * DAY);
  expect(modeOf(late, 'stg_validators')).toBe('incremental');
  expect(modeOf(late, 'validators_history')).toBe('full');
  expect(modeOf(late, 'stake_distribution_daily')).toBe('full');
  await compare();
  // And it extends again after.
  const after = await step(1);
  expect(modeOf(after, 'validators_history')).toBe('incremental');
  expect(modeOf(after, 'stake_distribution_daily')).toBe('incremental');
  await compare();
}, 240_000);

it('stake_distribution_daily is built whole when a supply read arrives older than the newest snapshot it read, and equals a build from scratch', async () => {
  const w = demoWorkspace(emulator);
  vi.useFakeTimers({ toFake: ['Date'] });
  const extractAt = async (at: number, streams: string) => {
    vi.setSystemTime(at * 1000);
    expect((await extractOnce(w.pipelinePath, w.dataDir, { streams })).status).toBe('ok');
  };
  const start = TEST_EPOCH + 20 * DAY;
  emulator.advance(20 * DAY);
  await extractAt(start, 'validators,current_supply');
  await buildWarehouse({ dataDir: w.dataDir });
  emulator.advance(3 * DAY);
  await extractAt(start + 3 * DAY, 'validators');
  expect(modeOf(await buildWarehouse({ dataDir: w.dataDir }), 'stake_distribution_daily')).toBe(
    'incremental',
  );
  // The supply read by a host whose clock is two days behind: older than the newest validators snapshot.
  await extractAt(start + DAY, 'current_supply');
  // From the last build, which read that snapshot (the generation before it had not, and for it the
  // supply is not late: it extends, as right).
  rmSync(join(w.dataDir, 'warehouse.duckdb.previous'));
  const late = await buildWarehouse({ dataDir: w.dataDir });
  expect(late.startedFrom).toBe('copy');
  expect(modeOf(late, 'stg_current_supply')).toBe('incremental');
  expect(modeOf(late, 'validators_history')).toBe('unchanged');
  expect(modeOf(late, 'stake_distribution_daily')).toBe('full');
  const extendedFile = join(w.dir, 'extended.duckdb');
  copyFileSync(join(w.dataDir, 'warehouse.duckdb'), extendedFile);
  await buildWarehouse({ dataDir: w.dataDir, fromScratch: true });
  await expectSameWarehouse(extendedFile, join(w.dataDir, 'warehouse.duckdb'));
}, 120_000);
