import { rng } from '../../rng.ts';
import { evmChainsOf } from '../chains.ts';
import type { WorldBase } from '../index.ts';
import type { Network, PrimaryChain } from '../networks.ts';
import { createNodes, createWallets, type NodeInfo, type Wallet } from './actors.ts';
import { createLedger, type Ledger, l1Balance } from './ledger.ts';
import { DAY, SIZES } from './params.ts';
import { type DelegationStatus, delegationStatus } from './shapes.ts';
import type { L1ValidatorRec, PBlock, StakeRec, TxRec, UtxoRec, Vertex } from './types.ts';

export type { NodeInfo, Wallet } from './actors.ts';
export { encodeBlock, l1Balance } from './ledger.ts';
export * as shapes from './shapes.ts';
export type * from './types.ts';

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
 */
export interface PrimaryNetwork {
  readonly network: Network;
  /** The wallet pool: bech32 (`avax1…`/`fuji1…`) and EVM addresses of each key. */
  wallets(): readonly Wallet[];
  /** Every bech32 address of the pool. */
  addresses(): string[];
  /** Nodes of the primary network (validators, with their BLS keys and reward owners). */
  nodes(): readonly NodeInfo[];
  /** Transactions of a chain accepted at or before `now`, oldest first (index = position in the listing). */
  transactions(chain: PrimaryChain, now: number): readonly TxRec[];
  /** UTXOs whose home is `chain` created at or before `now`, oldest first (spent ones included). */
  utxos(chain: PrimaryChain, now: number): readonly UtxoRec[];
  /** Ids of the transactions touching `address` on `chain`, ascending (may include ones after `now`). */
  txIndexesOf(address: string, chain: PrimaryChain, now: number): readonly number[];
  utxosOf(address: string, chain: PrimaryChain, now: number): readonly UtxoRec[];
  /** Primary-network validation periods current at `now` (start <= now < end), by node order. */
  validators(now: number): StakeRec[];
  /** Every delegation whose transaction was accepted by `now`, in acceptance order. */
  delegations(now: number, status?: DelegationStatus): StakeRec[];
  /** Every staking period (validations and delegations) accepted by `now`. */
  stakes(now: number): readonly StakeRec[];
  /** Reward UTXOs minted by `now`, oldest first, each with the period it rewards. */
  rewards(now: number): readonly { utxo: UtxoRec; stake: StakeRec }[];
  /** Balances of `addresses` on `chain` as of `at`. */
  balances(chain: PrimaryChain, addresses: readonly string[], at: number): Balances;
  /** P-Chain blocks accepted by `now` (height = index). */
  blocks(now: number): readonly PBlock[];
  blockByHash(hash: string, now: number): PBlock | undefined;
  /** X-Chain vertices accepted by `now` (index = position). */
  vertices(now: number): readonly Vertex[];
  /** L1 validators registered by `now` and their balance then. */
  l1Validators(now: number): { validator: L1ValidatorRec; balance: bigint }[];
  /** Permissioned-subnet validations current at `now`: the AddSubnetValidatorTx of each. */
  subnetValidators(subnetId: string, now: number): TxRec[];
  /** When a subnet or blockchain id came to exist (undefined if it never did or not yet by `now`). */
  createdAt(id: string, now: number): number | undefined;
  /** The AVAX price in `currency` on the day of `t` (for historicalPrice). */
  priceAt(t: number, currency: string): number;
}

/** Number of leading items with `time(item) <= now` in a time-ordered array. */
function visible<T>(items: readonly T[], time: (item: T) => number, now: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (time(items[mid] as T) <= now) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const FX: Record<string, number> = {
  usd: 1,
  eur: 0.92,
  aud: 1.52,
  cad: 1.36,
  chf: 0.88,
  clp: 940,
  cny: 7.2,
  czk: 23,
  dkk: 6.9,
  gbp: 0.79,
  hkd: 7.8,
  huf: 360,
  jpy: 150,
  nzd: 1.65,
};

export function createPrimaryNetwork(base: WorldBase & { network: Network }): PrimaryNetwork {
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
  const at = (now: number): Ledger => {
    ledger ??= createLedger({
      seed,
      network,
      genesis,
      sizes,
      wallets: walletsOf(),
      nodes: nodesOf(),
      chains: evmChainsOf(seed, network),
    });
    ledger.extendTo(now);
    return ledger;
  };
  const upTo = <T>(items: readonly T[], time: (x: T) => number, now: number) =>
    items.slice(0, visible(items, time, now));
  const current = (s: StakeRec, now: number) => s.start <= now && now < s.end;

  return {
    network,
    wallets: walletsOf,
    addresses: () => walletsOf().map((w) => w.address),
    nodes: nodesOf,
    transactions: (chain, now) => upTo(at(now).txs[chain], (t) => t.time, now),
    utxos: (chain, now) => upTo(at(now).utxos[chain], (u) => u.createdAt, now),
    txIndexesOf: (address, chain, now) => at(now).txIndexesOf(address, chain),
    utxosOf: (address, chain, now) => at(now).utxosOf(address, chain),
    validators(now) {
      const l = at(now);
      return nodesOf()
        .map((n) => l.periodsOf(n.nodeId).findLast((s) => current(s, now)))
        .filter((s): s is StakeRec => s !== undefined);
    },
    delegations(now, status) {
      return upTo(at(now).stakes, (s) => s.tx.time, now).filter(
        (s) => s.kind === 'delegator' && (!status || delegationStatus(s, now) === status),
      );
    },
    stakes: (now) => upTo(at(now).stakes, (s) => s.tx.time, now),
    rewards: (now) => upTo(at(now).rewards, (r) => r.utxo.createdAt, now),
    balances(chain, addresses, t) {
      const l = at(t);
      const empty = (): Bucket => ({ amount: 0n, utxos: [] });
      const b: Balances = {
        unlockedUnstaked: empty(),
        unlockedStaked: empty(),
        pendingStaked: empty(),
        atomic: new Map(),
      };
      const add = (bucket: Bucket, u: UtxoRec) => {
        bucket.amount += u.amount;
        bucket.utxos.push(u);
      };
      const seen = new Set<string>();
      for (const address of addresses)
        for (const u of l.utxosOf(address, chain)) {
          if (u.createdAt > t || (u.spent && u.spent.at <= t) || seen.has(u.id)) continue;
          seen.add(u.id);
          if (u.createdOn !== chain) {
            const bucket = b.atomic.get(u.createdOn) ?? empty();
            b.atomic.set(u.createdOn, bucket);
            add(bucket, u);
          } else if (u.stake && t < u.stake.start) add(b.pendingStaked, u);
          else if (u.stake && t < u.stake.end) add(b.unlockedStaked, u);
          else add(b.unlockedUnstaked, u);
        }
      return b;
    },
    blocks: (now) => upTo(at(now).blocks, (b) => b.time, now),
    blockByHash(hash, now) {
      const block = at(now).blockByHash(hash);
      return block && block.time <= now ? block : undefined;
    },
    vertices: (now) => upTo(at(now).vertices, (v) => v.time, now),
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
    priceAt(t, currency) {
      const day = Math.floor((t - genesis) / DAY);
      const usd = 18 + rng(seed, network, 'price', day).float() * 24;
      return Math.round(usd * (FX[currency] ?? 1) * 100) / 100;
    },
  };
}
