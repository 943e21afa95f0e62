import { z } from 'zod';
import { party, price } from './avalanche.ts';
import { lake } from './lake.ts';
import { pureTransform } from './zod-def.ts';

/**
 * Record fragments of the Data API's EVM listings (api-surfaces.md §2.7–§2.11), with the lake type of
 * each field. Fields the OpenAPI document adds since the Granite upgrade are optional.
 */

/** Millisecond block time and minimum block delay: present only after the Granite upgrade. */
const granite = {
  blockTimestampMilliseconds: lake.timestamp({ unit: 'ms' }).optional(),
  blockMinDelayExcess: lake.int64().optional(),
};

/** §2.7 EvmTransaction (the OpenAPI NativeTransaction). `txStatus` is "1" (success) or "0" (failed). */
export const evmTransaction = z.object({
  blockNumber: lake.int64(),
  blockTimestamp: lake.timestamp(),
  ...granite,
  blockHash: z.string(),
  chainId: z.string(),
  blockIndex: lake.int32(),
  txHash: z.string(),
  txStatus: z.string(),
  txType: lake.int32(),
  gasLimit: lake.amount(),
  gasUsed: lake.amount(),
  gasPrice: lake.amount(),
  nonce: lake.int64(),
  from: party,
  to: party,
  method: z
    .object({ callType: z.string(), methodHash: z.string(), methodName: z.string().optional() })
    .optional(),
  value: lake.bigAmount(),
});

/** §2.11 EvmBlock. Gas and fees in wei fit Decimal128; the transaction count since genesis is an Int64. */
export const evmBlock = z.object({
  chainId: z.string(),
  blockNumber: lake.int64(),
  blockTimestamp: lake.timestamp(),
  ...granite,
  blockHash: z.string(),
  txCount: lake.int32(),
  baseFee: lake.amount(),
  gasUsed: lake.amount(),
  gasLimit: lake.amount(),
  gasCost: lake.amount(),
  parentHash: z.string(),
  feesSpent: lake.amount(),
  cumulativeTransactions: lake.int64(),
});

/** §2.9 NativeTokenBalance. A balance in wei can outgrow 38 digits on an L1 with a large supply. */
export const nativeTokenBalance = z.object({
  name: z.string(),
  symbol: z.string(),
  decimals: lake.int32(),
  logoUri: z.string().optional(),
  chainId: z.string(),
  price: price.optional(),
  balance: lake.bigAmount(),
  balanceValue: price.optional(),
});

/**
 * NFT `attributes` arrive as a string holding JSON; the lake keeps them as JSON text. A string that is
 * not JSON (metadata is whatever the token URI served) is kept as a JSON string rather than rejected.
 */
const attributes = lake.json(
  z.string().transform(
    pureTransform((text: string): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    }),
  ),
);

/** §2.10 the `metadata` of an ERC-721 token, as indexed from its token URI. */
export const nftMetadata = z.object({
  indexStatus: z.string(),
  metadataLastUpdatedTimestamp: lake.timestamp().optional(),
  name: z.string().optional(),
  symbol: z.string().optional(),
  imageUri: z.string().optional(),
  description: z.string().optional(),
  animationUri: z.string().optional(),
  externalUrl: z.string().optional(),
  background: z.string().optional(),
  attributes: attributes.optional(),
});

/** §2.10 Erc721 token; `chainId` only in balance listings. Token ids are uint256. */
export const erc721Token = z.object({
  address: z.string(),
  name: z.string(),
  symbol: z.string(),
  ercType: z.string(),
  tokenId: lake.bigAmount(),
  tokenUri: z.string(),
  metadata: nftMetadata,
  ownerAddress: z.string().optional(),
  chainId: z.string().optional(),
});
