import type { WorldBase } from '../base.ts';
import { evmChainsOf } from '../chains.ts';
import type { EvmWorld } from '../evm/index.ts';
import type { Network, PrimaryChain } from '../networks.ts';
import { type Currency, priceOn } from '../prices.ts';
import { createNodes, createWallets, type NodeInfo, type Wallet } from './actors.ts';
import { createLedger, type Ledger } from './ledger/index.ts';
import { l1Balance } from './ledger/l1.ts';
import type { PostingKey } from './ledger/postings.ts';
import { DELEGATION_LEAD_MAX_SECONDS } from './ledger/staking.ts';
import type { CChainBlocks } from './ledger/transactions.ts';
import { spentAfter, type UtxoIndex } from './ledger/utxo-book.ts';
import { DAY, SIZES, STAKING } from './params.ts';
import { type DelegationStatus, delegationStatus } from './shapes.ts';
import { countUpTo } from './sorted.ts';
import type { L1ValidatorRec, PBlock, StakeRec, TxRec, UtxoRec, Vertex } from './types.ts';
import { utxoState } from './utxo-state.ts';

export type { NodeInfo, Wallet } from './actors.ts';
export { l1Balance } from './ledger/l1.ts';
export { type PostingKey, postingKey } from './ledger/postings.ts';
export { isRewarded, stakingReward } from './ledger/staking.ts';
export { encodeBlock } from './ledger/transactions.ts';
export { byAmount, bySeq, spentAfter, type UtxoIndex } from './ledger/utxo-book.ts';
export * as shapes from './shapes.ts';
export { countBelow, countUpTo, mergeWalks } from './sorted.ts';
export type * from './types.ts';
export { isStaked, type UtxoState, utxoState } from './utxo-state.ts';

/**
 * How long after its transaction a delegation can still be pending (`lead`) or active (`reach`): a
 * delegation accepted earlier than `now - reach` is completed at `now`.
 */
export const delegationWindow = (network: Network) => ({
  lead: DELEGATION_LEAD_MAX_SECONDS,
  reach: DELEGATION_LEAD_MAX_SECONDS + STAKING[network].delegatorDays[1] * DAY,
});

/** Amounts and UTXO counts of one balance category. */
export interface Bucket {
  amount: bigint;
  utxos: UtxoRec[];
}

/** A chain's balances of some addresses at one time (api-surfaces.md §2.4), AVAX only. */
export interface Balances {
  unlockedUnstaked: Bucket;
  unlockedStaked: Bucket;
  pendingStaked: Bucket;
  /** Outputs exported to this chain and not yet imported, by the chain that exported them. */
  atomic: Map<PrimaryChain, Bucket>;
}

/**
 * The primary network of one network: validators, delegations, P/X/C transactions and UTXOs, blocks.
 * This is the ground truth the Data API routes and the node RPC answer from; every method takes the
 * time it is asked at and hides what happened after it. Records are the world's own (types.ts); the
 * `shapes` helpers render them in the API's shapes.
 *
 * Two kinds of reads: the per-request ones (counts, one record by position, posting lists, indexes),
 * each O(log n), which the routes use; and whole-history copies (`transactions`, `rewards`, …), O(n),
 * for tests and ground truth.
 */
export interface PrimaryNetwork {
  readonly network: Network;
  /** The wallet pool: bech32 (`avax1…`/`fuji1…`) and EVM addresses of each key. */
  wallets(): readonly Wallet[];
  /** Every bech32 address of the pool. */
  addresses(): string[];
  /** Nodes of the primary network (validators, with their BLS keys and reward owners). */
  nodes(): readonly NodeInfo[];

  /** How many transactions of `chain` were accepted by `now` (positions 0 … count-1 are visible). */
  txCount(chain: PrimaryChain, now: number): number;
  /** The transaction at a position below `txCount` (index = position). */
  tx(chain: PrimaryChain, index: number): TxRec;
  blockCount(now: number): number;
  /** The P-Chain block at `height`, if accepted by `now`. */
  block(height: number, now: number): PBlock | undefined;
  vertexCount(now: number): number;
  vertex(index: number): Vertex;
  rewardCount(now: number): number;
  reward(position: number): { utxo: UtxoRec; stake: StakeRec };
  delegationCount(now: number): number;
  delegation(position: number): StakeRec;
  /** Ascending positions under a posting key (ledger/postings.ts `postingKey`); may include ones after `now`. */
  postings(key: PostingKey, now: number): readonly number[];
  /** The outputs of `address` (every address when undefined) on `chain` in the listing's orders. */
  utxoIndex(chain: PrimaryChain, address: string | undefined, now: number): UtxoIndex;

  /** Ground truth: transactions of a chain accepted at or before `now`, oldest first (a copy). */
  transactions(chain: PrimaryChain, now: number): TxRec[];
  /** Ground truth: UTXOs whose home is `chain` created at or before `now`, oldest first (a copy). */
  utxos(chain: PrimaryChain, now: number): UtxoRec[];
  /** Every UTXO of `address` on `chain`, oldest first (may include ones after `now`). */
  utxosOf(address: string, chain: PrimaryChain, now: number): readonly UtxoRec[];
  /** Primary-network validation periods current at `now` (start <= now < end), by node order. */
  validators(now: number): StakeRec[];
  /** A validation's delegations current at `now`. */
  currentDelegations(validation: StakeRec, now: number): StakeRec[];
  /** Ground truth: every delegation accepted by `now`, in acceptance order (a copy). */
  delegations(now: number, status?: DelegationStatus): StakeRec[];
  /** Ground truth: every staking period (validations and delegations) accepted by `now` (a copy). */
  stakes(now: number): StakeRec[];
  /** Ground truth: reward UTXOs minted by `now`, oldest first, each with the period it rewards (a copy). */
  rewards(now: number): { utxo: UtxoRec; stake: StakeRec }[];
  /** Balances of `addresses` on `chain` as of `at`: their UTXOs summed by `utxoState` at `at`. */
  balances(chain: PrimaryChain, addresses: readonly string[], at: number): Balances;
  /** Ground truth: P-Chain blocks accepted by `now` (height = index; a copy). */
  blocks(now: number): PBlock[];
  blockByHash(hash: string, now: number): PBlock | undefined;
  /** Ground truth: X-Chain vertices accepted by `now` (index = position; a copy). */
  vertices(now: number): Vertex[];
  /** L1 validators registered by `now` and their balance then. */
  l1Validators(now: number): { validator: L1ValidatorRec; balance: bigint }[];
  /** Permissioned-subnet validations current at `now`: the AddSubnetValidatorTx of each. */
  subnetValidators(subnetId: string, now: number): TxRec[];
  /** When a subnet or blockchain id came to exist (undefined if it never did or not yet by `now`). */
  createdAt(id: string, now: number): number | undefined;
  /** The AVAX price in `currency` on the UTC day of `t` (prices.ts `priceOn`; for historicalPrice). */
  priceAt(t: number, currency: Currency): number;
}

/** The C-Chain's block clock and hashes as the EVM side has them. */
function cChainBlocksOf(evm: EvmWorld, seed: number, network: Network): CChainBlocks {
  const info = evmChainsOf(seed, network)[0];
  const chain = info && evm.chain(info.evmChainId);
  if (!chain) throw new Error(`the EVM world has no C-Chain for ${network}`);
  const { clock } = chain.core;
  return {
    blockAt: (t) => clock.firstBlockAtOrAfter(t),
    timeOf: (block) => clock.timestampOf(block),
    hashOf: (block) => chain.core.blockHash(block),
  };
}

export function createPrimaryNetwork(base: WorldBase & { network: Network }, evm: EvmWorld): PrimaryNetwork {
  const { seed, network, genesis } = base;
  let ledger: Ledger | undefined;
  let wallets: Wallet[] | undefined;
  let nodes: NodeInfo[] | undefined;
  // Everything is built on first use, never at import or world creation.
  const sizes = SIZES[base.scale];
  const walletsOf = () => {
    wallets ??= createWallets(seed, network, sizes.wallets);
    return wallets;
  };
  const nodesOf = () => {
    nodes ??= createNodes(seed, network, sizes.nodes, walletsOf());
    return nodes;
  };
  const built = (): Ledger => {
    ledger ??= createLedger({
      seed,
      network,
      genesis,
      sizes,
      wallets: walletsOf(),
      nodes: nodesOf(),
      chains: evmChainsOf(seed, network),
      cChain: cChainBlocksOf(evm, seed, network),
    });
    return ledger;
  };
  const at = (now: number): Ledger => {
    const l = built();
    l.extendTo(now);
    return l;
  };
  const current = (s: StakeRec, now: number) => s.start <= now && now < s.end;
  const txTime = (tx: TxRec) => tx.time;
  const counts = {
    tx: (chain: PrimaryChain, now: number) => countUpTo(at(now).txs[chain], txTime, now),
    utxo: (chain: PrimaryChain, now: number) => countUpTo(at(now).utxos[chain], (u) => u.createdAt, now),
    block: (now: number) => countUpTo(at(now).blocks, (b) => b.time, now),
    vertex: (now: number) => countUpTo(at(now).vertices, (v) => v.time, now),
    reward: (now: number) => countUpTo(at(now).rewards, (r) => r.utxo.createdAt, now),
    delegation: (now: number) => countUpTo(at(now).delegations, (s) => s.tx.time, now),
    stake: (now: number) => countUpTo(at(now).stakes, (s) => s.tx.time, now),
  };

  return {
    network,
    wallets: walletsOf,
    addresses: () => walletsOf().map((w) => w.address),
    nodes: nodesOf,

    txCount: counts.tx,
    tx: (chain, index) => built().txs[chain][index] as TxRec,
    blockCount: counts.block,
    block: (height, now) => (height < counts.block(now) ? built().blocks[height] : undefined),
    vertexCount: counts.vertex,
    vertex: (index) => built().vertices[index] as Vertex,
    rewardCount: counts.reward,
    reward: (position) => built().rewards[position] as { utxo: UtxoRec; stake: StakeRec },
    delegationCount: counts.delegation,
    delegation: (position) => built().delegations[position] as StakeRec,
    postings: (key, now) => at(now).postings(key),
    utxoIndex: (chain, address, now) => at(now).utxoIndex(chain, address),

    transactions: (chain, now) => at(now).txs[chain].slice(0, counts.tx(chain, now)),
    utxos: (chain, now) => at(now).utxos[chain].slice(0, counts.utxo(chain, now)),
    utxosOf: (address, chain, now) => at(now).utxosOf(address, chain),
    validators(now) {
      const l = at(now);
      return nodesOf()
        .map((n) => l.periodsOf(n.nodeId).findLast((s) => current(s, now)))
        .filter((s): s is StakeRec => s !== undefined);
    },
    currentDelegations: (validation, now) =>
      (validation.delegators ?? []).filter((d) => d.tx.time <= now && current(d, now)),
    delegations(now, status) {
      const all = at(now).delegations.slice(0, counts.delegation(now));
      return status ? all.filter((s) => delegationStatus(s, now) === status) : all;
    },
    stakes: (now) => at(now).stakes.slice(0, counts.stake(now)),
    rewards: (now) => at(now).rewards.slice(0, counts.reward(now)),
    balances(chain, addresses, t) {
      const l = at(t);
      const empty = (): Bucket => ({ amount: 0n, utxos: [] });
      const b: Balances = {
        unlockedUnstaked: empty(),
        unlockedStaked: empty(),
        pendingStaked: empty(),
        atomic: new Map(),
      };
      // Candidates: unspent at the end of the simulated history, or spent after t; utxoState decides.
      const found = new Map<number, UtxoRec>();
      for (const address of addresses) {
        const index = l.utxoIndex(chain, address);
        for (const u of index.unspentBySeq.walk(undefined, 1, false)) found.set(u.seq, u);
        for (const u of spentAfter(index, t)) found.set(u.seq, u);
      }
      const add = (bucket: Bucket, u: UtxoRec) => {
        bucket.amount += u.amount;
        bucket.utxos.push(u);
      };
      for (const u of [...found.values()].sort((x, y) => x.seq - y.seq)) {
        const state = utxoState(u, t);
        if (state === 'atomic') {
          const bucket = b.atomic.get(u.createdOn) ?? empty();
          b.atomic.set(u.createdOn, bucket);
          add(bucket, u);
        } else if (state !== 'unborn' && state !== 'spent') add(b[state], u);
      }
      return b;
    },
    blocks: (now) => at(now).blocks.slice(0, counts.block(now)),
    blockByHash(hash, now) {
      const block = at(now).blockByHash(hash);
      return block && block.time <= now ? block : undefined;
    },
    vertices: (now) => at(now).vertices.slice(0, counts.vertex(now)),
    l1Validators: (now) =>
      at(now)
        .l1Validators.filter((v) => v.registeredAt <= now)
        .map((validator) => ({ validator, balance: l1Balance(validator, now) })),
    subnetValidators(subnetId, now) {
      return this.validators(now)
        .map((s) => s.subnetTx)
        .filter((tx): tx is TxRec => !!tx && tx.subnetId === subnetId && tx.time <= now);
    },
    createdAt(id, now) {
      const t = at(now).created.get(id);
      return t !== undefined && t <= now ? t : undefined;
    },
    priceAt: (t, currency) => priceOn(seed, 'AVAX', t, currency).value,
  };
}
