import { digest, hash32, unit } from '../../rng.ts';
import { type Money, priceOn } from '../prices.ts';
import { ICM_CONTRACT_ADDRESS, type WalletPool } from './addresses.ts';
import type { EvmChainCore } from './chain.ts';
import type { IcmRole } from './transactions.ts';

export { ICM_CONTRACT_ADDRESS } from './addresses.ts';

export type IcmStatus = 'pending' | 'delivered' | 'delivered_source_not_indexed';

/** §2.14 IcmMessage, in the shape of the OpenAPI's three status variants. */
export interface IcmMessageRecord {
  messageId: string;
  icmContractAddress: string;
  sourceBlockchainId: string;
  destinationBlockchainId: string;
  sourceEvmChainId: string;
  destinationEvmChainId: string;
  messageNonce: string;
  from: string;
  to: string;
  data: string;
  messageExecuted: boolean;
  receipts: { receivedMessageNonce: string; relayerRewardAddress: string }[];
  receiptDelivered: boolean;
  rewardDetails: {
    address: string;
    name: string;
    symbol: string;
    decimals: number;
    logoUri: string;
    ercType: 'ERC-20';
    price: Money;
    value: string;
  };
  sourceTransaction?: { txHash: string; timestamp: number; gasSpent: string };
  destinationTransaction?: {
    txHash: string;
    timestamp: number;
    gasSpent: string;
    rewardRedeemer: string;
    delivererAddress: string;
  };
  status: IcmStatus;
}

/** Where a chain's transactions sit in time: the part of a BlockClock the slots need. */
interface SlotClock {
  txStart(block: number): number;
  firstBlockAtOrAfter(t: number): number;
  blockOfTx(seq: number, hint?: number): number;
  timestampOf(block: number): number;
}

/**
 * Which transactions of a network's chains are ICM sends and deliveries. Time is cut into windows of
 * one ICM interval from `genesis`; message k belongs to window k. On each chain, a window's
 * transactions that are neither the whale's (sender or native counterparty, whose sums have a closed
 * form) nor contract creations are its eligible ones, and the first few of them are reserved in a
 * fixed order: the send of message w (if its source is this chain), the delivery of message w − 1
 * (its fast share), the delivery of message w − slowLag (its slow share, about two hours). A slot exists if the
 * window has that many eligible transactions; message k exists iff both of its slots do, and only
 * then are they turned into calls to the ICM contract (see TxModel). Each question costs O(1) window
 * bounds, so the transaction model can ask it of every transaction.
 */
export interface IcmSlots {
  readonly genesis: number;
  readonly intervalSeconds: number;
  /** Source and destination of message k, as indexes into the network's chains. */
  route(k: number): readonly [number, number];
  /** Windows between message k's send and its delivery. */
  lag(k: number): number;
  /** The largest lag of any message. */
  readonly maxLag: number;
  sourceSeq(k: number): number | undefined;
  deliverySeq(k: number): number | undefined;
  exists(k: number): boolean;
  /** The ICM role of transaction `seq` of chain `chain`, if any. */
  roleOf(chain: number, seq: number): IcmRole | undefined;
}

const LONG_DELAY_SHARE = 0.04;
const NOT_INDEXED_SHARE = 0.02;
/** A slow message is delivered about two hours after it is sent. */
const SLOW_DELAY_SECONDS = 7_200;

/** The route of message k: C-Chain → either L1, or either L1 → C-Chain (chain indexes, C-Chain 0). */
const ROUTES = [
  [0, 1],
  [0, 2],
  [1, 0],
  [2, 0],
] as const;

/** The network's hash key for its ICM facts (the same one for slots and message records). */
const icmKey = (seed: number, network: string) => hash32(seed, network === 'mainnet' ? 1 : 5, 0x1c4);

export function createIcmSlots(args: {
  seed: number;
  network: string;
  genesis: number;
  intervalSeconds: number;
  whaleEvery: number;
  createEvery: number;
  /** The network's chains' clocks, C-Chain first; read on first use (the chains are built after). */
  clocks: () => readonly SlotClock[];
}): IcmSlots {
  const { genesis: g, intervalSeconds: I, whaleEvery: W, createEvery: CE } = args;
  const ns = icmKey(args.seed, args.network);
  const slowLag = Math.max(2, Math.ceil(SLOW_DELAY_SECONDS / I));
  const route = (k: number) => ROUTES[hash32(ns, k, 2) % ROUTES.length] as readonly [number, number];
  const lag = (k: number) => (unit(ns, k, 5) < LONG_DELAY_SHARE ? slowLag : 1);
  // The whale's slots (its sends, and the native transfers it receives) and creations stay as they are.
  const eligible = (seq: number) => {
    const r = seq % W;
    return r !== 0 && r !== W / 2 && seq % CE !== CE - 1;
  };
  const clockOf = (chain: number) => args.clocks()[chain] as SlotClock;
  /** The first transaction of window w on a chain (transactions of window w: [bound(w), bound(w+1))). */
  const bound = (chain: number, w: number) => {
    const clock = clockOf(chain);
    return clock.txStart(clock.firstBlockAtOrAfter(g + w * I));
  };
  /** The roles reserved in window w of a chain, in slot order. */
  const reserved = (chain: number, w: number): IcmRole[] => {
    const out: IcmRole[] = [];
    if (w >= 0 && route(w)[0] === chain) out.push({ k: w, side: 'send' });
    for (const k of [w - 1, w - slowLag])
      if (k >= 0 && route(k)[1] === chain && k + lag(k) === w) out.push({ k, side: 'deliver' });
    return out;
  };
  /** The eligible transaction at `position` of window w, if the window has that many. */
  const slotSeq = (chain: number, w: number, position: number): number | undefined => {
    if (position < 0) return undefined;
    const hi = bound(chain, w + 1);
    let n = 0;
    for (let s = bound(chain, w); s < hi; s++) {
      if (!eligible(s)) continue;
      if (n === position) return s;
      n++;
    }
    return undefined;
  };
  const sourceSeq = (k: number) => (k < 0 ? undefined : slotSeq(route(k)[0], k, 0));
  const deliverySeq = (k: number) => {
    if (k < 0) return undefined;
    const dst = route(k)[1];
    const w = k + lag(k);
    return slotSeq(
      dst,
      w,
      reserved(dst, w).findIndex((r) => r.k === k && r.side === 'deliver'),
    );
  };
  const exists = (k: number) => sourceSeq(k) !== undefined && deliverySeq(k) !== undefined;

  // Per chain, the window last asked about: the model asks of transactions in order, so this is hit.
  // Whether a reserved slot's message exists is only settled when that slot is asked about.
  interface Window {
    lo: number;
    hi: number;
    block: number;
    seqs: number[];
    roles: (IcmRole | null)[];
  }
  const windows: (Window | undefined)[] = [];
  const windowAt = (chain: number, seq: number, hint: number | undefined): Window => {
    const clock = clockOf(chain);
    const block = clock.blockOfTx(seq, hint);
    const t = clock.timestampOf(block);
    if (t < g) return { lo: 0, hi: bound(chain, 0), block, seqs: [], roles: [] };
    const w = Math.floor((t - g) / I);
    const lo = bound(chain, w);
    const hi = bound(chain, w + 1);
    const seqs: number[] = [];
    const roles = reserved(chain, w);
    for (let s = lo; s < hi && seqs.length < roles.length; s++) if (eligible(s)) seqs.push(s);
    return { lo, hi, block, seqs, roles };
  };
  return {
    genesis: g,
    intervalSeconds: I,
    route,
    lag,
    maxLag: slowLag,
    sourceSeq,
    deliverySeq,
    exists,
    roleOf(chain, seq) {
      if (!eligible(seq)) return undefined;
      let w = windows[chain];
      if (!w || seq < w.lo || seq >= w.hi) {
        w = windowAt(chain, seq, w?.block);
        windows[chain] = w;
      }
      const i = w.seqs.indexOf(seq);
      const role = w.roles[i];
      if (i < 0 || role === undefined || role === null) return undefined;
      if (exists(role.k)) return role;
      w.roles[i] = null;
      return undefined;
    },
  };
}

/**
 * The ICM messages of one network, one per window of `IcmSlots`: message k is sent by a transaction
 * of its source chain (a call of the ICM contract's sendCrossChainMessage by the wallet that is the
 * message's `from`) and delivered by one of its destination chain a window later, or about two hours
 * later for a slow share (receiveCrossChainMessage, by the wallet relaying it); its receipt comes back
 * later. A window whose slots do not both exist has no message. A message whose source transaction
 * was not indexed is only known once delivered.
 */
export interface IcmLedger {
  /** Windows begun and sent by `now`: indexes 0..count-1 (a window may hold no message). */
  count(now: number): number;
  exists(k: number): boolean;
  /** When message k is sent (its source transaction's block); a window's start if it has none. */
  sentAt(k: number): number;
  /** When message k is delivered (its delivery transaction's block). */
  deliveredAt(k: number): number;
  /** Whether message k is listed at `now` (a source-not-indexed message only once delivered). */
  visible(k: number, now: number): boolean;
  /**
   * The timestamp message k is listed by: its send, or its delivery when its source was not indexed
   * (the only transaction the indexer knows of it).
   */
  listedAt(k: number): number;
  /** Whether `address` (lower-case) is the message's sender or recipient. */
  involves(k: number, address: string): boolean;
  /** The transactions tying message k to its chains: [chain index, seq] of its send and delivery. */
  ties(k: number): { source: [number, number]; delivery: [number, number] } | undefined;
  message(k: number, now: number): IcmMessageRecord;
  /**
   * Indexes of messages listed for `address` at `now`, newest first by (listedAt, index), after the
   * position `before` (the last one of a previous page, as [listedAt, index]).
   */
  indexesDesc(address: string, now: number, before?: readonly [number, number]): Generator<number>;
}

export function createIcmLedger(args: {
  seed: number;
  network: string;
  slots: IcmSlots;
  pool: WalletPool;
  /** The network's chains, C-Chain first. */
  chains: readonly EvmChainCore[];
}): IcmLedger {
  const { seed, slots, pool, chains } = args;
  const { genesis: g, intervalSeconds: I } = slots;
  const ns = icmKey(seed, args.network);
  const chainOf = (i: number) => chains[i] as EvmChainCore;
  const ties = (k: number) => {
    const source = slots.sourceSeq(k);
    const delivery = slots.deliverySeq(k);
    if (source === undefined || delivery === undefined) return undefined;
    const [src, dst] = slots.route(k);
    return { source: [src, source] as [number, number], delivery: [dst, delivery] as [number, number] };
  };
  // Where transaction `seq` of chain `c` sits; the window's first block is a close hint.
  const blockOf = (c: number, seq: number, w: number) => {
    const { clock } = chainOf(c);
    return clock.blockOfTx(seq, clock.firstBlockAtOrAfter(g + w * I));
  };
  const timeOf = (c: number, seq: number, w: number) => chainOf(c).clock.timestampOf(blockOf(c, seq, w));
  const sentAt = (k: number) => {
    const source = slots.sourceSeq(k);
    return source === undefined || !slots.exists(k) ? g + k * I : timeOf(slots.route(k)[0], source, k);
  };
  const deliveredAt = (k: number) => {
    const w = k + slots.lag(k);
    const delivery = slots.deliverySeq(k);
    return delivery === undefined || !slots.exists(k) ? g + w * I : timeOf(slots.route(k)[1], delivery, w);
  };
  const notIndexed = (k: number) => unit(ns, k, 7) < NOT_INDEXED_SHARE;
  const fromOf = (k: number) => {
    const source = slots.sourceSeq(k);
    const src = chainOf(slots.route(k)[0]);
    return source === undefined ? undefined : pool.addressOf(src.model.sender(source));
  };
  const toIndex = (k: number) => (k % 5 === 0 ? pool.whaleIndex : hash32(ns, k, 4) % pool.size);
  const count = (now: number) => {
    if (now < g) return 0;
    const k = Math.floor((now - g) / I);
    return sentAt(k) <= now ? k + 1 : k;
  };
  const visible = (k: number, now: number) =>
    slots.exists(k) && sentAt(k) <= now && (!notIndexed(k) || deliveredAt(k) <= now);
  const involves = (k: number, address: string) =>
    pool.addressOf(toIndex(k)) === address || fromOf(k) === address;
  const listedAt = (k: number) => (notIndexed(k) ? deliveredAt(k) : sentAt(k));

  return {
    count,
    exists: slots.exists,
    sentAt,
    deliveredAt,
    visible,
    listedAt,
    involves,
    ties,
    message(k, now) {
      const tie = ties(k);
      if (!tie)
        throw new Error(`ICM message ${k} of ${args.network} does not exist (its window has no slots)`);
      const [src, dst] = [chainOf(tie.source[0]), chainOf(tie.delivery[0])];
      const sourceSeq = tie.source[1];
      const deliverySeq = tie.delivery[1];
      const delivered = deliveredAt(k) <= now;
      const relayer = pool.addressOf(dst.model.sender(deliverySeq));
      const receiptAt = deliveredAt(k) + 600 + (hash32(ns, k, 8) % 3_000);
      // The relayer fee is paid in the source chain's wrapped native token, priced on the send's day.
      const fee = src.contracts[0];
      const status: IcmStatus = !delivered
        ? 'pending'
        : notIndexed(k)
          ? 'delivered_source_not_indexed'
          : 'delivered';
      return {
        messageId: digest(seed, 'icm-id', args.network, k).toString('hex'),
        icmContractAddress: ICM_CONTRACT_ADDRESS,
        sourceBlockchainId: src.info.blockchainId,
        destinationBlockchainId: dst.info.blockchainId,
        sourceEvmChainId: src.info.evmChainId,
        destinationEvmChainId: dst.info.evmChainId,
        messageNonce: String(k),
        from: pool.addressOf(src.model.sender(sourceSeq)),
        to: pool.addressOf(toIndex(k)),
        data: `0x${digest(seed, 'icm', 'data', args.network, k).subarray(0, 64).toString('hex')}`,
        messageExecuted: delivered && unit(ns, k, 9) >= 0.03,
        receipts:
          receiptAt <= now ? [{ receivedMessageNonce: String(k), relayerRewardAddress: relayer }] : [],
        receiptDelivered: receiptAt <= now,
        rewardDetails: {
          address: fee?.address ?? ICM_CONTRACT_ADDRESS,
          name: fee?.name ?? '',
          symbol: fee?.symbol ?? '',
          decimals: fee?.decimals ?? 18,
          logoUri: fee?.logoUri ?? '',
          ercType: 'ERC-20',
          price: priceOn(seed, fee?.priceAsset ?? 'AVAX', sentAt(k)),
          value: String(BigInt(hash32(ns, k, 10) % 1_000) * 10n ** 15n),
        },
        ...(status === 'delivered_source_not_indexed'
          ? {}
          : {
              sourceTransaction: {
                txHash: src.txHash(sourceSeq),
                timestamp: sentAt(k),
                gasSpent: String(src.model.gasUsed(sourceSeq)),
              },
            }),
        ...(delivered
          ? {
              destinationTransaction: {
                txHash: dst.txHash(deliverySeq),
                timestamp: deliveredAt(k),
                gasSpent: String(dst.model.gasUsed(deliverySeq)),
                rewardRedeemer: relayer,
                delivererAddress: relayer,
              },
            }
          : {}),
        status,
      };
    },
    *indexesDesc(address, now, before) {
      const x = pool.indexOf(address.toLowerCase());
      if (x === undefined) return;
      const isAfter = (t: number, k: number) =>
        before === undefined || t < before[0] || (t === before[0] && k < before[1]);
      // Only a message whose source was not indexed is listed out of send order, later by its lag at
      // most: every message of window k or below is listed before g + (k + maxLag + 1)·I. So the scan
      // goes down by window and holds back what it found until nothing below can be listed later.
      const held: [at: number, k: number][] = [];
      const top = count(now) - 1;
      for (let k = before === undefined ? top : Math.min(top, Math.floor((before[0] - g) / I)); k >= 0; k--) {
        const bound = g + (k + slots.maxLag + 1) * I;
        for (let next = held[0]; next !== undefined && next[0] >= bound; next = held[0]) {
          held.shift();
          yield next[1];
        }
        // The recipient is a hash; the sender needs the source slot, so it is asked second.
        if (toIndex(k) !== x) {
          const source = slots.sourceSeq(k);
          if (source === undefined || chainOf(slots.route(k)[0]).model.sender(source) !== x) continue;
        }
        if (!visible(k, now)) continue;
        const at = listedAt(k);
        if (!isAfter(at, k)) continue;
        // Newest first; scanned by falling index, so among equal times a later one goes after.
        let i = held.length;
        while (i > 0 && (held[i - 1]?.[0] ?? at) < at) i--;
        held.splice(i, 0, [at, k]);
      }
      for (const [, k] of held) yield k;
    },
  };
}
