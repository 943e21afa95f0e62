import { z } from 'zod';
import { lake } from './lake.ts';

/**
 * Record fragments the Avalanche surfaces share (api-surfaces.md §2), with the lake type of each
 * field. Stream schemas are built from these; nothing here is specific to one endpoint.
 */

/** §2.1 AssetAmount: an amount of one asset, in its smallest unit. */
export const assetAmount = z.object({
  assetId: z.string(),
  name: z.string(),
  symbol: z.string(),
  denomination: lake.int32(),
  type: z.string(),
  amount: lake.amount(),
});

/** §2.1 Price. The Data API sends `value` as a number; kept as a double (a price, not an amount). */
export const price = z.object({
  currencyCode: z.string(),
  value: z.coerce.number(),
});

/**
 * §2.2 Utxo as the P-Chain lists it, and the X-Chain's variant of the OpenAPI (`timestamp`,
 * `creationTxHash`, `consumingTxTimestamp`, no top-level `assetId`): one schema, absent fields null.
 */
export const utxo = z.object({
  utxoId: z.string(),
  addresses: z.array(z.string()),
  asset: assetAmount,
  amount: lake.amount().optional(),
  assetId: z.string().optional(),
  utxoType: z.string(),
  outputIndex: lake.int32().or(z.string().regex(/^\d+$/).transform(Number)).pipe(lake.int32()),
  txHash: z.string().optional(),
  creationTxHash: z.string().optional(),
  createdOnChainId: z.string(),
  consumedOnChainId: z.string(),
  blockNumber: lake.int64().optional(),
  blockTimestamp: lake.timestamp().optional(),
  timestamp: lake.timestamp().optional(),
  consumingTxHash: z.string().optional(),
  consumingTxTimestamp: lake.timestamp().optional(),
  consumingBlockNumber: lake.int64().optional(),
  consumingBlockTimestamp: lake.timestamp().optional(),
  staked: z.boolean().optional(),
  threshold: lake.int32().optional(),
  locktime: lake.int64().optional(),
  platformLocktime: lake.int64().optional(),
  stakeableLocktime: lake.int64().optional(),
  utxoStartTimestamp: lake.timestamp().optional(),
  utxoEndTimestamp: lake.timestamp().optional(),
  rewardType: z.string().optional(),
});

/** §2.3 PrimaryNetworkTransaction, P-Chain form. */
export const pChainTransaction = z.object({
  txHash: z.string(),
  txType: z.string(),
  blockTimestamp: lake.timestamp(),
  blockNumber: lake.int64(),
  blockHash: z.string(),
  consumedUtxos: z.array(utxo),
  emittedUtxos: z.array(utxo),
  value: z.array(assetAmount).optional(),
  amountBurned: z.array(assetAmount).optional(),
  amountStaked: z.array(assetAmount).optional(),
  amountL1ValidatorBalanceBurned: z.array(assetAmount).optional(),
  sourceChain: z.string().optional(),
  destinationChain: z.string().optional(),
  nodeId: z.string().optional(),
  subnetId: z.string().optional(),
  startTimestamp: lake.timestamp().optional(),
  endTimestamp: lake.timestamp().optional(),
  delegationFeePercent: z.string().optional(),
  estimatedReward: lake.amount().optional(),
  rewardTxHash: z.string().optional(),
  rewardAddresses: z.array(z.string()).optional(),
  memo: z.string().optional(),
  stakingTxHash: z.string().optional(),
  blsCredentials: z.object({ publicKey: z.string(), proofOfPossession: z.string() }).optional(),
  subnetOwnershipInfo: z
    .object({ locktime: lake.int64(), threshold: lake.int32(), addresses: z.array(z.string()) })
    .optional(),
  l1ValidatorManagerDetails: z.object({ blockchainId: z.string(), contractAddress: z.string() }).optional(),
  l1ValidatorDetails: lake.json(z.array(z.unknown())).optional(),
  blockchainInfo: lake.json(z.unknown()).optional(),
});

/** §2.1 PartyInfo: the `from` and `to` of EVM transactions and transfers. */
export const party = z.object({
  address: z.string(),
  name: z.string().optional(),
  symbol: z.string().optional(),
  decimals: lake.int32().optional(),
  logoUri: z.string().optional(),
});

/** The node's OutputOwners: uint64 values arrive as strings. */
export const outputOwners = z.object({
  locktime: lake.int64(),
  threshold: lake.int32().or(z.string().regex(/^\d+$/).transform(Number)).pipe(lake.int32()),
  addresses: z.array(z.string()),
});
