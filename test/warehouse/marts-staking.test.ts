import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  aprTruth,
  balanceEndsIn,
  balanceEndsTruth,
  isMirrored,
  type MartsWorkspace,
  martsWorkspace,
  readWithFewerPartitions,
  rewardsDailyIn,
  rewardsDailyTruth,
} from '../helpers/marts.ts';
import { utcDay } from '../helpers/warehouse.ts';

// The staking marts against the world recomputed here (issue 12): APR over every finished period, paid or
// not, with the validator's fee income; rewards on the day they were paid; daily series that end where
// their partition's data ends. test/helpers/marts.ts holds the comparisons, which marts-planted.test.ts
// shows catch a copy of each mart with a defect planted in it.
describe('staking marts against the emulator truth', () => {
  let w: MartsWorkspace;

  beforeAll(async () => {
    w = await martsWorkspace();
  }, 60_000);
  afterAll(() => w?.emulator.close());

  const primary = () => w.emulator.truth.primary(w.pipeline.network);

  it('apr_realized: every finished period, paid or not, its reward, fee income and both APRs exact', async () => {
    const { got, want, missing, rows } = await aprTruth(w, w.query);
    expect(got).toEqual(want);
    expect(missing).toEqual([]);
    const unpaid = rows.filter((r) => r.is_rewarded === false);
    expect(unpaid.filter((r) => r.staking_kind === 'validation').length).toBeGreaterThan(0);
    expect(unpaid.filter((r) => r.staking_kind === 'delegation').length).toBeGreaterThan(0);
    expect(unpaid.every((r) => String(r.apr) === '0E-12' || Number(r.apr) === 0)).toBe(true);
    // Validators earn fees on their delegations: some validation's APR with fees is above its APR.
    expect(rows.some((r) => Number(r.apr_with_fees) > Number(r.apr))).toBe(true);
    // Rates differ with duration and supply: many distinct APRs among the paid periods.
    expect(new Set(rows.filter((r) => r.is_rewarded).map((r) => String(r.apr))).size).toBeGreaterThan(5);
  });

  // The test above compares every row's fee income with the world; this one makes sure those rows hold
  // the validations whose fees are easy to put in the wrong period.
  it("apr_realized: the rows compared include fee income that a node's later validation or an early-ended delegation could misplace", async () => {
    const { want } = await aprTruth(w, w.query);
    // Validations with fee income whose node validated again later (that period's fees must not land
    // here), some with delegations that ended days before the validation paid their fees.
    const validations = primary()
      .stakes(w.now)
      .filter((s) => s.kind === 'validator' && (want[s.tx.hash]?.fees ?? '0') !== '0');
    const followed = validations.filter((s) =>
      validations.some((later) => later.nodeId === s.nodeId && later.start >= s.end),
    );
    expect(followed.length).toBeGreaterThan(0);
    expect(followed.some((s) => (s.delegators ?? []).some((d) => utcDay(d.end) !== utcDay(s.end)))).toBe(
      true,
    );
  });

  it('rewards_daily: a fee paid after its delegation ended counts on the day it was paid', async () => {
    // The world's VALIDATOR_FEE rewards the lake mirrors, paid on a later day than their delegation ended.
    const late = primary()
      .rewards(w.now)
      .filter(
        ({ utxo, stake }) =>
          utxo.rewardType === 'VALIDATOR_FEE' && isMirrored(w.pipeline, stake.nodeId, utxo.addresses),
      )
      .filter(({ utxo, stake }) => utcDay(utxo.createdAt) !== utcDay(stake.end));
    expect(late.length).toBeGreaterThan(5);
    const want = rewardsDailyTruth(w);
    const got = await rewardsDailyIn(w.query);
    // The late fees' rows only: marts.test.ts compares the whole mart with the world.
    for (const { utxo, stake } of late)
      for (const address of utxo.addresses) {
        const paidDay = `${utcDay(utxo.createdAt)} ${address} ${stake.nodeId}`;
        expect(got[paidDay], paidDay).toEqual(want[paidDay]);
        expect(Number(got[paidDay]?.fees), paidDay).toBeGreaterThan(0);
      }
  });

  it('rewards_daily: a reward with two owners counts for each of them', async () => {
    const shared = primary()
      .rewards(w.now)
      .filter((r) => r.utxo.addresses.length > 1 && isMirrored(w.pipeline, r.stake.nodeId, r.utxo.addresses));
    expect(shared.length).toBeGreaterThan(0);
    const { utxo, stake } = shared[0] as (typeof shared)[number];
    const rows = await w.query(
      `select reward_address from rewards_daily
       where reward_day = '${utcDay(utxo.createdAt)}' and node_id = '${stake.nodeId}' order by 1`,
    );
    expect(rows.map((r) => r.reward_address)).toEqual(expect.arrayContaining(utxo.addresses));
  });

  // Last: it moves the world a day and extracts again with one address and one ICM address fewer.
  it('address_balances_daily and icm_backlog_daily end where their partition was last read', async () => {
    const read = await readWithFewerPartitions(w);
    expect(read.after).not.toBe(read.before);
    const want = balanceEndsTruth(w, read);
    expect(Object.keys(want)).toContain(read.dropped);
    expect(await balanceEndsIn(w.query)).toEqual(want);
    // The ICM address left out was last read the day before: every pair's backlog ends there.
    const [icm] = await w.query('select max(activity_day) as last_day, count(*) as n from icm_backlog_daily');
    expect(Number(icm?.n)).toBeGreaterThan(0);
    expect(String(icm?.last_day)).toBe(read.before);
  });
});
