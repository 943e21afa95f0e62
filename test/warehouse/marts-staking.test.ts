import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StakeRec } from '../../src/emulator/world/primary/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { extractOnce } from '../helpers/extract.ts';
import { type MartsWorkspace, martsWorkspace } from '../helpers/marts.ts';
import { scaled, utcDay } from '../helpers/warehouse.ts';

const DAY = 86_400;
const YEAR_SECONDS = 31_536_000n;

/** A rate as the mart gives it: `numerator / (amount × seconds)` a year, truncated to 12 decimals. */
const annual = (navax: bigint, s: StakeRec) =>
  scaled((navax * YEAR_SECONDS * 10n ** 12n) / (s.amount * BigInt(s.end - s.start)), 12);
const sumOf = (s: StakeRec, types: readonly string[]) =>
  s.rewardUtxos.filter((u) => types.includes(u.rewardType as string)).reduce((n, u) => n + u.amount, 0n);

// The staking marts against the world recomputed here (issue 12): APR over every finished period, paid or
// not, with the validator's fee income; daily series that end where their partition's data ends.
describe('staking marts against the emulator truth', () => {
  let w: MartsWorkspace;

  beforeAll(async () => {
    w = await martsWorkspace();
  }, 60_000);
  afterAll(() => w?.emulator.close());

  const primary = () => w.emulator.truth.primary(w.pipeline.network);
  const configured = (s: StakeRec, owners: readonly string[]) =>
    w.pipeline.primary.nodeIds.includes(s.nodeId) ||
    owners.some((a) => w.pipeline.primary.addresses.includes(a));

  it('apr_realized: every finished period, paid or not, its reward, fee income and both APRs exact', async () => {
    const stakes = new Map(
      primary()
        .stakes(w.now)
        .map((s) => [s.tx.hash, s]),
    );
    const rows = await w.query('select * from apr_realized');
    const got = new Map(rows.map((r) => [String(r.staking_tx_hash), r]));
    for (const [hash, r] of got) {
      const s = stakes.get(hash);
      expect(s, hash).toBeDefined();
      if (!s) continue;
      expect(s.rewardTx && s.rewardTx.time <= w.now, `${hash} has finished`).toBe(true);
      const reward = sumOf(s, ['VALIDATOR', 'DELEGATOR']);
      const fees =
        s.kind === 'validator'
          ? (s.delegators ?? []).reduce((n, d) => n + sumOf(d, ['VALIDATOR_FEE']), 0n)
          : undefined;
      expect(
        {
          kind: r.staking_kind,
          node: r.node_id,
          staked: String(r.amount_staked_navax),
          seconds: String(r.staking_seconds),
          rewarded: r.is_rewarded,
          reward: String(r.reward_navax),
          fees: r.fee_income_navax === null ? null : String(r.fee_income_navax),
          gross: String(r.gross_reward_navax),
          apr: String(r.apr),
          aprWithFees: String(r.apr_with_fees),
        },
        hash,
      ).toEqual({
        kind: s.kind === 'validator' ? 'validation' : 'delegation',
        node: s.nodeId,
        staked: String(s.amount),
        seconds: String(s.end - s.start),
        rewarded: reward > 0n,
        reward: String(reward),
        fees: fees === undefined ? null : String(fees),
        gross: String(s.kind === 'validator' ? reward : sumOf(s, ['DELEGATOR', 'VALIDATOR_FEE'])),
        apr: annual(reward, s),
        aprWithFees: annual(reward + (fees ?? 0n), s),
      });
    }
    // What must be there: every paid period the lake mirrors, every completed delegation of a configured node
    // or owner, and every validation of a configured node that a snapshot saw and that ended by the last one.
    const lastSnapshot = w.snapshotTimes.at(-1) as number;
    const seen = (s: StakeRec) => w.snapshotTimes.some((t) => s.start <= t && t < s.end);
    const must = [...stakes.values()].filter((s) => {
      if (!s.rewardTx || s.rewardTx.time > w.now) return false;
      if (s.rewardUtxos.some((u) => u.rewardType !== 'VALIDATOR_FEE') && configured(s, s.rewardAddresses))
        return true;
      if (s.kind === 'delegator') return configured(s, s.rewardAddresses);
      return w.pipeline.primary.nodeIds.includes(s.nodeId) && seen(s) && s.end <= lastSnapshot;
    });
    expect(must.filter((s) => !got.has(s.tx.hash)).map((s) => s.tx.hash)).toEqual([]);
    const unpaid = rows.filter((r) => r.is_rewarded === false);
    expect(unpaid.filter((r) => r.staking_kind === 'validation').length).toBeGreaterThan(0);
    expect(unpaid.filter((r) => r.staking_kind === 'delegation').length).toBeGreaterThan(0);
    expect(unpaid.every((r) => String(r.apr) === '0E-12' || Number(r.apr) === 0)).toBe(true);
    // Validators earn fees on their delegations: some validation's APR with fees is above its APR.
    expect(rows.some((r) => Number(r.apr_with_fees) > Number(r.apr))).toBe(true);
    // Rates differ with duration and supply: many distinct APRs among the paid periods.
    expect(new Set(rows.filter((r) => r.is_rewarded).map((r) => String(r.apr))).size).toBeGreaterThan(5);
  });

  it('rewards_daily: a reward with two owners counts for each of them', async () => {
    const shared = primary()
      .rewards(w.now)
      .filter((r) => r.utxo.addresses.length > 1 && configured(r.stake, r.utxo.addresses));
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
    const before = utcDay(w.now);
    const [droppedAddress, ...kept] = w.pipeline.primary.addresses as [string, ...string[]];
    const pipelinePath = `${w.workspace.dataDir}/../fewer.json`;
    writeFileSync(
      pipelinePath,
      JSON.stringify({
        ...w.pipeline,
        primary: { ...w.pipeline.primary, addresses: kept },
        icm: { ...w.pipeline.icm, addresses: w.pipeline.icm.addresses.slice(1) },
      }),
    );
    w.emulator.advance(DAY);
    const now = Math.floor(w.emulator.clock.now());
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(now * 1000);
      const summary = await extractOnce(pipelinePath, w.workspace.dataDir, { streams: 'utxos,icm_messages' });
      expect(summary.status).toBe('ok');
    } finally {
      vi.useRealTimers();
    }
    await buildWarehouse({ dataDir: w.workspace.dataDir });
    const ends = await w.query(
      'select address, max(balance_day) as last_day from address_balances_daily group by address',
    );
    const after = utcDay(now);
    expect(after).not.toBe(before);
    expect(Object.fromEntries(ends.map((r) => [r.address, String(r.last_day)]))).toEqual(
      Object.fromEntries([
        [droppedAddress, before],
        ...kept.filter((a) => ends.some((r) => r.address === a)).map((a) => [a, after]),
      ]),
    );
    // Only configured addresses: a co-owner of a reward outside the pipeline has no partial balance.
    expect(ends.map((r) => r.address).every((a) => w.pipeline.primary.addresses.includes(String(a)))).toBe(
      true,
    );
    // The ICM address left out was last read the day before: every pair's backlog ends there.
    const [icm] = await w.query('select max(activity_day) as last_day, count(*) as n from icm_backlog_daily');
    expect(Number(icm?.n)).toBeGreaterThan(0);
    expect(String(icm?.last_day)).toBe(before);
  });
});
