import { digest, hash32 } from '../../rng.ts';
import type { WorldBase } from '../base.ts';
import type { EvmChainInfo } from '../chains.ts';
import { type Money, type PricedAsset, priceOn } from '../prices.ts';
import {
  type ContractInfo,
  type CreatedContracts,
  contractsOf,
  createdContracts,
  type WalletPool,
} from './addresses.ts';
import { type BlockClock, createBlockClock } from './blocks.ts';
import type { EvmProfile } from './profile.ts';
import { createTxModel, type IcmRole, type TxModel } from './transactions.ts';

/** The OpenAPI RichAddress: an address, with name/symbol/decimals/logo when it is a known contract. */
export interface RichAddress {
  address: string;
  name?: string;
  symbol?: string;
  decimals?: number;
  logoUri?: string;
}

/** §2.11 EvmBlock. */
export interface EvmBlockRecord {
  chainId: string;
  blockNumber: string;
  blockTimestamp: number;
  blockHash: string;
  txCount: number;
  baseFee: string;
  gasUsed: string;
  gasLimit: string;
  gasCost: string;
  parentHash: string;
  feesSpent: string;
  cumulativeTransactions: string;
}

/** §2.7 EvmTransaction (the OpenAPI NativeTransaction). */
export interface EvmTransactionRecord {
  blockNumber: string;
  blockTimestamp: number;
  blockHash: string;
  chainId: string;
  blockIndex: number;
  txHash: string;
  /** "1" success, "0" failed, as the OpenAPI describes. */
  txStatus: '0' | '1';
  txType: number;
  gasLimit: string;
  gasUsed: string;
  gasPrice: string;
  nonce: string;
  from: RichAddress;
  to: RichAddress;
  method: {
    callType: 'NATIVE_TRANSFER' | 'CONTRACT_CALL' | 'CONTRACT_CREATION';
    methodHash: string;
    methodName: string;
  };
  value: string;
}

/** §2.8 Erc20Transfer, priced in USD (the listing takes no `currency`) on its block's day. */
export interface Erc20TransferRecord {
  blockNumber: string;
  blockTimestamp: number;
  blockHash: string;
  txHash: string;
  from: RichAddress;
  to: RichAddress;
  logIndex: number;
  value: string;
  erc20Token: {
    address: string;
    name: string;
    symbol: string;
    decimals: number;
    logoUri: string;
    ercType: 'ERC-20';
    price: Money;
  };
}

/** Who an address is on a chain: a wallet (or the whale), a genesis contract, or a created contract. */
export type Party =
  | { type: 'wallet'; index: number }
  | { type: 'contract'; index: number }
  | { type: 'created'; seq: number };

/** One EVM chain's facts: blocks, transactions and their records, all computed on demand. */
export interface EvmChainCore {
  readonly info: EvmChainInfo;
  readonly chainSeed: number;
  readonly clock: BlockClock;
  readonly model: TxModel;
  readonly pool: WalletPool;
  readonly contracts: readonly ContractInfo[];
  readonly created: CreatedContracts;
  readonly gasLimit: number;
  /** Base fee of a block in Mwei (10^6 wei). */
  baseFeeMwei(block: number): number;
  /** Gas price of a transaction in wei (fits a double: below 10^12). */
  gasPriceWei(seq: number, block: number): number;
  /** The whale's legacy gas price in Mwei before its tip: above every base fee, so block-independent. */
  readonly whalePriceMwei: number;
  partyOf(address: string): Party | undefined;
  /** The address of index `i` of the chain's address space (wallets, whale, then contracts). */
  addressOfIndex(i: number): string;
  blockHash(block: number): string;
  txHash(seq: number): string;
  block(block: number): EvmBlockRecord;
  transaction(seq: number, block?: number): EvmTransactionRecord;
  /** Log index of a Transfer-emitting transaction within its block. */
  logIndexOf(seq: number, block: number): number;
  /** The transaction whose Transfer log has `logIndex` in `block`, if any. */
  seqOfLog(block: number, logIndex: number): number | undefined;
  erc20Transfer(seq: number, block?: number): Erc20TransferRecord;
}

const METHODS = {
  erc20: { hash: '0xa9059cbb', name: 'transfer(address,uint256)' },
  nft: { hash: '0x42842e0e', name: 'safeTransferFrom(address,address,uint256)' },
  call: [
    { hash: '0x38ed1739', name: 'swapExactTokensForTokens(uint256,uint256,address[],address,uint256)' },
    { hash: '0xb6b55f25', name: 'deposit(uint256)' },
    { hash: '0x095ea7b3', name: 'approve(address,uint256)' },
  ],
  icm: {
    send: {
      hash: '0x62448850',
      name: 'sendCrossChainMessage((uint256,address,(address,uint256),uint256,address[],bytes))',
    },
    deliver: { hash: '0xccb5f809', name: 'receiveCrossChainMessage(uint32,address)' },
  },
} as const;

const ZERO_HASH = `0x${'0'.repeat(64)}`;

export function createEvmChainCore(args: {
  base: WorldBase;
  info: EvmChainInfo;
  profile: EvmProfile;
  pool: WalletPool;
  /** Which transactions send or deliver ICM messages (see IcmSlots). */
  icmRole?: (seq: number) => IcmRole | undefined;
}): EvmChainCore {
  const { base, info, profile, pool } = args;
  const chainSeed = hash32(base.seed, Number(info.evmChainId), 0xc4a1);
  const contracts = contractsOf(base.seed, info);
  const created = createdContracts(base.seed, info.evmChainId);
  const primary = info.validatorSet === 'primary';
  const clock = createBlockClock({
    chainSeed,
    origin: base.genesis,
    createdAfterGenesis: info.createdAfterGenesis,
    blockSeconds: info.blockSeconds,
    txPerDay: profile.txPerDay[info.validatorSet],
  });
  const model = createTxModel({
    chainSeed,
    walletCount: profile.walletCount,
    whaleEvery: profile.whaleEvery,
    createEvery: profile.createEvery,
    contracts,
    primary,
    ...(args.icmRole ? { icmRole: args.icmRole } : {}),
  });
  const contractIndex = new Map(contracts.map((c, i) => [c.address, i]));
  const minBaseFeeMwei = primary ? 25_000 : 1_000;
  const gasLimit = primary ? 15_000_000 : 20_000_000;
  const hex = (...key: (string | number)[]) => `0x${digest(base.seed, ...key).toString('hex')}`;

  const baseFeeMwei = (block: number) =>
    minBaseFeeMwei + (hash32(chainSeed, block, 0xbf) % (minBaseFeeMwei / 2));
  // Base fees stay below 1.5 × the minimum; the whale's fixed price is twice it, so always enough.
  const whalePriceMwei = 2 * minBaseFeeMwei;
  const gasPriceWei = (seq: number, block: number) =>
    ((seq % model.whaleEvery === 0 ? whalePriceMwei : baseFeeMwei(block)) + model.tipMwei(seq)) * 1e6;
  const blockHash = (block: number) => (block < 0 ? ZERO_HASH : hex('evm-block', info.evmChainId, block));
  const txHash = (seq: number) => hex('evm-tx', info.evmChainId, seq);

  const addressOfIndex = (i: number): string =>
    i <= pool.whaleIndex ? pool.addressOf(i) : (contracts[i - pool.whaleIndex - 1] as ContractInfo).address;
  const rich = (i: number): RichAddress => {
    if (i <= pool.whaleIndex) return { address: pool.addressOf(i) };
    const c = contracts[i - pool.whaleIndex - 1] as ContractInfo;
    return { name: c.name, symbol: c.symbol, decimals: c.decimals, logoUri: c.logoUri, address: c.address };
  };
  const contractSlot = (c: number) => pool.whaleIndex + 1 + c;

  const core: EvmChainCore = {
    info,
    chainSeed,
    clock,
    model,
    pool,
    contracts,
    created,
    gasLimit,
    baseFeeMwei,
    gasPriceWei,
    whalePriceMwei,
    partyOf(address) {
      const a = address.toLowerCase();
      const wallet = pool.indexOf(a);
      if (wallet !== undefined) return { type: 'wallet', index: wallet };
      const c = contractIndex.get(a);
      if (c !== undefined) return { type: 'contract', index: c };
      const seq = created.seqOf(a);
      if (seq !== undefined && model.kind(seq) === 'create') return { type: 'created', seq };
      return undefined;
    },
    addressOfIndex,
    blockHash,
    txHash,
    block(block) {
      const start = clock.txStart(block);
      const end = clock.txStart(block + 1);
      let gas = 0;
      let fees = 0n;
      for (let s = start; s < end; s++) {
        const used = model.gasUsed(s);
        gas += used;
        fees += BigInt(used) * BigInt(gasPriceWei(s, block));
      }
      return {
        chainId: info.evmChainId,
        blockNumber: String(block),
        blockTimestamp: clock.timestampOf(block),
        blockHash: blockHash(block),
        txCount: end - start,
        baseFee: String(baseFeeMwei(block) * 1e6),
        gasUsed: String(gas),
        gasLimit: String(gasLimit),
        gasCost: '0',
        parentHash: blockHash(block - 1),
        feesSpent: String(fees),
        cumulativeTransactions: String(end),
      };
    },
    transaction(seq, hint) {
      const block = clock.blockOfTx(seq, hint);
      const kind = model.kind(seq);
      const c = model.contract(seq);
      const to: RichAddress =
        kind === 'native'
          ? rich(model.counterparty(seq))
          : kind === 'create'
            ? { address: created.addressOf(seq) }
            : rich(contractSlot(c));
      const method: EvmTransactionRecord['method'] =
        kind === 'native'
          ? { callType: 'NATIVE_TRANSFER', methodHash: '', methodName: 'Native Transfer' }
          : kind === 'create'
            ? { callType: 'CONTRACT_CREATION', methodHash: '', methodName: 'Contract Created' }
            : (() => {
                const icm = kind === 'call' ? model.icmRole(seq) : undefined;
                const m = icm
                  ? METHODS.icm[icm.side]
                  : kind === 'call'
                    ? METHODS.call[hash32(chainSeed, seq, 10) % METHODS.call.length]
                    : METHODS[kind];
                return {
                  callType: 'CONTRACT_CALL' as const,
                  methodHash: m?.hash ?? '',
                  methodName: m?.name ?? '',
                };
              })();
      return {
        blockNumber: String(block),
        blockTimestamp: clock.timestampOf(block),
        blockHash: blockHash(block),
        chainId: info.evmChainId,
        blockIndex: seq - clock.txStart(block),
        txHash: txHash(seq),
        txStatus: model.failed(seq) ? '0' : '1',
        txType: model.txType(seq),
        gasLimit: String(model.gasLimit(seq)),
        gasUsed: String(model.gasUsed(seq)),
        gasPrice: String(gasPriceWei(seq, block)),
        nonce: String(model.nonce(seq)),
        from: rich(model.sender(seq)),
        to,
        method,
        value: String(model.value(seq)),
      };
    },
    logIndexOf(seq, block) {
      let index = 0;
      for (let s = clock.txStart(block); s < seq; s++) if (model.hasTransferLog(s)) index++;
      return index;
    },
    seqOfLog(block, logIndex) {
      let index = 0;
      const end = clock.txStart(block + 1);
      for (let s = clock.txStart(block); s < end; s++) {
        if (!model.hasTransferLog(s)) continue;
        if (index === logIndex) return s;
        index++;
      }
      return undefined;
    },
    erc20Transfer(seq, hint) {
      const block = clock.blockOfTx(seq, hint);
      const token = contracts[model.contract(seq)] as ContractInfo;
      const time = clock.timestampOf(block);
      return {
        blockNumber: String(block),
        blockTimestamp: time,
        blockHash: blockHash(block),
        txHash: txHash(seq),
        from: rich(model.sender(seq)),
        to: rich(model.counterparty(seq)),
        logIndex: core.logIndexOf(seq, block),
        value: String(model.tokenAmount(seq)),
        erc20Token: {
          address: token.address,
          name: token.name,
          symbol: token.symbol,
          decimals: token.decimals,
          logoUri: token.logoUri,
          ercType: 'ERC-20',
          // Transfers move ERC-20s only, each with a price: the token's on the transfer's day.
          price: priceOn(base.seed, token.priceAsset as PricedAsset, time),
        },
      };
    },
  };
  return core;
}
