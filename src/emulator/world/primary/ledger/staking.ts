/** Keeps staking periods by node, their rewards and the supply they mint, in acceptance order (listings). */
import { hash32, type Rng, rng } from '../../../rng.ts';
import type { EvmChainInfo } from '../../chains.ts';
import type { Network } from '../../networks.ts';
import type { NodeInfo, Wallet } from '../actors.ts';
import { avax, DAY, MIN_UPTIME_PERCENT, NANO, REWARD_CURVE, STAKING, TX_FEE } from '../params.ts';
import type { StakeRec, TxRec, UtxoRec } from '../types.ts';
import type { EventQueue } from './events.ts';
import type { Payments } from './payments.ts';
import { listOf, type Postings, postingKey } from './postings.ts';
import type { Tx } from './records.ts';
import type { Transactions } from './transactions.ts';
import type { UtxoBook } from './utxo-book.ts';

/** A delegation starts this long after its transaction at most (see `delegate`). */
export const DELEGATION_LEAD_MAX_SECONDS = 36 * 3600;
/** The first nodes (by index) also validate the permissioned subnet. */
const PERMISSIONED_NODES = 3;
/** Share of validation periods whose node is up too little to be rewarded (with their delegations). */
const UNPAID_SHARE = 0.15;
/** Share of stakes whose reward goes to two owners (a threshold-1 owner of two addresses). */
const SHARED_OWNER_SHARE = 0.25;
/** Share of validators that stay away for days after a period before they stake again. */
const ABSENT_SHARE = 0.2;

/** Whether a staking period is rewarded: its validation period (its own, or a delegation's validator's) was up enough. */
export const isRewarded = (stake: StakeRec): boolean =>
  (stake.kind === 'validator' ? stake : stake.validator)?.uptime === undefined;

/** The validator's fee on a rewarded delegation: its share (feePpm) of the delegation's reward, rounded down. */
export const delegationFee = (delegation: StakeRec): bigint =>
  (delegation.potentialReward * BigInt(delegation.feePpm)) / 1_000_000n;

/**
 * The RewardValidatorTx that created a reward UTXO: the one closing the rewarded period, except for a
 * VALIDATOR_FEE, which the validator's own RewardValidatorTx pays (see `closePeriod`).
 */
export const rewardTxOf = (utxo: UtxoRec, stake: StakeRec): TxRec | undefined =>
  utxo.rewardType === 'VALIDATOR_FEE' ? stake.validator?.rewardTx : stake.rewardTx;

/**
 * The reward of staking `amount` for `seconds` when `supply` is minted, as the P-Chain computes it: the
 * supply still to mint × the stake's share of the supply × the consumption rate for its duration (see
 * REWARD_CURVE) × its share of the minting period, in integers, rounded down.
 */
export function stakingReward(amount: bigint, seconds: number, supply: bigint): bigint {
  const { supplyCapNavax, mintingPeriodSeconds: period, minConsumptionPpm, maxConsumptionPpm } = REWARD_CURVE;
  const duration = BigInt(seconds);
  const rateNumerator = (maxConsumptionPpm - minConsumptionPpm) * duration + minConsumptionPpm * period;
  const rateDenominator = period * 1_000_000n;
  return ((supplyCapNavax - supply) * rateNumerator * amount * duration) / rateDenominator / supply / period;
}

export interface Staking {
  /** Validation periods and delegations in the order their transactions were accepted. */
  readonly stakes: StakeRec[];
  /** Delegations alone, in the order their transactions were accepted. */
  readonly delegations: StakeRec[];
  /** Reward UTXOs in creation order, each with the period it rewards. */
  readonly rewards: { utxo: UtxoRec; stake: StakeRec }[];
  /** Validation periods of a node, oldest first. */
  periodsOf(nodeId: string): readonly StakeRec[];
  /** The initial supply plus every reward minted so far. */
  supply(): bigint;
  /** A node validating at `t`, picked by the height's hash (any node when none validates). */
  proposerAt(t: number, height: number): string;
  /** A node's validation `round`, its reward scheduled at its end (and its permissioned-subnet period). */
  stakeValidator(time: number, node: NodeInfo, round: number): void;
  /**
   * Rewards a period at its end, returns its stake, and schedules a validator's next round. A validator's
   * period also pays the fees its delegations earned it (VALIDATOR_FEE), as the P-Chain does since Cortina.
   */
  closePeriod(time: number, stake: StakeRec): void;
  /** A delegation drawn from `r` to a validator that covers it (none if none does or its wallet is short). */
  delegate(time: number, r: Rng): void;
}

export function createStaking(args: {
  seed: number;
  network: Network;
  wallets: readonly Wallet[];
  nodes: readonly NodeInfo[];
  /** The wallet that pays for the permissioned subnet's validations. */
  owner: Wallet;
  permissioned: EvmChainInfo;
  /** When a subnet or chain was created, if it was. */
  createdAt(id: string): number | undefined;
  book: UtxoBook;
  history: Transactions;
  payments: Payments;
  queue: EventQueue;
  postings: Postings;
}): Staking {
  const { seed, network, wallets, nodes, owner, permissioned, book, history, payments, queue } = args;
  const rules = STAKING[network];
  const post = args.postings.add;
  const stakes: StakeRec[] = [];
  const delegations: StakeRec[] = [];
  const rewards: { utxo: UtxoRec; stake: StakeRec }[] = [];
  const periods = new Map<string, StakeRec[]>();
  let supply = rules.initialSupplyAvax * NANO;

  const reward = (amount: bigint, start: number, end: number) => stakingReward(amount, end - start, supply);
  /** The reward owners of a new stake: `owner`, and for some a second wallet beside it. */
  const rewardOwners = (owner: string, ...key: (string | number)[]): string[] => {
    const r = rng(seed, network, 'reward-owners', ...key);
    if (!r.chance(SHARED_OWNER_SHARE)) return [owner];
    const other = r.pick(wallets).address;
    return other === owner ? [owner] : [owner, other];
  };
  const currentPeriod = (node: NodeInfo, t: number): StakeRec | undefined => {
    const s = periods.get(node.nodeId)?.at(-1);
    return s && s.start <= t && t < s.end ? s : undefined;
  };

  return {
    stakes,
    delegations,
    rewards,
    periodsOf: (nodeId) => periods.get(nodeId) ?? [],
    supply: () => supply,
    proposerAt(t, height) {
      const first = hash32(seed, height, 7) % nodes.length;
      for (let k = 0; k < nodes.length; k++) {
        const node = nodes[(first + k) % nodes.length] as NodeInfo;
        if (currentPeriod(node, t)) return node.nodeId;
      }
      return (nodes[first] as NodeInfo).nodeId;
    },

    stakeValidator(time, node, round) {
      const r = rng(seed, network, 'validator', node.index, round);
      const start = time + r.int(60, 3600);
      const end = start + r.int(rules.validatorDays[0] * DAY, rules.validatorDays[1] * DAY);
      const amount = avax(r.int(rules.validatorStakeAvax[0], rules.validatorStakeAvax[1]));
      // Separate draws, so the world's other draws stay as they were before unpaid periods existed.
      const health = rng(seed, network, 'uptime', node.index, round);
      const uptime = health.chance(UNPAID_SHARE)
        ? (MIN_UPTIME_PERCENT - 30 + health.float() * 29.9).toFixed(4)
        : undefined;
      payments.ensure(node.owner, amount + 2n * TX_FEE, time);
      const tx = history.begin('p', node.legacyTx ? 'AddValidatorTx' : 'AddPermissionlessValidatorTx', time);
      tx.nodeId = node.nodeId;
      book.pay(tx, node.owner, amount);
      const stake: StakeRec = {
        kind: 'validator',
        nodeId: node.nodeId,
        tx,
        start,
        end,
        amount,
        feePpm: node.feePpm,
        rewardAddresses: rewardOwners(node.owner, 'validator', node.index, round),
        potentialReward: reward(amount, start, end),
        ...(uptime !== undefined ? { uptime } : {}),
        rewardUtxos: [],
        delegators: [],
        ...(node.legacyTx ? {} : { signer: node.signer }),
      };
      book.out(tx, 'p', node.owner, amount, { type: 'STAKE', stake: { start, end } });
      tx.stake = stake;
      history.commit(tx);
      stakes.push(stake);
      listOf(periods, node.nodeId).push(stake);
      queue.push(end, { kind: 'reward', stake });
      const harborAt = args.createdAt(permissioned.subnetId);
      if (node.index < PERMISSIONED_NODES && harborAt !== undefined && harborAt <= time) {
        payments.ensure(owner.address, TX_FEE, time);
        const sub = history.begin('p', 'AddSubnetValidatorTx', time);
        sub.nodeId = node.nodeId;
        sub.subnetId = permissioned.subnetId;
        sub.subnetPeriod = { start, end, weight: 100n };
        sub.parties.push(owner.address);
        book.pay(sub, owner.address, 0n);
        stake.subnetTx = history.commit(sub);
      }
    },

    closePeriod(time, stake) {
      const tx = history.begin('p', 'RewardValidatorTx', time);
      tx.rewards = stake;
      tx.nodeId = stake.nodeId;
      stake.rewardTx = tx;
      /** A reward UTXO of `tx` for `rewarded`'s period, named after its staking transaction as avalanchego does. */
      const pay = (
        rewarded: StakeRec,
        owners: readonly string[],
        amount: bigint,
        rewardType: UtxoRec['rewardType'],
      ) => {
        if (amount <= 0n) return;
        const u = book.out(tx, 'p', owners, amount, {
          rewardType,
          origin: rewarded.tx as Tx,
          outputIndex: rewarded.tx.emitted.length + rewarded.rewardUtxos.length,
        });
        rewarded.rewardUtxos.push(u);
        const position = rewards.length;
        rewards.push({ utxo: u, stake: rewarded });
        post(postingKey.reward('*', rewarded.nodeId), position);
        for (const a of owners) {
          post(postingKey.reward(a, '*'), position);
          post(postingKey.reward(a, rewarded.nodeId), position);
        }
      };
      // A period that is not rewarded still ends with a RewardValidatorTx: it returns the stake, pays nothing.
      if (isRewarded(stake) && stake.kind === 'validator') {
        pay(stake, stake.rewardAddresses, stake.potentialReward, 'VALIDATOR');
        supply += stake.potentialReward;
        // Note: since Cortina the P-Chain holds a validator's fees on its delegations until the validator's
        // own period ends, and pays them with its reward (avalanchego pays them as one UTXO; the world
        // keeps one per delegation, so each fee still names the delegation it was earned on). Every
        // delegation ends by its validator's end, one ending in the same second included.
        for (const d of stake.delegators ?? [])
          pay(d, stake.rewardAddresses, delegationFee(d), 'VALIDATOR_FEE');
      } else if (isRewarded(stake)) {
        pay(stake, stake.rewardAddresses, stake.potentialReward - delegationFee(stake), 'DELEGATOR');
        // The fee is minted with the delegation's reward (so the supply, and every later reward, is
        // as if it were paid now); its UTXO waits for the validator's end.
        supply += stake.potentialReward;
      }
      // The stake comes back spendable when its period closes.
      for (const u of stake.tx.emitted) if (u.type === 'STAKE') book.returnStake(u);
      tx.parties.push(...stake.rewardAddresses);
      history.commit(tx);
      if (stake.kind === 'validator') {
        const node = nodes.find((n) => n.nodeId === stake.nodeId) as NodeInfo;
        const round = (periods.get(node.nodeId) ?? []).length;
        // Most validators stake again within hours; some leave for days and come back.
        const away = rng(seed, network, 'absence', node.index, round);
        const pause = away.chance(ABSENT_SHARE)
          ? away.int(DAY, 4 * DAY)
          : rng(seed, network, 'restake', node.index, round).int(300, 7200);
        queue.push(time + pause, {
          kind: 'validator',
          node,
          round,
        });
      }
    },

    delegate(time, r) {
      const wallet = r.pick(wallets);
      const start = time + r.int(6 * 3600, DELEGATION_LEAD_MAX_SECONDS);
      const candidates = nodes
        .map((n) => periods.get(n.nodeId)?.at(-1))
        .filter((s): s is StakeRec => !!s && s.start <= start && s.end >= start + DAY);
      if (candidates.length === 0) return;
      const validator = r.pick(candidates);
      const end = Math.min(
        validator.end,
        start + r.int(rules.delegatorDays[0] * DAY, rules.delegatorDays[1] * DAY),
      );
      const amount = avax(r.int(rules.delegatorStakeAvax[0], rules.delegatorStakeAvax[1]));
      const node = nodes.find((n) => n.nodeId === validator.nodeId) as NodeInfo;
      const tx = history.begin('p', node.legacyTx ? 'AddDelegatorTx' : 'AddPermissionlessDelegatorTx', time);
      tx.nodeId = validator.nodeId;
      if (!book.pay(tx, wallet.address, amount)) return;
      const stake: StakeRec = {
        kind: 'delegator',
        nodeId: validator.nodeId,
        tx,
        start,
        end,
        amount,
        feePpm: validator.feePpm,
        rewardAddresses: rewardOwners(wallet.address, 'delegation', tx.index),
        potentialReward: reward(amount, start, end),
        validator,
        rewardUtxos: [],
      };
      book.out(tx, 'p', wallet.address, amount, { type: 'STAKE', stake: { start, end } });
      tx.stake = stake;
      history.commit(tx);
      stakes.push(stake);
      validator.delegators?.push(stake);
      const position = delegations.length;
      delegations.push(stake);
      post(postingKey.delegation('*', stake.nodeId), position);
      for (const a of stake.rewardAddresses) {
        post(postingKey.delegation(a, '*'), position);
        post(postingKey.delegation(a, stake.nodeId), position);
      }
      queue.push(end, { kind: 'reward', stake });
    },
  };
}
