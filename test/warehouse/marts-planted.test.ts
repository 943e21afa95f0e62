import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODELS_DIR } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import {
  aprTruth,
  balanceEndsIn,
  balanceEndsTruth,
  buildPlanted,
  differing,
  type FewerPartitions,
  type MartsWorkspace,
  martsWorkspace,
  type Query,
  readWithFewerPartitions,
  rewardsDailyIn,
  rewardsDailyTruth,
  type StakeDay,
  stakeDistributionIn,
  stakeDistributionTruth,
} from '../helpers/marts.ts';

// Issue 12.5: the comparisons the marts tests make against the world (test/helpers/marts.ts, used by
// marts.test.ts and marts-staking.test.ts) catch a copy of the mart with a defect planted in it. Each
// case runs its comparison on the real mart (no difference) and on a planted copy built beside the same
// lake (differences). The lake: martsWorkspace's three runs, then a fourth a day later that reads one
// configured address fewer, so that address's balances must end a day before the others'.
describe('planted defects are caught by the comparisons against the world', () => {
  let w: MartsWorkspace;
  let read: FewerPartitions;
  beforeAll(async () => {
    w = await martsWorkspace();
    read = await readWithFewerPartitions(w);
  }, 120_000);
  afterAll(() => w?.emulator.close());

  const aprDifferences = async (query: Query) => {
    const { got, want, missing } = await aprTruth(w, query);
    return differing(got, want).length + missing.length;
  };

  const cases: {
    defect: string;
    mart: string;
    from: string;
    to: string;
    differences(query: Query): Promise<number>;
  }[] = [
    {
      defect: 'APR without the periods paid nothing',
      mart: 'apr_realized',
      from: 'where reward_navax is not null',
      to: 'where reward_navax > 0',
      differences: aprDifferences,
    },
    {
      defect: "APR without the validator's fee income",
      mart: 'apr_realized',
      from: "when 'validation' then coalesce(window_fees.fee_income_navax, 0)",
      to: "when 'validation' then 0",
      differences: aprDifferences,
    },
    {
      defect: "reward_day from the stake's start",
      mart: 'rewards_daily',
      from: 'cast(make_timestamp(epoch_us(paid.paid_at)) as date) as reward_day',
      to: 'cast(make_timestamp(epoch_us(paid.started_at)) as date) as reward_day',
      differences: async (query) => differing(await rewardsDailyIn(query), rewardsDailyTruth(w)).length,
    },
    {
      // Since Cortina a validator's fee on a delegation is paid when the validator's period ends.
      defect: "a fee dated by its delegation's end instead of its payment",
      mart: 'rewards_daily',
      from: 'coalesce(utxos.created_at, reward_txs.paid_at, rewards.ended_at) as paid_at',
      to: 'rewards.ended_at as paid_at',
      differences: async (query) => differing(await rewardsDailyIn(query), rewardsDailyTruth(w)).length,
    },
    {
      defect: 'balances ending at the newest read of any partition',
      mart: 'address_balances_daily',
      from: 'read_day as last_day',
      to: 'max(read_day) over () as last_day',
      differences: async (query) => differing(await balanceEndsIn(query), balanceEndsTruth(w, read)).length,
    },
  ];

  for (const c of cases)
    it(`${c.mart}: ${c.defect}`, async () => {
      expect(await c.differences(w.query), 'the real mart').toBe(0);
      const planted = await buildPlanted(w, c);
      expect(await c.differences(planted), 'the planted copy').toBeGreaterThan(0);
    });

  it('the Nakamoto coefficient with >= instead of >, on validators whose top two hold exactly one third', async () => {
    const AVAX = 1_000_000_000n;
    const validator = (own: number, delegated: number, delegators: number) => ({
      own: BigInt(own) * 1_000n * AVAX,
      delegated: BigInt(delegated) * 1_000n * AVAX,
      delegators,
    });
    const days: StakeDay[] = [
      // 50 + 50 of 300: exactly a third, so it takes a third validator to exceed it.
      {
        day: '2026-11-02',
        validators: [validator(40, 10, 2), validator(30, 20, 1), ...Array(5).fill(validator(40, 0, 0))],
        supply: 1_000_000n * 1_000n * AVAX,
      },
      // 60 + 50 of 300: more than a third either way.
      {
        day: '2026-11-03',
        validators: [validator(50, 10, 1), validator(50, 0, 0), ...Array(5).fill(validator(38, 0, 0))],
        supply: 1_000_000n * 1_000n * AVAX,
      },
    ];
    const want = stakeDistributionTruth(days);
    expect(Object.values(want).map((d) => d.nakamoto)).toEqual([3, 2]);
    const model = readFileSync(join(DEFAULT_MODELS_DIR, 'marts', 'stake_distribution_daily.sql'), 'utf8');
    const tie = 'cumulative_stake_navax * 3 > day_stake_navax';
    expect(model).toContain(tie);
    const planted = model.replace(tie, 'cumulative_stake_navax * 3 >= day_stake_navax');
    /** The model's SQL over hand-made stg_validators and stg_current_supply, in a database of its own. */
    const build = (sql: string) =>
      withDuckDB(':memory:', async (db) => {
        await db.run(`create table stg_validators (
          network varchar, subnet varchar, snapshot_at timestamptz, node_id varchar,
          weight decimal(38, 0), delegator_weight_navax decimal(38, 0), delegator_count integer)`);
        await db.run(`create table stg_current_supply (
          network varchar, subnet varchar, snapshot_at timestamptz, supply_navax decimal(38, 0))`);
        for (const { day, validators, supply } of days) {
          const at = `timestamptz '${day} 12:00:00+00'`;
          for (const [i, v] of validators.entries())
            await db.run(
              `insert into stg_validators values ('fuji', 'primary', ${at}, 'NodeID-${i}', ${v.own}, ${v.delegated}, ${v.delegators})`,
            );
          await db.run(`insert into stg_current_supply values ('fuji', 'primary', ${at}, ${supply})`);
        }
        await db.run(`create table stake_distribution_daily as\n${sql}`);
        return stakeDistributionIn((query) => queryRows(db, query));
      });
    expect(await build(model)).toEqual(want);
    expect(differing(await build(planted), want)).toEqual(['2026-11-02']);
  });
});
