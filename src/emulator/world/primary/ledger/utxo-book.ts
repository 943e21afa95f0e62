/** Keeps the outputs and their indexes (per address, unspent, by amount, spent) as outputs come and go. */
import type { PrimaryChain } from '../../networks.ts';
import { TX_FEE } from '../params.ts';
import { createSortedList, type SortedList } from '../sorted.ts';
import type { Spend, TxRec, UtxoRec } from '../types.ts';
import { listOf } from './postings.ts';
import { SpendOf, type Tx, Utxo } from './records.ts';

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

/** What an output is made with besides its transaction, home, owner and amount. */
export interface OutputExtras {
  type?: UtxoRec['type'];
  stake?: UtxoRec['stake'];
  rewardType?: UtxoRec['rewardType'];
  /** The transaction whose id names the output, when not the one creating it (a reward's stake). */
  origin?: Tx;
  outputIndex?: number;
}

export interface UtxoBook {
  /** UTXOs by home chain (where they are spent), in creation order. */
  readonly utxos: Record<PrimaryChain, UtxoRec[]>;
  utxosOf(address: string, chain: PrimaryChain): readonly UtxoRec[];
  /** Outputs of `address` (or every address when undefined) on `chain`, built on first use. */
  utxoIndex(chain: PrimaryChain, address: string | undefined): UtxoIndex;
  /** The next output's creation order, for an output made outside the book (the faucet's). */
  nextSeq(): number;
  /** Creates an output of `tx` whose home is `home`, owned by `owner` (one address, or several: threshold 1). */
  out(
    tx: Tx,
    home: PrimaryChain,
    owner: string | readonly string[],
    amount: bigint,
    extra?: OutputExtras,
  ): UtxoRec;
  /** Marks `taken` spent by `tx`. */
  spend(tx: TxRec, taken: UtxoRec[]): void;
  /** Pays `amount` and the fee from `address` on the transaction's chain (change back); false if short. */
  pay(tx: Tx, address: string, amount: bigint): boolean;
  /** What `address` can spend on `chain` now. */
  spendable(chain: PrimaryChain, address: string): bigint;
  /** A P-Chain stake output is spendable again (its period has closed). */
  returnStake(u: UtxoRec): void;
}

/** A map per primary chain, keyed by address (or `*`). */
const perChain = <T>(): Record<PrimaryChain, Map<string, T>> => ({
  p: new Map(),
  x: new Map(),
  c: new Map(),
});

const sum = (list: readonly UtxoRec[]) => list.reduce((s, u) => s + u.amount, 0n);

export function createUtxoBook(): UtxoBook {
  const utxos: Record<PrimaryChain, UtxoRec[]> = { p: [], x: [], c: [] };
  const utxoLists = perChain<UtxoRec[]>();
  const utxoIndexes = perChain<UtxoIndex & { spentLog: UtxoRec[] }>();
  const spendable = perChain<UtxoRec[]>();
  let utxoSeq = 0;

  /** The indexes an output belongs to: each owner's on its home chain, and its home chain's. */
  const indexesOf = (u: UtxoRec) => {
    const found = [];
    for (const key of [...u.addresses, '*']) {
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
    let total = 0n;
    let n = 0;
    while (total < need && n < pool.length) total += (pool[n++] as UtxoRec).amount;
    return total < need ? undefined : pool.splice(0, n);
  };

  const out = (
    tx: Tx,
    home: PrimaryChain,
    owner: string | readonly string[],
    amount: bigint,
    extra: OutputExtras = {},
  ) => {
    const owners = typeof owner === 'string' ? [owner] : [...owner];
    const u = new Utxo(
      utxoSeq++,
      extra.origin ?? tx,
      extra.outputIndex ?? tx.emitted.length,
      tx.chain,
      home,
      owners,
      amount,
      tx.time,
      tx.block,
      extra.type ?? 'TRANSFER',
    );
    if (extra.stake) u.stake = extra.stake;
    if (extra.rewardType) u.rewardType = extra.rewardType;
    tx.emitted.push(u);
    utxos[home].push(u);
    for (const address of owners) listOf(utxoLists[home], address).push(u);
    for (const index of indexesOf(u)) {
      index.unspentBySeq.insert(u);
      index.unspentByAmount.insert(u);
      index.allByAmount.insert(u);
    }
    // Any owner could spend a threshold-1 output; the world lets the first one.
    if (u.type === 'TRANSFER' && home === tx.chain) listOf(spendable[home], owners[0] as string).push(u);
    return u;
  };

  return {
    utxos,
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
    nextSeq: () => utxoSeq++,
    out,
    spend,
    pay(tx, address, amount) {
      const taken = take(tx.chain, address, amount + TX_FEE);
      if (!taken) return false;
      spend(tx, taken);
      tx.burned = TX_FEE;
      const change = sum(taken) - amount - TX_FEE;
      if (change > 0n) out(tx, tx.chain, address, change);
      return true;
    },
    spendable: (chain, address) => sum(spendable[chain].get(address) ?? []),
    returnStake: (u) => listOf(spendable.p, u.addresses[0] as string).push(u),
  };
}

const spentAt = (u: UtxoRec): number => (u.spent as Spend).at;

/** Where a spent output's spend sits among all spends: its transaction's chain position, then its input. */
const spentOrder = (u: UtxoRec): number => {
  const tx = (u.spent as SpendOf).tx;
  return tx.index * 1024 + tx.consumed.indexOf(u);
};
