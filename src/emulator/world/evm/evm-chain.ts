import type { WorldBase } from '../base.ts';
import type { EvmChainInfo } from '../chains.ts';
import { type Activity, createActivity } from './activity.ts';
import type { WalletPool } from './addresses.ts';
import {
  createEvmChainCore,
  type Erc20TransferRecord,
  type EvmBlockRecord,
  type EvmChainCore,
  type EvmTransactionRecord,
} from './chain.ts';
import { createNfts, type Erc721TokenRecord, type Nfts } from './nfts.ts';
import type { EvmProfile } from './profile.ts';
import { type ChainStats, createChainStats, type DayStats } from './stats.ts';
import type { IcmRole } from './transactions.ts';

/** A block range as the listings take it: startBlock inclusive, endBlock exclusive. */
export interface BlockRange {
  startBlock?: number;
  endBlock?: number;
}

/** One slice of a listing and the key of its last item when more follow (see FetchSlice). */
export interface Slice<T, K> {
  items: T[];
  next?: K;
}

/**
 * One EVM chain: the ground truth tests read and the slices the routes serve. Every listing here is
 * newest first (except NFT tokens, by id) and resumes from the key of the last item it served.
 */
export interface EvmChain {
  readonly info: EvmChainInfo;
  readonly core: EvmChainCore;
  readonly activity: Activity;
  readonly nfts: Nfts;
  readonly stats: ChainStats;
  /** The newest block at `now`. */
  head(now: number): number;
  block(n: number): EvmBlockRecord;
  /** The transactions of block n, in block order. */
  transactions(n: number): EvmTransactionRecord[];
  /** Transactions in blocks [fromBlock, toBlock). */
  txCountBetween(fromBlock: number, toBlock: number): number;
  /** A day's scanned statistics (day 0 is the genesis day). */
  dayStats(day: number, now: number): DayStats;
  listNative(
    address: string,
    range: BlockRange,
    now: number,
    after: readonly [number, number] | undefined,
    limit: number,
  ): Slice<EvmTransactionRecord, [number, number]>;
  listErc20(
    address: string,
    range: BlockRange,
    now: number,
    after: readonly [number, number] | undefined,
    limit: number,
  ): Slice<Erc20TransferRecord, [number, number]>;
  listLatestTransactions(
    status: 'success' | 'failed' | undefined,
    now: number,
    after: readonly [number, number] | undefined,
    limit: number,
  ): Slice<EvmTransactionRecord, [number, number]>;
  listBlocks(now: number, after: number | undefined, limit: number): Slice<EvmBlockRecord, number>;
  /** Tokens of a collection (contract address) by id, or undefined if it is not a collection here. */
  listCollectionTokens(
    contract: string,
    now: number,
    after: number | undefined,
    limit: number,
  ): Slice<Erc721TokenRecord, number> | undefined;
  /** ERC-721 tokens held by `address`, by (collection, token id); optionally one collection. */
  listErc721Balances(
    address: string,
    contract: string | undefined,
    now: number,
    after: readonly [number, number] | undefined,
    limit: number,
  ): Slice<Erc721TokenRecord, [number, number]>;
  /** Native balance in wei after `block` (0 for addresses with no history). */
  nativeBalance(address: string, block: number): bigint;
}

/** Takes up to `limit` items and says whether one more exists (the generator is not run further). */
function take<T>(source: Iterator<T>, limit: number): { items: T[]; more: boolean } {
  const items: T[] = [];
  while (items.length < limit) {
    const r = source.next();
    if (r.done) return { items, more: false };
    items.push(r.value);
  }
  return { items, more: !source.next().done };
}

export function createEvmChain(args: {
  base: WorldBase;
  info: EvmChainInfo;
  profile: EvmProfile;
  pool: WalletPool;
  icmRole?: (seq: number) => IcmRole | undefined;
}): EvmChain {
  const core = createEvmChainCore(args);
  const { clock, model } = core;
  const activity = createActivity(core, args.base.seed);
  const nfts = createNfts(core, args.base.profile.historyDays, args.profile.nftsPerCollection);
  const stats = createChainStats(core);

  const seqRange = (range: BlockRange, now: number) => {
    const top = clock.headAt(now) + 1;
    const lo = clock.txStart(Math.min(Math.max(0, range.startBlock ?? 0), top));
    const hi = clock.txStart(Math.min(range.endBlock ?? top, top));
    return { lo, hi };
  };

  const addressListing = <T>(
    kind: 'native' | 'erc20',
    record: (seq: number, hint: number | undefined) => T & { blockNumber: string },
    keyOf: (item: T & { blockNumber: string }, seq: number) => [number, number],
    resume: (key: readonly [number, number]) => number,
  ) => {
    return (
      address: string,
      range: BlockRange,
      now: number,
      after: readonly [number, number] | undefined,
      limit: number,
    ): Slice<T, [number, number]> => {
      const party = core.partyOf(address);
      if (!party) return { items: [] };
      const { lo, hi: top } = seqRange(range, now);
      const hi = after ? Math.min(top, resume(after)) : top;
      const { items: seqs, more } = take(activity.seqsDesc(party, kind, lo, hi), limit);
      let hint: number | undefined;
      const items = seqs.map((s) => {
        const item = record(s, hint);
        hint = Number(item.blockNumber);
        return item;
      });
      const lastSeq = seqs.at(-1);
      const last = items.at(-1);
      return more && last && lastSeq !== undefined ? { items, next: keyOf(last, lastSeq) } : { items };
    };
  };

  const listNative = addressListing(
    'native',
    (s, hint) => core.transaction(s, hint),
    (item) => [Number(item.blockNumber), item.blockIndex],
    ([block, index]) => clock.txStart(block) + index,
  );
  const listErc20 = addressListing(
    'erc20',
    (s, hint) => core.erc20Transfer(s, hint),
    (item) => [Number(item.blockNumber), item.logIndex],
    ([block, logIndex]) => core.seqOfLog(block, logIndex) ?? clock.txStart(block),
  );

  return {
    info: args.info,
    core,
    activity,
    nfts,
    stats,
    head: (now) => clock.headAt(now),
    block: (n) => core.block(n),
    transactions(n) {
      const out: EvmTransactionRecord[] = [];
      for (let s = clock.txStart(n); s < clock.txStart(n + 1); s++) out.push(core.transaction(s, n));
      return out;
    },
    txCountBetween: (from, to) => (to > from ? clock.txStart(to) - clock.txStart(from) : 0),
    dayStats: (day, now) => stats.dayStats(day, now),
    listNative,
    listErc20,
    listLatestTransactions(status, now, after, limit) {
      const top = clock.txStart(clock.headAt(now) + 1);
      const hi = after ? Math.min(top, clock.txStart(after[0]) + after[1]) : top;
      function* seqs() {
        for (let s = hi - 1; s >= 0; s--) {
          if (status === undefined || (status === 'failed') === model.failed(s)) yield s;
        }
      }
      const { items: found, more } = take(seqs(), limit);
      let hint: number | undefined;
      const items = found.map((s) => {
        const t = core.transaction(s, hint);
        hint = Number(t.blockNumber);
        return t;
      });
      const last = items.at(-1);
      return more && last ? { items, next: [Number(last.blockNumber), last.blockIndex] } : { items };
    },
    listBlocks(now, after, limit) {
      const top = after === undefined ? clock.headAt(now) : Math.min(after - 1, clock.headAt(now));
      const items: EvmBlockRecord[] = [];
      for (let b = top; b >= 0 && items.length < limit; b--) items.push(core.block(b));
      const last = items.at(-1);
      return last && Number(last.blockNumber) > 0 ? { items, next: Number(last.blockNumber) } : { items };
    },
    listCollectionTokens(contract, now, after, limit) {
      const party = core.partyOf(contract);
      if (party?.type !== 'contract' || !nfts.collections.includes(party.index)) return undefined;
      const minted = nfts.mintedCount(party.index, now);
      const from = after === undefined ? 0 : after + 1;
      const end = Math.min(minted, from + limit);
      const items: Erc721TokenRecord[] = [];
      for (let id = from; id < end; id++) items.push(nfts.token(party.index, id, now));
      return end < minted ? { items, next: end - 1 } : { items };
    },
    listErc721Balances(address, contract, now, after, limit) {
      const party = core.partyOf(address);
      if (party?.type !== 'wallet') return { items: [] };
      const only = contract === undefined ? undefined : core.partyOf(contract);
      if (contract !== undefined && only?.type !== 'contract') return { items: [] };
      function* owned(): Generator<[number, number]> {
        for (const c of nfts.collections) {
          if (only?.type === 'contract' && only.index !== c) continue;
          if (after && c < after[0]) continue;
          const minted = nfts.mintedCount(c, now);
          for (let id = after && c === after[0] ? after[1] + 1 : 0; id < minted; id++)
            if (nfts.ownerOf(c, id) === (party as { index: number }).index) yield [c, id];
        }
      }
      const { items: keys, more } = take(owned(), limit);
      const items = keys.map(([c, id]) => nfts.token(c, id, now));
      const last = keys.at(-1);
      return more && last ? { items, next: last } : { items };
    },
    nativeBalance: (address, block) => activity.nativeBalance(core.partyOf(address), block),
  };
}
