import { createHash } from 'node:crypto';
import { cb58Encode } from '../../encoding.ts';
import { type Network, PRIMARY_CHAINS, PRIMARY_SUBNET_ID, type PrimaryChain } from '../networks.ts';
import { delegationFee, isRewarded, rewardTxOf } from './ledger/staking.ts';
import type { RewardType, StakeRec, TxRec, UtxoRec } from './types.ts';
import { isStaked, utxoState } from './utxo-state.ts';

// Records in the Data API's shapes (OpenAPI: PChainTransaction, PChainUtxo, Utxo, XChainNonLinearTransaction,
// CChainExportTransaction/CChainImportTransaction, HistoricalReward, *DelegatorDetails). Anything that
// changes with time (spent, rewarded, status) is rendered as of `now`.

export interface AssetAmount {
  assetId: string;
  name: string;
  symbol: string;
  denomination: number;
  type: 'secp256k1';
  amount: string;
}

export const avaxAmount = (network: Network, amount: bigint): AssetAmount => ({
  assetId: PRIMARY_CHAINS[network].avaxAssetId,
  name: 'Avalanche',
  symbol: 'AVAX',
  denomination: 9,
  type: 'secp256k1',
  amount: amount.toString(),
});

/** Per-asset sums as AssetAmount[] (one asset, AVAX, in this world; empty when nothing). */
const amounts = (network: Network, total: bigint, always = false): AssetAmount[] =>
  total > 0n || always ? [avaxAmount(network, total)] : [];

const chainId = (network: Network, chain: PrimaryChain) => PRIMARY_CHAINS[network][chain];

/**
 * What a UTXO's time-dependent fields show at `now`, from `utxoState`: its spend, and whether it is
 * staked. Note: `utxoType` follows `staked` (the OpenAPI's UtxoType "indicates whether the UTXO is staked
 * or transferable"): a stake handed back at its period's end is a TRANSFER output, as in avalanchego's
 * UTXO set; its `utxoStartTimestamp`/`utxoEndTimestamp` still say which period it was locked for.
 */
function stateOf(u: UtxoRec, now: number) {
  const state = utxoState(u, now);
  const staked = isStaked(state);
  return {
    spent: state === 'spent' ? u.spent : undefined,
    staked,
    utxoType: staked ? ('STAKE' as const) : ('TRANSFER' as const),
  };
}

/** A P-Chain UTXO (PChainUtxo). */
export function pChainUtxo(network: Network, u: UtxoRec, now: number): Record<string, unknown> {
  const { spent, staked, utxoType } = stateOf(u, now);
  return {
    addresses: u.addresses,
    asset: avaxAmount(network, u.amount),
    consumedOnChainId: chainId(network, u.consumedOn),
    createdOnChainId: chainId(network, u.createdOn),
    utxoId: u.id,
    amount: u.amount.toString(),
    assetId: PRIMARY_CHAINS[network].avaxAssetId,
    blockNumber: String(u.block),
    blockTimestamp: u.createdAt,
    outputIndex: u.outputIndex,
    txHash: u.txHash,
    utxoType,
    staked,
    threshold: 1,
    platformLocktime: 0,
    stakeableLocktime: 0,
    ...(u.stake ? { utxoStartTimestamp: u.stake.start, utxoEndTimestamp: u.stake.end } : {}),
    ...(u.rewardType ? { rewardType: u.rewardType } : {}),
    ...(spent
      ? {
          consumingTxHash: spent.txHash,
          consumingBlockNumber: String(spent.block),
          consumingBlockTimestamp: spent.at,
        }
      : {}),
  };
}

/** An X-Chain or C-Chain (atomic) UTXO (Utxo). */
export function avmUtxo(network: Network, u: UtxoRec, now: number): Record<string, unknown> {
  const { spent, utxoType } = stateOf(u, now);
  return {
    addresses: u.addresses,
    asset: avaxAmount(network, u.amount),
    consumedOnChainId: chainId(network, u.consumedOn),
    createdOnChainId: chainId(network, u.createdOn),
    utxoId: u.id,
    creationTxHash: u.txHash,
    locktime: 0,
    outputIndex: String(u.outputIndex),
    threshold: 1,
    timestamp: u.createdAt,
    utxoType,
    ...(spent ? { consumingTxHash: spent.txHash, consumingTxTimestamp: spent.at } : {}),
  };
}

export const utxoShape = (network: Network, chain: PrimaryChain, u: UtxoRec, now: number) =>
  chain === 'p' ? pChainUtxo(network, u, now) : avmUtxo(network, u, now);

const total = (list: readonly { amount: bigint }[]) => list.reduce((s, x) => s + x.amount, 0n);

/** A transaction in its chain's listing shape. */
export function txShape(network: Network, tx: TxRec, now: number): Record<string, unknown> {
  if (tx.chain === 'p') return pChainTx(network, tx, now);
  const common = {
    txHash: tx.hash,
    timestamp: tx.time,
    txType: tx.type,
    memo: '',
    amountUnlocked: amounts(network, tx.evmInputs ? total(tx.evmInputs) : total(tx.consumed)),
    amountCreated: amounts(network, tx.evmOutputs ? total(tx.evmOutputs) : total(tx.emitted)),
    ...(tx.source ? { sourceChain: chainId(network, tx.source) } : {}),
    ...(tx.destination ? { destinationChain: chainId(network, tx.destination) } : {}),
  };
  const utxos = (list: UtxoRec[]) => list.map((u) => avmUtxo(network, u, now));
  if (tx.chain === 'x')
    return {
      ...common,
      chainFormat: 'non-linear',
      consumedUtxos: utxos(tx.consumed),
      emittedUtxos: utxos(tx.emitted),
      vertices: [{ hash: tx.blockHash, height: tx.block, timestamp: tx.time }],
    };
  const c = { ...common, blockHeight: tx.block, blockHash: tx.blockHash };
  return tx.type === 'ExportTx'
    ? {
        ...c,
        evmInputs: (tx.evmInputs ?? []).map((leg) => ({
          fromAddress: leg.address,
          asset: avaxAmount(network, leg.amount),
          credentials: [],
        })),
        emittedUtxos: utxos(tx.emitted),
      }
    : {
        ...c,
        evmOutputs: (tx.evmOutputs ?? []).map((leg) => ({
          toAddress: leg.address,
          asset: avaxAmount(network, leg.amount),
        })),
        consumedUtxos: utxos(tx.consumed),
      };
}

const feePercent = (ppm: number) => (ppm / 10_000).toFixed(4);

function pChainTx(network: Network, tx: TxRec, now: number): Record<string, unknown> {
  const stake = tx.stake;
  const staked = tx.emitted.filter((u) => u.type === 'STAKE');
  const rewarded = stake?.rewardTx && stake.rewardTx.time <= now ? stake.rewardTx : undefined;
  const node = stake ? undefined : tx.nodeId;
  const l1 = tx.l1;
  return {
    txHash: tx.hash,
    txType: tx.type,
    blockTimestamp: tx.time,
    blockNumber: String(tx.block),
    blockHash: tx.blockHash,
    consumedUtxos: tx.consumed.map((u) => pChainUtxo(network, u, now)),
    emittedUtxos: tx.emitted.map((u) => pChainUtxo(network, u, now)),
    value: amounts(network, total(tx.emitted)),
    amountBurned: amounts(network, tx.burned),
    amountStaked: amounts(network, total(staked)),
    amountL1ValidatorBalanceBurned: amounts(network, tx.l1Burned ?? 0n),
    ...(tx.source ? { sourceChain: chainId(network, tx.source) } : {}),
    ...(tx.destination ? { destinationChain: chainId(network, tx.destination) } : {}),
    ...(stake
      ? {
          nodeId: stake.nodeId,
          subnetId: PRIMARY_SUBNET_ID,
          startTimestamp: stake.start,
          endTimestamp: stake.end,
          estimatedReward: stake.potentialReward.toString(),
          rewardAddresses: stake.rewardAddresses,
          ...(stake.kind === 'validator' ? { delegationFeePercent: feePercent(stake.feePpm) } : {}),
          ...(rewarded ? { rewardTxHash: rewarded.hash } : {}),
        }
      : {}),
    ...(stake?.signer ? { blsCredentials: stake.signer } : {}),
    ...(node ? { nodeId: node } : {}),
    ...(tx.subnetId && !stake ? { subnetId: tx.subnetId } : {}),
    ...(tx.subnetPeriod ? { startTimestamp: tx.subnetPeriod.start, endTimestamp: tx.subnetPeriod.end } : {}),
    ...(tx.rewards ? { stakingTxHash: tx.rewards.tx.hash, rewardAddresses: tx.rewards.rewardAddresses } : {}),
    ...(tx.type === 'CreateSubnetTx'
      ? { subnetOwnershipInfo: { locktime: 0, threshold: 1, addresses: tx.consumed[0]?.addresses ?? [] } }
      : {}),
    ...(tx.blockchain
      ? {
          blockchainId: tx.blockchain.id,
          blockchainInfo: {
            chainName: tx.blockchain.name,
            vmId: tx.blockchain.vmId,
            genesisData: genesisOf(tx),
          },
        }
      : {}),
    ...(l1?.managerAddress && l1.chainId
      ? { l1ValidatorManagerDetails: { blockchainId: l1.chainId, contractAddress: l1.managerAddress } }
      : {}),
    ...(l1
      ? {
          l1ValidatorDetails: l1.validators.map((v) => ({
            validationId: v.validationId,
            validationIdHex: v.validationIdHex,
            nodeId: v.nodeId,
            subnetId: v.subnetId,
            weight: v.weight,
            remainingBalance: Number(v.deposits.find((d) => d.txHash === tx.hash)?.amount ?? 0n),
            ...(l1.balanceChange !== undefined ? { balanceChange: Number(l1.balanceChange) } : {}),
            blsCredentials: { publicKey: v.publicKey, proofOfPossession: v.proofOfPossession },
          })),
        }
      : {}),
  };
}

function genesisOf(tx: TxRec): Record<string, unknown> {
  const evmChainId = Number(tx.blockchain?.evmChainId ?? 0);
  return {
    config: {
      chainId: evmChainId,
      homesteadBlock: 0,
      eip150Block: 0,
      eip155Block: 0,
      eip158Block: 0,
      byzantiumBlock: 0,
      constantinopleBlock: 0,
      petersburgBlock: 0,
      istanbulBlock: 0,
      muirGlacierBlock: 0,
      berlinBlock: 0,
      londonBlock: 0,
      subnetEVMTimestamp: 0,
    },
    alloc: {},
    nonce: '0x0',
    timestamp: `0x${tx.time.toString(16)}`,
    extraData: '0x',
    gasLimit: '0x7a1200',
    difficulty: '0x0',
    mixHash: `0x${'0'.repeat(64)}`,
    coinbase: `0x${'0'.repeat(40)}`,
    number: '0x0',
    gasUsed: '0x0',
    parentHash: `0x${'0'.repeat(64)}`,
  };
}

/** A reward as /rewards lists it (HistoricalReward), priced in `currency`. */
export function historicalReward(
  network: Network,
  utxo: UtxoRec,
  stake: StakeRec,
  price: { currencyCode: string; value: number },
): Record<string, unknown> {
  return {
    addresses: utxo.addresses,
    txHash: stake.tx.hash,
    amountStaked: stake.amount.toString(),
    nodeId: stake.nodeId,
    startTimestamp: stake.start,
    endTimestamp: stake.end,
    rewardType: utxo.rewardType as RewardType,
    utxoId: utxo.id,
    outputIndex: utxo.outputIndex,
    reward: { ...avaxAmount(network, utxo.amount), historicalPrice: price },
    rewardTxHash: rewardTxOf(utxo, stake)?.hash as string,
  };
}

export type DelegationStatus = 'pending' | 'active' | 'completed';

export const delegationStatus = (s: StakeRec, now: number): DelegationStatus =>
  now < s.start ? 'pending' : now < s.end ? 'active' : 'completed';

/**
 * Gross and net (after the validator's fee) reward of a delegation: estimated before it completes, paid
 * once it has (nothing, when its validator's period was not rewarded).
 */
export function delegationRewards(s: StakeRec, now: number): { gross: bigint; net: bigint } {
  if (delegationStatus(s, now) === 'completed' && !isRewarded(s)) return { gross: 0n, net: 0n };
  return { gross: s.potentialReward, net: s.potentialReward - delegationFee(s) };
}

/**
 * A delegation as /delegators lists it. Completed ones carry grossReward/netReward (the reward UTXOs);
 * active and pending ones carry the OpenAPI's estimatedGrossReward/estimatedNetReward and, because
 * api-surfaces.md §2.6 lists grossReward/netReward for every delegator, the same estimates under those names.
 */
export function delegatorShape(s: StakeRec, now: number): Record<string, unknown> {
  const status = delegationStatus(s, now);
  const { gross, net } = delegationRewards(s, now);
  const base = {
    txHash: s.tx.hash,
    nodeId: s.nodeId,
    rewardAddresses: s.rewardAddresses,
    amountDelegated: s.amount.toString(),
    delegationFee: feePercent(s.feePpm),
    startTimestamp: s.start,
    endTimestamp: s.end,
    grossReward: gross.toString(),
    netReward: net.toString(),
  };
  return status === 'completed'
    ? { ...base, delegationStatus: status }
    : {
        ...base,
        estimatedGrossReward: gross.toString(),
        estimatedNetReward: net.toString(),
        delegationStatus: status,
      };
}

/** The proposervm wrapper id of a P-Chain block (derived from its hash). */
export const proposerIdOf = (b: { hash: string; height: number }): string =>
  cb58Encode(createHash('sha256').update(`proposer:${b.hash}:${b.height}`).digest());
