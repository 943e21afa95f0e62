import { digest, hash32, unit } from '../../rng.ts';
import type { WalletPool } from './addresses.ts';
import type { EvmChainCore } from './chain.ts';

/** TeleporterMessenger's address, the same on every chain. */
export const ICM_CONTRACT_ADDRESS = '0x253b2784c75e510dD0fF1da844684a1aC0aa5fcf';

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
    price: { currencyCode: 'usd'; value: number };
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

/**
 * The ICM messages of one network: message k leaves at a steady pace between the C-Chain and the L1s,
 * is delivered after a short delay (a few wait hours), and its receipt comes back later. A message
 * whose source transaction was not indexed is only known once delivered.
 */
export interface IcmLedger {
  /** Messages sent by `now`: indexes 0..count-1, each sent after the previous. */
  count(now: number): number;
  sentAt(k: number): number;
  deliveredAt(k: number): number;
  /** Whether message k is listed at `now` (a source-not-indexed message only once delivered). */
  visible(k: number, now: number): boolean;
  /** Whether `address` (lower-case) is the message's sender or recipient. */
  involves(k: number, address: string): boolean;
  message(k: number, now: number): IcmMessageRecord;
  /** Indexes of messages listed for `address` at `now`, newest first, below `before`. */
  indexesDesc(address: string, now: number, before?: number): Generator<number>;
}

const LONG_DELAY_SHARE = 0.04;
const NOT_INDEXED_SHARE = 0.02;

export function createIcmLedger(args: {
  seed: number;
  network: string;
  /** When messages begin: once every chain of the network exists. */
  genesis: number;
  intervalSeconds: number;
  pool: WalletPool;
  /** The network's chains, C-Chain first. */
  chains: readonly EvmChainCore[];
}): IcmLedger {
  const { seed, genesis, intervalSeconds: I, pool, chains } = args;
  const ns = hash32(seed, args.network === 'mainnet' ? 1 : 5, 0x1c4);
  const relayer = `0x${digest(seed, 'icm-relayer', args.network).subarray(0, 20).toString('hex')}`;
  const sentAt = (k: number) => genesis + k * I + (hash32(ns, k, 1) % Math.max(1, Math.floor(I / 2)));
  const deliveredAt = (k: number) => {
    const u = unit(ns, k, 5);
    return (
      sentAt(k) +
      (u < LONG_DELAY_SHARE
        ? 7_200 + Math.floor((u / LONG_DELAY_SHARE) * 21_600)
        : 4 + (hash32(ns, k, 6) % 117))
    );
  };
  const notIndexed = (k: number) => unit(ns, k, 7) < NOT_INDEXED_SHARE;
  const route = (k: number): [EvmChainCore, EvmChainCore] => {
    const [c, a, b] = chains as [EvmChainCore, EvmChainCore, EvmChainCore];
    return (
      [
        [c, a],
        [c, b],
        [a, c],
        [b, c],
      ] as const
    )[hash32(ns, k, 2) % 4] as [EvmChainCore, EvmChainCore];
  };
  const fromIndex = (k: number) => (k % 5 === 0 ? pool.whaleIndex : hash32(ns, k, 3) % pool.size);
  const toIndex = (k: number) => hash32(ns, k, 4) % pool.size;
  const count = (now: number) => {
    if (now < genesis) return 0;
    const k = Math.floor((now - genesis) / I);
    return sentAt(k) <= now ? k + 1 : k;
  };
  const visible = (k: number, now: number) => !notIndexed(k) || deliveredAt(k) <= now;
  const involves = (k: number, address: string) =>
    pool.addressOf(fromIndex(k)) === address || pool.addressOf(toIndex(k)) === address;

  return {
    count,
    sentAt,
    deliveredAt,
    visible,
    involves,
    message(k, now) {
      const [src, dst] = route(k);
      const delivered = deliveredAt(k) <= now;
      const receiptAt = deliveredAt(k) + 600 + (hash32(ns, k, 8) % 3_000);
      const fee = src.contracts[0];
      const status: IcmStatus = !delivered
        ? 'pending'
        : notIndexed(k)
          ? 'delivered_source_not_indexed'
          : 'delivered';
      const hex = (what: string, bytes = 32) =>
        `0x${digest(seed, 'icm', what, args.network, k).subarray(0, bytes).toString('hex')}`;
      return {
        messageId: digest(seed, 'icm-id', args.network, k).toString('hex'),
        icmContractAddress: ICM_CONTRACT_ADDRESS,
        sourceBlockchainId: src.info.blockchainId,
        destinationBlockchainId: dst.info.blockchainId,
        sourceEvmChainId: src.info.evmChainId,
        destinationEvmChainId: dst.info.evmChainId,
        messageNonce: String(k),
        from: pool.addressOf(fromIndex(k)),
        to: pool.addressOf(toIndex(k)),
        data: hex('data', 64),
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
          price: { currencyCode: 'usd', value: fee?.priceUsd ?? 0 },
          value: String(BigInt(hash32(ns, k, 10) % 1_000) * 10n ** 15n),
        },
        ...(status === 'delivered_source_not_indexed'
          ? {}
          : {
              sourceTransaction: {
                txHash: hex('source-tx'),
                timestamp: sentAt(k),
                gasSpent: String(150_000 + (hash32(ns, k, 11) % 50_000)),
              },
            }),
        ...(delivered
          ? {
              destinationTransaction: {
                txHash: hex('destination-tx'),
                timestamp: deliveredAt(k),
                gasSpent: String(250_000 + (hash32(ns, k, 12) % 100_000)),
                rewardRedeemer: relayer,
                delivererAddress: relayer,
              },
            }
          : {}),
        status,
      };
    },
    *indexesDesc(address, now, before) {
      const a = address.toLowerCase();
      if (pool.indexOf(a) === undefined) return;
      for (let k = Math.min(before ?? Number.POSITIVE_INFINITY, count(now)) - 1; k >= 0; k--)
        if (involves(k, a) && visible(k, now)) yield k;
    },
  };
}
