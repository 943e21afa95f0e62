import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { StakeRec, UtxoRec } from '../../src/emulator/world/primary/index.ts';
import { fetchJson, startEmulator, walk } from '../helpers/emulator.ts';

// The staking world a mart must handle (issue 12.1): periods that pay nothing, rates that vary with the
// stake's duration, rewards with several owners, validators that leave and come back.

const YEAR = 31_536_000n;
const SUPPLY_CAP = 720_000_000n * 1_000_000_000n;

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(() => emu.close());

const now = () => Math.floor(emu.clock.now());
const truth = () => emu.truth.primary('mainnet');
const ended = () =>
  truth()
    .stakes(now())
    .filter((s) => s.rewardTx !== undefined);

describe('the staking world', () => {
  it('some periods are not rewarded: their uptime fell under 80 %, and their delegations earn nothing either', async () => {
    const validations = ended().filter((s) => s.kind === 'validator');
    const unpaid = validations.filter((s) => s.rewardUtxos.length === 0);
    expect(unpaid.length).toBeGreaterThan(0);
    expect(unpaid.length).toBeLessThan(validations.length / 3);
    for (const s of unpaid) {
      expect(Number(s.uptime), s.tx.hash).toBeLessThan(80);
      // The period still ends with a RewardValidatorTx that returns the stake.
      expect(s.rewardTx?.type).toBe('RewardValidatorTx');
      expect(s.rewardTx?.emitted.filter((u) => u.rewardType !== undefined)).toEqual([]);
      for (const d of s.delegators ?? []) if (d.rewardTx) expect(d.rewardUtxos, d.tx.hash).toEqual([]);
    }
    expect(validations.filter((s) => s.rewardUtxos.length > 0).every((s) => s.uptime === undefined)).toBe(
      true,
    );
    // The node RPC shows a current period's shortfall.
    const current = truth()
      .validators(now())
      .find((s) => s.uptime !== undefined);
    if (current) {
      const res = await fetchJson(`${emu.url}/ext/bc/P`, {
        method: 'POST',
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'platform.getCurrentValidators',
          params: { nodeIDs: [current.nodeId] },
        },
      });
      expect(Number(res.body.result.validators[0].uptime)).toBeLessThan(80);
    }
  });

  it('the reward rate grows with the stake duration, on the P-Chain curve between 10 % and 12 % of what is left to mint', () => {
    const paid = ended().filter((s) => s.rewardUtxos.length > 0);
    const supplies = truth()
      .blocks(now())
      .map((b) => b.supply);
    const [lowest, highest] = [supplies[0] as bigint, supplies.at(-1) as bigint];
    const rates = new Set<string>();
    for (const s of paid) {
      const seconds = BigInt(s.end - s.start);
      // rate = reward / stake × year / duration, in millionths
      const ppm = (s.potentialReward * YEAR * 1_000_000n) / (s.amount * seconds);
      rates.add(String(ppm));
      // consumption rate for this duration, in millionths: 10 % + 2 % × duration / year
      const consumption = 100_000n + (20_000n * seconds) / YEAR;
      // × (cap − supply) / supply, with the supply somewhere between genesis and now
      const most = (consumption * (SUPPLY_CAP - lowest)) / lowest + 1n;
      const least = (consumption * (SUPPLY_CAP - highest)) / highest - 1n;
      expect(ppm, s.tx.hash).toBeGreaterThanOrEqual(least);
      expect(ppm, s.tx.hash).toBeLessThanOrEqual(most);
    }
    expect(rates.size).toBeGreaterThan(paid.length / 2);
    // Two periods at (nearly) the same supply: the longer one earns the higher rate.
    const byDuration = paid
      .filter((s) => s.kind === 'validator')
      .slice(0, 40)
      .sort((a, b) => a.end - a.start - (b.end - b.start));
    const rate = (s: StakeRec) => Number(s.potentialReward) / Number(s.amount) / (s.end - s.start);
    expect(rate(byDuration.at(-1) as StakeRec)).toBeGreaterThan(rate(byDuration[0] as StakeRec));
  });

  it('some rewards have two owners, and each owner lists the reward UTXO', async () => {
    const shared = truth()
      .rewards(now())
      .filter((r) => r.utxo.addresses.length > 1);
    expect(shared.length).toBeGreaterThan(0);
    const { utxo, stake } = shared[0] as (typeof shared)[number];
    expect(utxo.addresses).toEqual(
      utxo.rewardType === 'VALIDATOR_FEE' ? stake.validator?.rewardAddresses : stake.rewardAddresses,
    );
    for (const owner of utxo.addresses) {
      const u = new URL(`${emu.url}/v1/networks/mainnet/blockchains/p-chain/utxos`);
      u.searchParams.set('addresses', owner);
      u.searchParams.set('includeSpent', 'true');
      u.searchParams.set('pageSize', '100');
      const listed = await walk(u.toString(), 'utxos');
      expect(
        listed.items.find((x) => x.utxoId === utxo.id),
        owner,
      ).toMatchObject({ addresses: utxo.addresses, amount: String(utxo.amount) });
      const rewards = await walk(
        `${emu.url}/v1/networks/mainnet/rewards?addresses=${owner}&pageSize=100`,
        'historicalRewards',
      );
      expect(rewards.items.some((r) => r.utxoId === utxo.id)).toBe(true);
    }
  });

  it("a validator's fee on a delegation is paid when the validator's period ends, by its RewardValidatorTx (since Cortina)", async () => {
    const t = now();
    const rewarded = truth()
      .stakes(t)
      .filter((s) => s.kind === 'delegator' && s.rewardTx && s.rewardTx.time <= t)
      .filter((s) => s.rewardUtxos.some((u) => u.rewardType === 'DELEGATOR'));
    let paidLater = 0;
    let due = 0;
    for (const d of rewarded) {
      const v = d.validator as StakeRec;
      const [own, ...more] = d.rewardUtxos.filter((u) => u.rewardType === 'DELEGATOR');
      // The delegation's own RewardValidatorTx, at its end, pays the delegator alone.
      expect(more).toEqual([]);
      expect(own?.createdAt, d.tx.hash).toBe(d.end);
      expect(d.rewardTx?.emitted.map((u) => u.rewardType)).toEqual(['DELEGATOR']);
      const fees = d.rewardUtxos.filter((u) => u.rewardType === 'VALIDATOR_FEE' && u.createdAt <= t);
      if (!v.rewardTx || v.rewardTx.time > t) {
        expect(fees, d.tx.hash).toEqual([]);
        due++;
        continue;
      }
      expect(fees, d.tx.hash).toHaveLength(1);
      const fee = fees[0] as UtxoRec;
      expect(fee.createdAt, d.tx.hash).toBe(v.end);
      expect(v.rewardTx.emitted).toContain(fee);
      expect(fee.addresses).toEqual(v.rewardAddresses);
      // Net and fee make the delegation's reward at the validator's rate.
      expect(own && own.amount + fee.amount).toBe(d.potentialReward);
      expect(fee.amount).toBe((d.potentialReward * BigInt(d.feePpm)) / 1_000_000n);
      if (v.end > d.end) paidLater++;
    }
    expect(paidLater).toBeGreaterThan(10);
    expect(due).toBeGreaterThan(0);

    // The listings: the fee is listed with the delegation's period but the validator's RewardValidatorTx,
    // and its UTXO was created at the validator's end.
    const d = rewarded.find(
      (s) => s.validator?.rewardTx && s.validator.rewardTx.time <= t && s.validator.end - s.end > 86_400,
    ) as StakeRec;
    expect(d).toBeDefined();
    const v = d.validator as StakeRec;
    const fee = d.rewardUtxos.find((u) => u.rewardType === 'VALIDATOR_FEE') as UtxoRec;
    const listed = await walk(
      `${emu.url}/v1/networks/mainnet/rewards?nodeIds=${d.nodeId}&pageSize=100`,
      'historicalRewards',
    );
    expect(listed.items.find((r) => r.utxoId === fee.id)).toMatchObject({
      rewardType: 'VALIDATOR_FEE',
      txHash: d.tx.hash,
      startTimestamp: d.start,
      endTimestamp: d.end,
      rewardTxHash: v.rewardTx?.hash,
      addresses: v.rewardAddresses,
      reward: { amount: String(fee.amount) },
    });
    const u = new URL(`${emu.url}/v1/networks/mainnet/blockchains/p-chain/utxos`);
    u.searchParams.set('addresses', fee.addresses[0] as string);
    u.searchParams.set('includeSpent', 'true');
    u.searchParams.set('pageSize', '100');
    const utxos = await walk(u.toString(), 'utxos');
    expect(utxos.items.find((x) => x.utxoId === fee.id)).toMatchObject({
      blockTimestamp: v.end,
      rewardType: 'VALIDATOR_FEE',
    });
    // A fee still held for a validator that has not ended is not listed yet.
    const held = rewarded.find((s) => !s.validator?.rewardTx || s.validator.rewardTx.time > t) as StakeRec;
    expect(held).toBeDefined();
    const ofHeld = await walk(
      `${emu.url}/v1/networks/mainnet/rewards?nodeIds=${held.nodeId}&pageSize=100`,
      'historicalRewards',
    );
    expect(ofHeld.items.filter((r) => r.txHash === held.tx.hash).map((r) => r.rewardType)).toEqual([
      'DELEGATOR',
    ]);
  });

  it('a delegation ending in the same second as its validator is rewarded first, as avalanchego removes delegators before validators', () => {
    const t = now();
    const sameSecond = truth()
      .stakes(t)
      .filter((d) => d.kind === 'delegator' && d.validator?.end === d.end)
      .filter((d) => d.validator?.rewardTx && d.validator.rewardTx.time <= t)
      .filter((d) => d.rewardUtxos.some((u) => u.rewardType === 'DELEGATOR'))
      .filter((d) => d.rewardUtxos.some((u) => u.rewardType === 'VALIDATOR_FEE'));
    expect(sameSecond.length, 'the world has delegations that end with their validator').toBeGreaterThan(0);
    for (const d of sameSecond) {
      const v = d.validator as StakeRec;
      expect(d.rewardTx?.index, d.tx.hash).toBeLessThan(v.rewardTx?.index as number);
      // Both reward UTXOs are named after the delegation's staking transaction, in the order they were paid.
      const own = d.rewardUtxos.find((u) => u.rewardType === 'DELEGATOR') as UtxoRec;
      const fee = d.rewardUtxos.find((u) => u.rewardType === 'VALIDATOR_FEE') as UtxoRec;
      expect([own.outputIndex, fee.outputIndex], d.tx.hash).toEqual([
        d.tx.emitted.length,
        d.tx.emitted.length + 1,
      ]);
    }
  });

  it('some validators leave for days and come back', () => {
    let returns = 0;
    for (const node of truth().nodes()) {
      const periods = truth()
        .stakes(now())
        .filter((s) => s.kind === 'validator' && s.nodeId === node.nodeId);
      for (let i = 1; i < periods.length; i++) {
        const gap = (periods[i] as StakeRec).start - (periods[i - 1] as StakeRec).end;
        if (gap < 86_400) continue;
        returns++;
        // Away: not a validator in the middle of the gap.
        const middle = (periods[i - 1] as StakeRec).end + Math.floor(gap / 2);
        expect(
          truth()
            .validators(middle)
            .some((s) => s.nodeId === node.nodeId),
        ).toBe(false);
      }
    }
    expect(returns).toBeGreaterThan(0);
  });
});
