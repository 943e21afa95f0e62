import { createHash } from 'node:crypto';
import { cb58Decode, cb58Encode } from '../../encoding.ts';
import { digest, hash32, type Rng, rng } from '../../rng.ts';
import type { EvmChainInfo } from '../chains.ts';
import type { Network, PrimaryChain } from '../networks.ts';
import { idOf, type NodeInfo, type Wallet } from './actors.ts';
import { lazyBlsSigner, withBlsSigner } from './bls-keys.ts';
import {
  DAY,
  L1_FEE_PER_SECOND,
  NANO,
  type PrimarySizes,
  REWARD_RATE_BPS,
  STAKING,
  TX_FEE,
  YEAR,
} from './params.ts';
import { createSortedList, type SortedList } from './sorted.ts';
import type { BlockType, L1ValidatorRec, PBlock, Spend, StakeRec, TxRec, UtxoRec, Vertex } from './types.ts';

/**
 * The primary network's history, simulated one UTC day at a time in event order. A day is simulated
 * whole the first time anything at or before its end is asked for; later days only append, so every
 * array below grows at its end, is ordered by time, and an index into it is a stable position. Records
 * dated after 'now' exist here but every view hides them (index.ts).
 *
 * Indexes are kept as records are appended (postings), or built on first use and kept from then on
 * (outputs by amount, unspent outputs), so that a page of any listing costs O(page + log n).
 */
export interface Ledger {
  readonly txs: Record<PrimaryChain, TxRec[]>;
  /** UTXOs by home chain (where they are spent), in creation order. */
  readonly utxos: Record<PrimaryChain, UtxoRec[]>;
  readonly blocks: PBlock[];
  readonly vertices: Vertex[];
  /** Validation periods and delegations in the order their transactions were accepted. */
  readonly stakes: StakeRec[];
  /** Delegations alone, in the order their transactions were accepted. */
  readonly delegations: StakeRec[];
  /** Reward UTXOs in creation order, each with the period it rewards. */
  readonly rewards: { utxo: UtxoRec; stake: StakeRec }[];
  readonly l1Validators: L1ValidatorRec[];
  /**
   * Ascending positions of the records under a key (see `postingKey`): transactions by chain, party and
   * type; rewards and delegations by address and node; blocks by proposer; transactions by validation id.
   */
  postings(key: PostingKey): readonly number[];
  utxosOf(address: string, chain: PrimaryChain): readonly UtxoRec[];
  /** Outputs of `address` (or every address when undefined) on `chain`, built on first use. */
  utxoIndex(chain: PrimaryChain, address: string | undefined): UtxoIndex;
  /** Validation periods of a node, oldest first. */
  periodsOf(nodeId: string): readonly StakeRec[];
  blockByHash(hash: string): PBlock | undefined;
  /** When each L1 chain and subnet was created (CreateChainTx / CreateSubnetTx time). */
  readonly created: Map<string, number>;
  /** Simulates through the end of the UTC day holding `t`. */
  extendTo(t: number): void;
}

/** One address's (or a chain's) outputs in the orders the UTXO listing and balances need. */
export interface UtxoIndex {
  /** Every output, by seq (live: grows with the history). */
  readonly all: readonly UtxoRec[];
  /** Unspent as of the end of the simulated history, by seq. */
  readonly unspentBySeq: SortedList<UtxoRec>;
  /** Unspent as of the end of the simulated history, by (amount, seq). */
  readonly unspentByAmount: SortedList<UtxoRec>;
  /** Every output, by (amount, seq). */
  readonly allByAmount: SortedList<UtxoRec>;
  /** Spent outputs in the order they were spent (a suffix of it is what was unspent at an earlier time). */
  readonly spentLog: readonly UtxoRec[];
}

/**
 * The outputs of an index spent after `t`, latest spend first. With `unspentBySeq` they are what was
 * unspent at `t` (some perhaps created after it: `utxoState` tells).
 */
export function spentAfter(index: UtxoIndex, t: number): UtxoRec[] {
  const log = index.spentLog;
  const later: UtxoRec[] = [];
  for (let i = log.length - 1; i >= 0 && (log[i] as UtxoRec & { spent: Spend }).spent.at > t; i--)
    later.push(log[i] as UtxoRec);
  return later;
}

export const bySeq = (a: UtxoRec, b: UtxoRec): number => a.seq - b.seq;
export const byAmount = (a: UtxoRec, b: UtxoRec): number =>
  a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : a.seq - b.seq;

/** The key of a posting list: its parts, `*` standing for "any". */
export type PostingKey = readonly string[];
export const postingKey = {
  tx: (chain: PrimaryChain, party: string, type: string): PostingKey => ['t', chain, type, party],
  reward: (address: string, nodeId: string): PostingKey => ['r', nodeId, address],
  delegation: (address: string, nodeId: string): PostingKey => ['d', nodeId, address],
  proposer: (nodeId: string): PostingKey => ['b', nodeId],
  validation: (validationId: string): PostingKey => ['v', validationId],
};

/**
 * Posting lists in nested maps, one level per key part. Note: not one map keyed by joined parts: a
 * joined key is a fresh string whose hash is computed on every lookup, the hot spot of generation.
 */
interface Postings {
  add(key: PostingKey, position: number): void;
  get(key: PostingKey): readonly number[];
}

function createPostings(): Postings {
  type Node = Map<string, Node | number[]>;
  const root: Node = new Map();
  return {
    add(key, position) {
      let node = root;
      for (let i = 0; i < key.length - 1; i++) {
        let next = node.get(key[i] as string) as Node | undefined;
        if (!next) {
          next = new Map();
          node.set(key[i] as string, next);
        }
        node = next;
      }
      const last = key[key.length - 1] as string;
      let list = node.get(last) as number[] | undefined;
      if (!list) {
        list = [];
        node.set(last, list);
      }
      if (list.at(-1) !== position) list.push(position);
    },
    get(key) {
      let node: Node | number[] | undefined = root;
      for (const part of key) node = node instanceof Map ? node.get(part) : undefined;
      return Array.isArray(node) ? node : [];
    },
  };
}

/** A map per primary chain, keyed by address (or `*`). */
const perChain = <T>(): Record<PrimaryChain, Map<string, T>> => ({
  p: new Map(),
  x: new Map(),
  c: new Map(),
});

/** Where the C-Chain's blocks are: the EVM side's block clock and block hashes (one fact, one value). */
export interface CChainBlocks {
  /** The first block sealed at or after `t`. */
  blockAt(t: number): number;
  timeOf(block: number): number;
  hashOf(block: number): string;
}

export interface LedgerOptions {
  seed: number;
  network: Network;
  genesis: number;
  sizes: PrimarySizes;
  wallets: readonly Wallet[];
  nodes: readonly NodeInfo[];
  chains: readonly EvmChainInfo[];
  cChain: CChainBlocks;
}

type Event =
  | { kind: 'fund'; chain: 'p' | 'x'; wallet: Wallet }
  | { kind: 'validator'; node: NodeInfo; round: number }
  | { kind: 'reward'; stake: StakeRec }
  | { kind: 'delegate' | 'pTransfer' | 'xTransfer' | 'atomic'; day: number; slot: number }
  | { kind: 'import'; utxo: UtxoRec; owner: Wallet }
  | { kind: 'subnet' | 'chain'; chain: EvmChainInfo }
  | { kind: 'l1'; step: number };

interface Queued {
  time: number;
  seq: number;
  event: Event;
}

const PERMISSIONED_NODES = 3;
const INITIAL_L1_VALIDATORS = 3;
/** A subnet is created this long before its chain; an L1 is converted this long after its chain. */
const SUBNET_LEAD_SECONDS = 1800;
const CONVERT_AFTER_SECONDS = 1800;
/** The first regular L1 step (registrations and top-ups) after the conversion. */
const FIRST_L1_STEP = 5;
/** A delegation starts this long after its transaction at most (see `delegate`). */
export const DELEGATION_LEAD_MAX_SECONDS = 36 * 3600;

interface Ids {
  seed: number;
  network: Network;
}

/** A transaction; its id is derived from (chain, index) when first read. */
class Tx implements TxRec {
  declare source?: PrimaryChain;
  declare destination?: PrimaryChain;
  declare stake?: StakeRec;
  declare rewards?: StakeRec;
  declare subnetId?: string;
  declare nodeId?: string;
  declare blockchain?: TxRec['blockchain'];
  declare l1?: TxRec['l1'];
  declare l1Burned?: bigint;
  declare subnetPeriod?: TxRec['subnetPeriod'];
  declare evmInputs?: TxRec['evmInputs'];
  declare evmOutputs?: TxRec['evmOutputs'];
  blockHash = '';
  consumed: UtxoRec[] = [];
  emitted: UtxoRec[] = [];
  burned = 0n;
  parties: string[] = [];
  private cachedHash: string | undefined = undefined;
  constructor(
    readonly ids: Ids,
    readonly chain: PrimaryChain,
    readonly index: number,
    public type: string,
    public time: number,
    public block: number,
  ) {}
  get hash(): string {
    this.cachedHash ??= cb58Encode(this.hashBytes());
    return this.cachedHash;
  }
  hashBytes(): Buffer {
    return digest(this.ids.seed, this.ids.network, 'tx', this.chain, this.index);
  }
}

/** An output; its id is derived from (txHash, outputIndex) when first read. */
class Utxo implements UtxoRec {
  declare stake?: { start: number; end: number };
  declare rewardType?: UtxoRec['rewardType'];
  declare spent?: Spend;
  private cachedId: string | undefined = undefined;
  constructor(
    readonly seq: number,
    /** The transaction whose id names the output (the staking transaction for a reward). */
    readonly origin: Tx,
    readonly outputIndex: number,
    readonly createdOn: PrimaryChain,
    readonly consumedOn: PrimaryChain,
    readonly addresses: string[],
    readonly amount: bigint,
    readonly createdAt: number,
    readonly block: number,
    readonly type: 'STAKE' | 'TRANSFER',
  ) {}
  get txHash(): string {
    return this.origin.hash;
  }
  get id(): string {
    this.cachedId ??= idOf(
      this.origin.ids.seed,
      this.origin.ids.network,
      'utxo',
      this.txHash,
      this.outputIndex,
    );
    return this.cachedId;
  }
}

/** An output of the faucet's genesis allocation (outside the wallet pool, never listed). */
class FaucetUtxo extends Utxo {
  override get txHash(): string {
    return idOf(this.origin.ids.seed, this.origin.ids.network, 'genesis', this.createdOn);
  }
  override get id(): string {
    return idOf(
      this.origin.ids.seed,
      this.origin.ids.network,
      'faucet-utxo',
      this.createdOn,
      this.origin.index,
    );
  }
}

class SpendOf implements Spend {
  constructor(readonly tx: TxRec) {}
  get txHash(): string {
    return this.tx.hash;
  }
  get at(): number {
    return this.tx.time;
  }
  get block(): number {
    return this.tx.block;
  }
}

export function createLedger(o: LedgerOptions): Ledger {
  const { seed, network, genesis, wallets, nodes, cChain } = o;
  const ids: Ids = { seed, network };
  const rules = STAKING[network];
  const avax = (whole: number): bigint => BigInt(Math.round(whole * 1000)) * (NANO / 1000n);
  const l1Chain = o.chains.find((c) => c.validatorSet === 'l1') as EvmChainInfo;
  const permissioned = o.chains.find((c) => c.validatorSet === 'permissioned') as EvmChainInfo;
  const owner = wallets[0] as Wallet;

  const txs: Record<PrimaryChain, TxRec[]> = { p: [], x: [], c: [] };
  const utxos: Record<PrimaryChain, UtxoRec[]> = { p: [], x: [], c: [] };
  const blocks: PBlock[] = [];
  const vertices: Vertex[] = [];
  const stakes: StakeRec[] = [];
  const delegations: StakeRec[] = [];
  const rewards: { utxo: UtxoRec; stake: StakeRec }[] = [];
  const l1Validators: L1ValidatorRec[] = [];
  /** When each L1 validator's balance runs out, given its deposits so far (parallel to l1Validators). */
  const l1EmptyAt: number[] = [];
  const created = new Map<string, number>();
  const postings = createPostings();
  const utxoLists = perChain<UtxoRec[]>();
  const utxoIndexes = perChain<UtxoIndex & { spentLog: UtxoRec[] }>();
  const spendable = perChain<UtxoRec[]>();
  const periods = new Map<string, StakeRec[]>();
  const blocksByHash = new Map<string, PBlock>();
  let utxoSeq = 0;
  // Note: the genesis block's parent is the network's genesis state and its bytes carry no time (as
  // avalanchego's genesis block), so its id is a constant of seed and network: a world started on any
  // day has it, and a pipeline may name it forever (pipelines/demo.json does).
  let lastBlockHash: Buffer = digest(seed, network, 'p-chain genesis state');
  // Funding comes from an address outside the pool, so its outputs are never listed.
  const faucetAddress = idOf(seed, network, 'faucet');
  let supply = rules.initialSupplyAvax * NANO;

  const post = postings.add;

  // ---- the event queue: a binary heap on (time, seq) ----
  const heap: Queued[] = [];
  let queued = 0;
  const before = (a: Queued, b: Queued) => a.time < b.time || (a.time === b.time && a.seq < b.seq);
  const push = (time: number, event: Event) => {
    heap.push({ time, seq: queued++, event });
    for (let i = heap.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (!before(heap[i] as Queued, heap[up] as Queued)) break;
      [heap[i], heap[up]] = [heap[up] as Queued, heap[i] as Queued];
      i = up;
    }
  };
  /** Events that may write a C-Chain transaction run on the C-Chain's block times. */
  const onCChainBlock = (time: number) => cChain.timeOf(cChain.blockAt(time));
  const pop = (): Queued => {
    const top = heap[0] as Queued;
    const last = heap.pop() as Queued;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l] as Queued, heap[m] as Queued)) m = l;
        if (r < heap.length && before(heap[r] as Queued, heap[m] as Queued)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m] as Queued, heap[i] as Queued];
        i = m;
      }
    }
    return top;
  };

  // ---- transactions and outputs ----
  const begin = (chain: PrimaryChain, type: string, time: number): Tx => {
    const block = chain === 'p' ? blocks.length : chain === 'x' ? vertices.length : cChain.blockAt(time);
    return new Tx(ids, chain, txs[chain].length, type, time, block);
  };

  /** The indexes an output belongs to: its address's on its home chain, and its home chain's. */
  const indexesOf = (u: UtxoRec) => {
    const found = [];
    for (const key of [u.addresses[0] as string, '*']) {
      const index = utxoIndexes[u.consumedOn].get(key);
      if (index) found.push(index);
    }
    return found;
  };

  const spend = (tx: TxRec, taken: UtxoRec[]) => {
    for (const u of taken) {
      u.spent = new SpendOf(tx);
      tx.consumed.push(u);
      for (const index of indexesOf(u)) {
        index.unspentBySeq.delete(u);
        index.unspentByAmount.delete(u);
        index.spentLog.push(u);
      }
    }
  };

  /** Takes the oldest spendable outputs of `address` on `chain` worth at least `need`; undefined if short. */
  const take = (chain: PrimaryChain, address: string, need: bigint): UtxoRec[] | undefined => {
    const pool = spendable[chain].get(address) ?? [];
    let sum = 0n;
    let n = 0;
    while (sum < need && n < pool.length) sum += (pool[n++] as UtxoRec).amount;
    return sum < need ? undefined : pool.splice(0, n);
  };
  const sum = (list: readonly UtxoRec[]) => list.reduce((s, u) => s + u.amount, 0n);

  const out = (
    tx: Tx,
    home: PrimaryChain,
    address: string,
    amount: bigint,
    extra: {
      type?: UtxoRec['type'];
      stake?: UtxoRec['stake'];
      rewardType?: UtxoRec['rewardType'];
      origin?: Tx;
      outputIndex?: number;
    } = {},
  ): UtxoRec => {
    const u = new Utxo(
      utxoSeq++,
      extra.origin ?? tx,
      extra.outputIndex ?? tx.emitted.length,
      tx.chain,
      home,
      [address],
      amount,
      tx.time,
      tx.block,
      extra.type ?? 'TRANSFER',
    );
    if (extra.stake) u.stake = extra.stake;
    if (extra.rewardType) u.rewardType = extra.rewardType;
    tx.emitted.push(u);
    utxos[home].push(u);
    listOf(utxoLists[home], address).push(u);
    for (const index of indexesOf(u)) {
      index.unspentBySeq.insert(u);
      index.unspentByAmount.insert(u);
      index.allByAmount.insert(u);
    }
    if (u.type === 'TRANSFER' && home === tx.chain) listOf(spendable[home], address).push(u);
    return u;
  };

  const commit = (tx: Tx): TxRec => {
    const parties = new Set(tx.parties);
    for (const u of tx.consumed) for (const a of u.addresses) parties.add(a);
    for (const u of tx.emitted) for (const a of u.addresses) parties.add(a);
    for (const leg of tx.evmInputs ?? []) parties.add(leg.address);
    for (const leg of tx.evmOutputs ?? []) parties.add(leg.address);
    tx.parties = [...parties];
    for (const a of tx.parties) {
      post(postingKey.tx(tx.chain, a, '*'), tx.index);
      post(postingKey.tx(tx.chain, a, tx.type), tx.index);
    }
    post(postingKey.tx(tx.chain, '*', tx.type), tx.index);
    for (const v of tx.l1?.validators ?? []) post(postingKey.validation(v.validationId), tx.index);
    txs[tx.chain].push(tx);
    if (tx.chain === 'p') {
      const proposal = tx.type === 'RewardValidatorTx';
      addBlock(tx.time, [tx], proposal ? 'BanffProposalBlock' : 'BanffStandardBlock');
      if (proposal) addBlock(tx.time, [], 'BanffCommitBlock');
    } else if (tx.chain === 'x') {
      const prev = vertices.at(-1);
      const v: Vertex = {
        index: vertices.length,
        height: vertices.length,
        hash: idOf(seed, network, 'vertex', vertices.length),
        parents: prev ? [prev.hash] : [],
        time: tx.time,
        txs: [tx],
      };
      vertices.push(v);
      tx.blockHash = v.hash;
    } else {
      tx.blockHash = cChain.hashOf(tx.block);
    }
    return tx;
  };

  const addBlock = (time: number, blockTxs: Tx[], type: BlockType) => {
    const height = blocks.length;
    const bytes = blockBytes(
      type,
      lastBlockHash,
      height,
      time,
      blockTxs.map((tx) => tx.hashBytes()),
    );
    const hashBytes = createHash('sha256').update(bytes).digest();
    const hash = cb58Encode(hashBytes);
    let active = 0;
    let fees = 0;
    for (let k = 0; k < l1Validators.length; k++)
      if ((l1Validators[k] as L1ValidatorRec).registeredAt <= time && time < (l1EmptyAt[k] as number)) {
        active++;
        fees += (time - (l1Validators[k] as L1ValidatorRec).registeredAt) * Number(L1_FEE_PER_SECOND);
      }
    const proposer = proposerAt(time, height);
    const block: PBlock = {
      height,
      hash,
      parent: cb58Encode(lastBlockHash),
      time,
      type,
      txs: blockTxs,
      proposer,
      supply,
      activeL1Validators: active,
      l1AccruedFees: fees,
      size: bytes.length,
    };
    for (const tx of blockTxs) tx.blockHash = hash;
    blocks.push(block);
    blocksByHash.set(hash, block);
    post(postingKey.proposer(proposer), height);
    lastBlockHash = hashBytes;
  };

  const currentPeriod = (node: NodeInfo, t: number): StakeRec | undefined => {
    const s = periods.get(node.nodeId)?.at(-1);
    return s && s.start <= t && t < s.end ? s : undefined;
  };
  /** A node validating at `t`, picked by the height's hash (any node when none validates). */
  const proposerAt = (t: number, height: number): string => {
    const first = hash32(seed, height, 7) % nodes.length;
    for (let k = 0; k < nodes.length; k++) {
      const node = nodes[(first + k) % nodes.length] as NodeInfo;
      if (currentPeriod(node, t)) return node.nodeId;
    }
    return (nodes[first] as NodeInfo).nodeId;
  };

  /** A BaseTx from the faucet (outside the wallet pool) that funds `address`. */
  const fund = (chain: 'p' | 'x', address: string, amount: bigint, time: number) => {
    const tx = begin(chain, 'BaseTx', time);
    const faucet = new FaucetUtxo(
      utxoSeq++,
      tx,
      tx.index,
      chain,
      chain,
      [faucetAddress],
      amount + TX_FEE,
      genesis,
      0,
      'TRANSFER',
    );
    faucet.spent = new SpendOf(tx);
    tx.consumed.push(faucet);
    out(tx, chain, address, amount);
    tx.burned = TX_FEE;
    commit(tx);
  };
  /** Tops `address` up from the faucet when it holds less than `need` on the P-Chain. */
  const ensure = (address: string, need: bigint, time: number) => {
    if (sum(spendable.p.get(address) ?? []) < need) fund('p', address, need * 2n, time);
  };

  /** Pays `amount` plus the fee from `address` on `chain` (change back to it); undefined if short. */
  const pay = (tx: Tx, address: string, amount: bigint): boolean => {
    const taken = take(tx.chain, address, amount + TX_FEE);
    if (!taken) return false;
    spend(tx, taken);
    tx.burned = TX_FEE;
    const change = sum(taken) - amount - TX_FEE;
    if (change > 0n) out(tx, tx.chain, address, change);
    return true;
  };

  const reward = (amount: bigint, start: number, end: number) =>
    (amount * REWARD_RATE_BPS * BigInt(end - start)) / (10_000n * BigInt(YEAR));

  // ---- events ----
  const stakeValidator = (time: number, node: NodeInfo, round: number) => {
    const r = rng(seed, network, 'validator', node.index, round);
    const start = time + r.int(60, 3600);
    const end = start + r.int(rules.validatorDays[0] * DAY, rules.validatorDays[1] * DAY);
    const amount = avax(r.int(rules.validatorStakeAvax[0], rules.validatorStakeAvax[1]));
    ensure(node.owner, amount + 2n * TX_FEE, time);
    const tx = begin('p', node.legacyTx ? 'AddValidatorTx' : 'AddPermissionlessValidatorTx', time);
    tx.nodeId = node.nodeId;
    pay(tx, node.owner, amount);
    const stake: StakeRec = {
      kind: 'validator',
      nodeId: node.nodeId,
      tx,
      start,
      end,
      amount,
      feePpm: node.feePpm,
      rewardAddresses: [node.owner],
      potentialReward: reward(amount, start, end),
      rewardUtxos: [],
      delegators: [],
      ...(node.legacyTx ? {} : { signer: node.signer }),
    };
    out(tx, 'p', node.owner, amount, { type: 'STAKE', stake: { start, end } });
    tx.stake = stake;
    commit(tx);
    stakes.push(stake);
    listOf(periods, node.nodeId).push(stake);
    push(end, { kind: 'reward', stake });
    const harborAt = created.get(permissioned.subnetId);
    if (node.index < PERMISSIONED_NODES && harborAt !== undefined && harborAt <= time) {
      ensure(owner.address, TX_FEE, time);
      const sub = begin('p', 'AddSubnetValidatorTx', time);
      sub.nodeId = node.nodeId;
      sub.subnetId = permissioned.subnetId;
      sub.subnetPeriod = { start, end, weight: 100n };
      sub.parties.push(owner.address);
      pay(sub, owner.address, 0n);
      stake.subnetTx = commit(sub);
    }
  };

  const closePeriod = (time: number, stake: StakeRec) => {
    const tx = begin('p', 'RewardValidatorTx', time);
    tx.rewards = stake;
    tx.nodeId = stake.nodeId;
    stake.rewardTx = tx;
    const base = stake.tx.emitted.length;
    const pay = (address: string, amount: bigint, rewardType: UtxoRec['rewardType']) => {
      if (amount <= 0n) return;
      const u = out(tx, 'p', address, amount, {
        rewardType,
        origin: stake.tx as Tx,
        outputIndex: base + stake.rewardUtxos.length,
      });
      stake.rewardUtxos.push(u);
      const position = rewards.length;
      rewards.push({ utxo: u, stake });
      for (const [a, n] of [
        [address, '*'],
        ['*', stake.nodeId],
        [address, stake.nodeId],
      ] as const)
        post(postingKey.reward(a, n), position);
      supply += amount;
    };
    if (stake.kind === 'validator')
      pay(stake.rewardAddresses[0] as string, stake.potentialReward, 'VALIDATOR');
    else {
      const fee = (stake.potentialReward * BigInt(stake.feePpm)) / 1_000_000n;
      pay(stake.rewardAddresses[0] as string, stake.potentialReward - fee, 'DELEGATOR');
      pay(stake.validator?.rewardAddresses[0] as string, fee, 'VALIDATOR_FEE');
    }
    // The stake comes back spendable when its period closes.
    for (const u of stake.tx.emitted)
      if (u.type === 'STAKE') listOf(spendable.p, u.addresses[0] as string).push(u);
    tx.parties.push(...stake.rewardAddresses);
    commit(tx);
    if (stake.kind === 'validator') {
      const node = nodes.find((n) => n.nodeId === stake.nodeId) as NodeInfo;
      const round = (periods.get(node.nodeId) ?? []).length;
      push(time + rng(seed, network, 'restake', node.index, round).int(300, 7200), {
        kind: 'validator',
        node,
        round,
      });
    }
  };

  const delegate = (time: number, r: Rng) => {
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
    const tx = begin('p', node.legacyTx ? 'AddDelegatorTx' : 'AddPermissionlessDelegatorTx', time);
    tx.nodeId = validator.nodeId;
    if (!pay(tx, wallet.address, amount)) return;
    const stake: StakeRec = {
      kind: 'delegator',
      nodeId: validator.nodeId,
      tx,
      start,
      end,
      amount,
      feePpm: validator.feePpm,
      rewardAddresses: [wallet.address],
      potentialReward: reward(amount, start, end),
      validator,
      rewardUtxos: [],
    };
    out(tx, 'p', wallet.address, amount, { type: 'STAKE', stake: { start, end } });
    tx.stake = stake;
    commit(tx);
    stakes.push(stake);
    validator.delegators?.push(stake);
    const position = delegations.length;
    delegations.push(stake);
    for (const [a, n] of [
      [wallet.address, '*'],
      ['*', stake.nodeId],
      [wallet.address, stake.nodeId],
    ] as const)
      post(postingKey.delegation(a, n), position);
    push(end, { kind: 'reward', stake });
  };

  const transfer = (chain: 'p' | 'x', time: number, r: Rng) => {
    const from = r.pick(wallets);
    const to = r.pick(wallets);
    const amount = avax(network === 'mainnet' ? r.int(1, 500) : r.int(1, 20) / 10);
    const tx = begin(chain, 'BaseTx', time);
    if (!pay(tx, from.address, amount)) return;
    out(tx, chain, to.address, amount);
    commit(tx);
  };

  const atomic = (time: number, r: Rng) => {
    const [from, to] = r.pick([
      ['p', 'x'],
      ['x', 'p'],
      ['p', 'c'],
      ['c', 'p'],
      ['x', 'c'],
      ['c', 'x'],
    ] as const);
    const wallet = r.pick(wallets);
    const amount = avax(network === 'mainnet' ? r.int(1, 200) : r.int(1, 30) / 10);
    const tx = begin(from, 'ExportTx', time);
    tx.source = from;
    tx.destination = to;
    if (from === 'c') {
      tx.evmInputs = [{ address: wallet.evmAddress, amount: amount + TX_FEE }];
      tx.burned = TX_FEE;
    } else if (!pay(tx, wallet.address, amount)) return;
    const exported = out(tx, to, wallet.address, amount);
    commit(tx);
    const delay = r.chance(0.7) ? r.int(30, 3600) : r.int(DAY, 3 * DAY);
    const at = time + delay;
    push(to === 'c' ? onCChainBlock(at) : at, { kind: 'import', utxo: exported, owner: wallet });
  };

  const importUtxo = (time: number, u: UtxoRec, wallet: Wallet) => {
    const tx = begin(u.consumedOn, 'ImportTx', time);
    tx.source = u.createdOn;
    tx.destination = u.consumedOn;
    spend(tx, [u]);
    tx.burned = TX_FEE;
    if (u.consumedOn === 'c') tx.evmOutputs = [{ address: wallet.evmAddress, amount: u.amount - TX_FEE }];
    else out(tx, u.consumedOn, wallet.address, u.amount - TX_FEE);
    commit(tx);
  };

  // ---- subnets, chains and the L1 ----
  const createSubnet = (time: number, chain: EvmChainInfo) => {
    ensure(owner.address, TX_FEE, time);
    const tx = begin('p', 'CreateSubnetTx', time);
    tx.subnetId = chain.subnetId;
    pay(tx, owner.address, 0n);
    created.set(chain.subnetId, time);
    commit(tx);
  };
  const createChain = (time: number, chain: EvmChainInfo) => {
    ensure(owner.address, TX_FEE, time);
    const tx = begin('p', 'CreateChainTx', time);
    tx.subnetId = chain.subnetId;
    tx.blockchain = {
      id: chain.blockchainId,
      name: chain.name,
      vmId: chain.vmId,
      evmChainId: chain.evmChainId,
    };
    pay(tx, owner.address, 0n);
    created.set(chain.blockchainId, time);
    commit(tx);
  };

  /** The L1's validator set: its conversion, then registrations and balance top-ups every few days. */
  const l1Step = (time: number, step: number) => {
    const r = rng(seed, network, 'l1', step);
    const newL1Validator = (k: number): L1ValidatorRec => {
      const v = rng(seed, network, 'l1-validator', k);
      const id = digest(seed, network, 'validation', k);
      const fields = {
        validationId: cb58Encode(id),
        validationIdHex: `0x${id.toString('hex')}`,
        nodeId: `NodeID-${cb58Encode(digest(seed, network, 'l1-node', k).subarray(0, 20))}`,
        subnetId: l1Chain.subnetId,
        weight: v.int(10, 100),
        owner: owner.address,
        registeredAt: time,
        deposits: [] as L1ValidatorRec['deposits'],
        minNonce: 0,
      };
      return withBlsSigner(fields, lazyBlsSigner(seed, network, 'l1-validator', k));
    };
    const register = (vals: L1ValidatorRec[]) => {
      for (const v of vals) {
        l1Validators.push(v);
        l1EmptyAt.push(v.registeredAt);
      }
    };
    const l1Tx = (type: string, vals: L1ValidatorRec[], deposit: bigint, change = false) => {
      ensure(owner.address, deposit * BigInt(vals.length) + TX_FEE, time);
      const tx = begin('p', type, time);
      tx.subnetId = l1Chain.subnetId;
      pay(tx, owner.address, deposit * BigInt(vals.length));
      for (const v of vals) {
        v.deposits.push({ at: time, amount: deposit, txHash: tx.hash });
        const total = v.deposits.reduce((s, d) => s + d.amount, 0n);
        l1EmptyAt[l1Validators.indexOf(v)] =
          v.registeredAt + Number((total + L1_FEE_PER_SECOND - 1n) / L1_FEE_PER_SECOND);
      }
      tx.l1 = { validators: vals, ...(change ? { balanceChange: deposit } : {}) };
      tx.l1Burned = deposit * BigInt(vals.length);
      return tx;
    };
    if (step < FIRST_L1_STEP) {
      const vals = Array.from({ length: INITIAL_L1_VALIDATORS }, (_, k) => newL1Validator(k));
      register(vals);
      const tx = l1Tx('ConvertSubnetToL1Tx', vals, avax(network === 'mainnet' ? 10 : 5));
      tx.l1 = {
        ...tx.l1,
        validators: vals,
        managerAddress: `0x${digest(seed, network, 'manager').subarray(0, 20).toString('hex')}`,
        chainId: l1Chain.blockchainId,
      } as TxRec['l1'];
      commit(tx);
    } else if (step % 4 === 1) {
      // Every fourth step registers a validator; the others top one up.
      const v = newL1Validator(l1Validators.length);
      register([v]);
      commit(l1Tx('RegisterL1ValidatorTx', [v], avax(network === 'mainnet' ? 8 : 4)));
    } else {
      const v = r.pick(l1Validators);
      commit(l1Tx('IncreaseL1ValidatorBalanceTx', [v], avax(r.int(1, 4)), true));
    }
    push(time + r.int(2 * DAY, 6 * DAY), { kind: 'l1', step: Math.max(step, FIRST_L1_STEP - 1) + 1 });
  };

  const run = (q: Queued) => {
    const e = q.event;
    switch (e.kind) {
      case 'fund':
        return fund(
          e.chain,
          e.wallet.address,
          avax(rules.walletFundingAvax / (e.chain === 'p' ? 1 : 4)),
          q.time,
        );
      case 'validator':
        return stakeValidator(q.time, e.node, e.round);
      case 'reward':
        return closePeriod(q.time, e.stake);
      case 'import':
        return importUtxo(q.time, e.utxo, e.owner);
      case 'subnet':
        return createSubnet(q.time, e.chain);
      case 'chain':
        return createChain(q.time, e.chain);
      case 'l1':
        return l1Step(q.time, e.step);
      default: {
        const r = rng(seed, network, e.kind, e.day, e.slot);
        if (e.kind === 'delegate') return delegate(q.time, r);
        if (e.kind === 'atomic') return atomic(q.time, r);
        return transfer(e.kind === 'pTransfer' ? 'p' : 'x', q.time, r);
      }
    }
  };

  const scheduleDay = (day: number) => {
    const dayStart = genesis + day * DAY;
    const r = rng(seed, network, 'day', day);
    const interval = Math.floor(DAY / o.sizes.delegationsPerDay);
    for (let slot = 0; slot < o.sizes.delegationsPerDay; slot++)
      push(dayStart + slot * interval + r.int(0, interval >> 1), { kind: 'delegate', day, slot });
    const spread = (kind: 'pTransfer' | 'xTransfer' | 'atomic', count: number) => {
      for (let slot = 0; slot < count; slot++) {
        const at = dayStart + r.int(0, DAY - 1);
        push(kind === 'atomic' ? onCChainBlock(at) : at, { kind, day, slot });
      }
    };
    spread('pTransfer', o.sizes.pTransfersPerDay);
    spread('xTransfer', o.sizes.xTransfersPerDay);
    spread('atomic', o.sizes.atomicPerDay);
  };

  // Genesis: block 0; every wallet's funding, the nodes' first stakes and the subnets' and L1's lifecycle
  // all go through the queue, so every chain's history is in time order.
  addBlock(genesis, [], 'BanffStandardBlock');
  for (const w of wallets) {
    push(genesis + 60 + w.index * 60, { kind: 'fund', chain: 'p', wallet: w });
    push(genesis + 90 + w.index * 60, { kind: 'fund', chain: 'x', wallet: w });
  }
  for (const node of nodes) push(genesis + 1800 + node.joinOffset, { kind: 'validator', node, round: 0 });
  for (const chain of [l1Chain, permissioned]) {
    const at = genesis + chain.createdAfterGenesis;
    push(Math.max(genesis + 1, at - SUBNET_LEAD_SECONDS), { kind: 'subnet', chain });
    push(at, { kind: 'chain', chain });
  }
  push(genesis + l1Chain.createdAfterGenesis + CONVERT_AFTER_SECONDS, { kind: 'l1', step: 0 });
  let nextDay = 0;

  return {
    txs,
    utxos,
    blocks,
    vertices,
    stakes,
    delegations,
    rewards,
    l1Validators,
    created,
    postings: postings.get,
    utxosOf: (address, chain) => utxoLists[chain].get(address) ?? [],
    utxoIndex(chain, address) {
      const key = address ?? '*';
      let index = utxoIndexes[chain].get(key);
      if (!index) {
        const all = address === undefined ? utxos[chain] : listOf(utxoLists[chain], key);
        const unspent = all.filter((u) => !u.spent);
        index = {
          all,
          unspentBySeq: createSortedList(bySeq, unspent),
          unspentByAmount: createSortedList(byAmount, unspent),
          allByAmount: createSortedList(byAmount, all),
          // Spends are in time order; a transaction's inputs in their order within it.
          spentLog: all
            .filter((u) => u.spent)
            .sort((a, b) => spentAt(a) - spentAt(b) || spentOrder(a) - spentOrder(b)),
        };
        utxoIndexes[chain].set(key, index);
      }
      return index;
    },
    periodsOf: (nodeId) => periods.get(nodeId) ?? [],
    blockByHash: (hash) => blocksByHash.get(hash),
    extendTo(t) {
      while (genesis + nextDay * DAY <= t) {
        const dayEnd = genesis + (nextDay + 1) * DAY;
        scheduleDay(nextDay);
        while (heap.length > 0 && (heap[0] as Queued).time < dayEnd) run(pop());
        nextDay++;
      }
    },
  };
}

const spentAt = (u: UtxoRec): number => (u.spent as Spend).at;

/** Where a spent output's spend sits among all spends: its transaction's chain position, then its input. */
const spentOrder = (u: UtxoRec): number => {
  const tx = (u.spent as SpendOf).tx;
  return tx.index * 1024 + tx.consumed.indexOf(u);
};

/** An L1 validator's remaining balance at `t`: its deposits so far less the continuous fee. */
export function l1Balance(v: L1ValidatorRec, t: number): bigint {
  const deposited = v.deposits.filter((d) => d.at <= t).reduce((s, d) => s + d.amount, 0n);
  const left = deposited - BigInt(Math.max(0, t - v.registeredAt)) * L1_FEE_PER_SECOND;
  return left > 0n ? left : 0n;
}

/**
 * The block's bytes: codec version, type id, parent id, height, time (none for the genesis block), then
 * its transaction ids.
 */
export function encodeBlock(
  type: BlockType,
  parent: string,
  height: number,
  time: number,
  txs: readonly TxRec[],
): Buffer {
  return blockBytes(
    type,
    cb58Decode(parent) ?? Buffer.alloc(32),
    height,
    time,
    txs.map((tx) => cb58Decode(tx.hash) ?? Buffer.alloc(32)),
  );
}

function blockBytes(type: BlockType, parent: Buffer, height: number, time: number, txIds: Buffer[]): Buffer {
  const typeId = { BanffProposalBlock: 29, BanffCommitBlock: 31, BanffStandardBlock: 32 }[type];
  const head = Buffer.alloc(2 + 4 + 8 + 32 + 8 + 4);
  head.writeUInt16BE(0, 0);
  head.writeUInt32BE(typeId, 2);
  head.writeBigUInt64BE(BigInt(height === 0 ? 0 : time), 6);
  parent.copy(head, 14);
  head.writeBigUInt64BE(BigInt(height), 46);
  head.writeUInt32BE(txIds.length, 54);
  return Buffer.concat([head, ...txIds]);
}

function listOf<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (!list) {
    list = [];
    map.set(key, list);
  }
  return list;
}
