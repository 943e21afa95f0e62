/** The ledger: schedules each day's events and runs them in time order; its modules keep the records. */
import { rng } from '../../../rng.ts';
import type { EvmChainInfo } from '../../chains.ts';
import type { Network, PrimaryChain } from '../../networks.ts';
import type { NodeInfo, Wallet } from '../actors.ts';
import { avax, DAY, type PrimarySizes, STAKING } from '../params.ts';
import type { L1ValidatorRec, PBlock, StakeRec, TxRec, UtxoRec, Vertex } from '../types.ts';
import { createEventQueue, type Queued } from './events.ts';
import { createSubnets } from './l1.ts';
import { createPayments } from './payments.ts';
import { createPostings, type PostingKey } from './postings.ts';
import { createStaking } from './staking.ts';
import { type CChainBlocks, createTransactions } from './transactions.ts';
import { createUtxoBook, type UtxoIndex } from './utxo-book.ts';

/**
 * The primary network's history, simulated one UTC day at a time in event order. A day is simulated
 * whole the first time anything at or before its end is asked for; later days only append, so every
 * array below grows at its end, is ordered by time, and an index into it is a stable position. Records
 * dated after 'now' exist here but every view hides them (primary/index.ts).
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

/** A subnet is created this long before its chain; an L1 is converted this long after its chain. */
const SUBNET_LEAD_SECONDS = 1800;
const CONVERT_AFTER_SECONDS = 1800;

export function createLedger(o: LedgerOptions): Ledger {
  const { seed, network, genesis, wallets, nodes } = o;
  const rules = STAKING[network];
  const l1Chain = o.chains.find((c) => c.validatorSet === 'l1') as EvmChainInfo;
  const permissioned = o.chains.find((c) => c.validatorSet === 'permissioned') as EvmChainInfo;
  const owner = wallets[0] as Wallet;

  const queue = createEventQueue();
  const postings = createPostings();
  const book = createUtxoBook();
  const history = createTransactions({
    ids: { seed, network },
    cChain: o.cChain,
    postings,
    // Read as each block is accepted, once staking and the subnets below exist.
    blockFacts: (time, height) => ({
      proposer: staking.proposerAt(time, height),
      supply: staking.supply(),
      ...subnets.l1Load(time),
    }),
  });
  const payments = createPayments({ seed, network, genesis, wallets, book, history, queue });
  const common = { seed, network, owner, book, history, payments, queue };
  const subnets = createSubnets({ ...common, l1Chain });
  const staking = createStaking({
    ...common,
    wallets,
    nodes,
    permissioned,
    createdAt: (id) => subnets.created.get(id),
    postings,
  });

  const run = (q: Queued) => {
    const e = q.event;
    switch (e.kind) {
      case 'fund':
        return payments.fund(
          e.chain,
          e.wallet.address,
          avax(rules.walletFundingAvax / (e.chain === 'p' ? 1 : 4)),
          q.time,
        );
      case 'validator':
        return staking.stakeValidator(q.time, e.node, e.round);
      case 'reward':
        return staking.closePeriod(q.time, e.stake);
      case 'import':
        return payments.importUtxo(q.time, e.utxo, e.owner);
      case 'subnet':
        return subnets.createSubnet(q.time, e.chain);
      case 'chain':
        return subnets.createChain(q.time, e.chain);
      case 'l1':
        return subnets.l1Step(q.time, e.step);
      default: {
        const r = rng(seed, network, e.kind, e.day, e.slot);
        if (e.kind === 'delegate') return staking.delegate(q.time, r);
        if (e.kind === 'atomic') return payments.atomic(q.time, r);
        return payments.transfer(e.kind === 'pTransfer' ? 'p' : 'x', q.time, r);
      }
    }
  };

  const scheduleDay = (day: number) => {
    const dayStart = genesis + day * DAY;
    const r = rng(seed, network, 'day', day);
    const interval = Math.floor(DAY / o.sizes.delegationsPerDay);
    for (let slot = 0; slot < o.sizes.delegationsPerDay; slot++)
      queue.push(dayStart + slot * interval + r.int(0, interval >> 1), { kind: 'delegate', day, slot });
    const spread = (kind: 'pTransfer' | 'xTransfer' | 'atomic', count: number) => {
      for (let slot = 0; slot < count; slot++) {
        const at = dayStart + r.int(0, DAY - 1);
        queue.push(kind === 'atomic' ? history.onCChainBlock(at) : at, { kind, day, slot });
      }
    };
    spread('pTransfer', o.sizes.pTransfersPerDay);
    spread('xTransfer', o.sizes.xTransfersPerDay);
    spread('atomic', o.sizes.atomicPerDay);
  };

  // Genesis: block 0; every wallet's funding, the nodes' first stakes and the subnets' and L1's lifecycle
  // all go through the queue, so every chain's history is in time order.
  history.addBlock(genesis, [], 'BanffStandardBlock');
  for (const w of wallets) {
    queue.push(genesis + 60 + w.index * 60, { kind: 'fund', chain: 'p', wallet: w });
    queue.push(genesis + 90 + w.index * 60, { kind: 'fund', chain: 'x', wallet: w });
  }
  for (const node of nodes)
    queue.push(genesis + 1800 + node.joinOffset, { kind: 'validator', node, round: 0 });
  for (const chain of [l1Chain, permissioned]) {
    const at = genesis + chain.createdAfterGenesis;
    queue.push(Math.max(genesis + 1, at - SUBNET_LEAD_SECONDS), { kind: 'subnet', chain });
    queue.push(at, { kind: 'chain', chain });
  }
  queue.push(genesis + l1Chain.createdAfterGenesis + CONVERT_AFTER_SECONDS, { kind: 'l1', step: 0 });
  let nextDay = 0;

  return {
    txs: history.txs,
    utxos: book.utxos,
    blocks: history.blocks,
    vertices: history.vertices,
    stakes: staking.stakes,
    delegations: staking.delegations,
    rewards: staking.rewards,
    l1Validators: subnets.l1Validators,
    created: subnets.created,
    postings: postings.get,
    utxosOf: book.utxosOf,
    utxoIndex: book.utxoIndex,
    periodsOf: staking.periodsOf,
    blockByHash: history.blockByHash,
    extendTo(t) {
      while (genesis + nextDay * DAY <= t) {
        const dayEnd = genesis + (nextDay + 1) * DAY;
        scheduleDay(nextDay);
        for (let q = queue.popBefore(dayEnd); q; q = queue.popBefore(dayEnd)) run(q);
        nextDay++;
      }
    },
  };
}
