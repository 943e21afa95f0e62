import { z } from 'zod';
import { assetAmount, utxo } from './avalanche.ts';
import { lake } from './lake.ts';

/**
 * Record fragments of the primary-network listings (api-surfaces.md §2.3, §2.4, §2.12, §2.13) and of
 * the node's P-Chain RPC (§2.18), typed for the lake: amounts DECIMAL(38,0), times Timestamp, heights
 * Int64; free-form objects (an EVM genesis, a block's unsigned transaction) JSON text.
 */

/**
 * The Data API's PrimaryNetworkTxType values (reference/enums.json, `componentEnums`), in its order:
 * what the transaction listings' `txTypes` takes, for the pipeline and the emulator alike. test/extract/filters.test.ts holds the list to the file.
 */
export const PRIMARY_NETWORK_TX_TYPES = [
  'AddValidatorTx',
  'AddSubnetValidatorTx',
  'AddDelegatorTx',
  'CreateChainTx',
  'CreateSubnetTx',
  'ImportTx',
  'ExportTx',
  'AdvanceTimeTx',
  'RewardValidatorTx',
  'RemoveSubnetValidatorTx',
  'TransformSubnetTx',
  'AddPermissionlessValidatorTx',
  'AddPermissionlessDelegatorTx',
  'BaseTx',
  'TransferSubnetOwnershipTx',
  'ConvertSubnetToL1Tx',
  'RegisterL1ValidatorTx',
  'SetL1ValidatorWeightTx',
  'DisableL1ValidatorTx',
  'IncreaseL1ValidatorBalanceTx',
  'UNKNOWN',
  'CreateAssetTx',
  'OperationTx',
] as const;

/**
 * An integer the API sends as a JSON number where the lake wants an amount (L1 validator balances).
 * Note: a JSON number above 2^53 has already lost digits when parsed; the API sends these as numbers.
 */
export const numericAmount = (options: { signed?: boolean } = {}) =>
  z.union([z.number().int(), z.string()]).transform(String).pipe(lake.amount(options));

/** The P-Chain's UTXO and the X-/C-Chain's, with the fields only the OpenAPI `Utxo` has. */
export const primaryUtxo = utxo.extend({
  utxoBytes: z.string().optional(),
  credentials: z
    .array(z.object({ signature: z.string().optional(), publicKey: z.string().optional() }))
    .optional(),
  groupId: lake.int32().optional(),
  payload: z.string().optional(),
});

export const blsCredentials = z.object({ publicKey: z.string(), proofOfPossession: z.string() });

/** §2.3 `l1ValidatorDetails[]`: one L1 validator as a transaction registered or changed it. */
export const l1ValidatorDetails = z.object({
  validationId: z.string(),
  validationIdHex: z.string(),
  nodeId: z.string(),
  subnetId: z.string(),
  weight: lake.int64(),
  remainingBalance: numericAmount(),
  /** Negative when a disabled or removed validator's balance is returned. */
  balanceChange: numericAmount({ signed: true }).optional(),
  // Note: the OpenAPI leaves its shape open (`type: object`); the keys the service sends are these.
  blsCredentials: z
    .object({ publicKey: z.string().optional(), proofOfPossession: z.string().optional() })
    .optional(),
});

/** §2.3 `blockchainInfo` of a CreateChainTx; `genesisData` is an EVM genesis object or an encoded string. */
export const blockchainInfo = z.object({
  chainName: z.string(),
  vmId: z.string(),
  genesisData: lake.json().optional(),
});

/** §2.3 PrimaryNetworkTransaction of the P-Chain (OpenAPI PChainTransaction), nested parts typed. */
export const pChainTx = z.object({
  txHash: z.string(),
  txType: z.string(),
  blockTimestamp: lake.timestamp(),
  blockNumber: lake.int64(),
  blockHash: z.string(),
  consumedUtxos: z.array(primaryUtxo),
  emittedUtxos: z.array(primaryUtxo),
  value: z.array(assetAmount),
  amountBurned: z.array(assetAmount),
  amountStaked: z.array(assetAmount),
  amountL1ValidatorBalanceBurned: z.array(assetAmount),
  sourceChain: z.string().optional(),
  destinationChain: z.string().optional(),
  startTimestamp: lake.timestamp().optional(),
  endTimestamp: lake.timestamp().optional(),
  delegationFeePercent: z.string().optional(),
  nodeId: z.string().optional(),
  subnetId: z.string().optional(),
  l1ValidatorManagerDetails: z.object({ blockchainId: z.string(), contractAddress: z.string() }).optional(),
  l1ValidatorDetails: z.array(l1ValidatorDetails).optional(),
  estimatedReward: lake.amount().optional(),
  rewardTxHash: z.string().optional(),
  rewardAddresses: z.array(z.string()).optional(),
  memo: z.string().optional(),
  stakingTxHash: z.string().optional(),
  subnetOwnershipInfo: z
    .object({ locktime: lake.int64(), threshold: lake.int32(), addresses: z.array(z.string()) })
    .optional(),
  blsCredentials: blsCredentials.optional(),
  /** The created chain's id (CreateChainTx); the service sends it beside `blockchainInfo`. */
  blockchainId: z.string().optional(),
  blockchainInfo: blockchainInfo.optional(),
});

/** OpenAPI XChainNonLinearTransaction / XChainLinearTransaction: one schema, the absent half null. */
export const xChainTx = z.object({
  txHash: z.string(),
  chainFormat: z.string(),
  timestamp: lake.timestamp(),
  txType: z.string(),
  memo: z.string(),
  consumedUtxos: z.array(primaryUtxo),
  emittedUtxos: z.array(primaryUtxo),
  amountUnlocked: z.array(assetAmount),
  amountCreated: z.array(assetAmount),
  sourceChain: z.string().optional(),
  destinationChain: z.string().optional(),
  assetCreated: z
    .object({
      assetId: z.string(),
      name: z.string(),
      symbol: z.string(),
      denomination: lake.int32(),
      type: z.string(),
      createdAtTimestamp: lake.timestamp(),
      cap: z.string(),
    })
    .optional(),
  /** Non-linear (vertex) form. */
  vertices: z
    .array(z.object({ hash: z.string(), height: lake.int64(), timestamp: lake.timestamp() }))
    .optional(),
  /** Linear (block) form. */
  blockHeight: lake.int64().optional(),
  blockHash: z.string().optional(),
});

/** OpenAPI CChainExportTransaction / CChainImportTransaction: one schema, the other direction's legs null. */
export const cChainTx = z.object({
  txHash: z.string(),
  blockHeight: lake.int64(),
  blockHash: z.string(),
  timestamp: lake.timestamp(),
  memo: z.string(),
  amountUnlocked: z.array(assetAmount),
  amountCreated: z.array(assetAmount),
  sourceChain: z.string(),
  destinationChain: z.string(),
  txType: z.string(),
  /** ExportTx: the EVM accounts debited. */
  evmInputs: z
    .array(
      z.object({
        fromAddress: z.string(),
        asset: assetAmount,
        credentials: z
          .array(z.object({ signature: z.string().optional(), publicKey: z.string().optional() }))
          .optional(),
      }),
    )
    .optional(),
  /** ImportTx: the EVM accounts credited. */
  evmOutputs: z.array(z.object({ toAddress: z.string(), asset: assetAmount })).optional(),
  emittedUtxos: z.array(primaryUtxo).optional(),
  consumedUtxos: z.array(primaryUtxo).optional(),
});

/**
 * §2.4 one balance of a PrimaryBalances answer, flattened: which member of `balances` it came from
 * (`unlockedUnstaked`, `atomicMemoryUnlocked`, the X-Chain's `unlocked`, …) and the asset's amount.
 */
export const balanceRow = z.object({
  category: z.string(),
  assetId: z.string(),
  name: z.string(),
  symbol: z.string(),
  denomination: lake.int32(),
  type: z.string(),
  amount: lake.amount(),
  utxoCount: lake.int64(),
  sharedWithChainId: z.string().optional(),
  status: z.string().optional(),
});

/** The node's JSON block encoding of one P-Chain block (`platform.getBlock*` with `encoding=json`). */
export const rpcBlock = z.object({
  id: z.string(),
  parentID: z.string(),
  height: lake.int64(),
  /** Banff and later blocks carry their time; older ones do not. */
  time: lake.timestamp().optional(),
  txCount: lake.int32(),
  txIds: z.array(z.string()),
});

/**
 * One transaction of a JSON-encoded P-Chain block. The unsigned transaction's shape depends on its
 * type (§2.18 shows only the export form): its common members are typed, the whole kept as JSON text.
 */
export const rpcBlockTx = z.object({
  txID: z.string(),
  blockID: z.string(),
  blockHeight: lake.int64(),
  blockTime: lake.timestamp().optional(),
  /** Position in the block. */
  index: lake.int32(),
  networkID: lake.int32().optional(),
  blockchainID: z.string().optional(),
  memo: z.string().optional(),
  sourceChain: z.string().optional(),
  destinationChain: z.string().optional(),
  subnetID: z.string().optional(),
  unsignedTx: lake.json(),
  credentials: z.array(z.object({ signatures: z.array(z.string()).default([]) })).default([]),
});
