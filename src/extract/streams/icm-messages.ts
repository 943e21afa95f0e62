import { z } from 'zod';
import { price } from '../../schemas/avalanche.ts';
import { lake } from '../../schemas/lake.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_PAGE_SIZE } from './fields.ts';

const transaction = z.object({
  txHash: z.string(),
  timestamp: lake.timestamp(),
  gasSpent: lake.amount(),
});

/**
 * §4.16 ICM messages sent or received by each configured address, newest first. A pending message is
 * re-read each run until it is delivered; its delivered version is appended then.
 */
export const icmMessages = defineStream({
  name: 'icm_messages',
  description: 'Cross-chain (ICM) messages of the configured addresses, one row per status',
  inputs: 'icm.addresses',
  strategy: 'newest-first',
  schema: z.object({
    messageId: z.string(),
    status: z.string(),
    icmContractAddress: z.string(),
    sourceBlockchainId: z.string(),
    destinationBlockchainId: z.string(),
    sourceEvmChainId: z.string(),
    destinationEvmChainId: z.string(),
    messageNonce: lake.bigAmount(),
    from: z.string(),
    to: z.string(),
    data: z.string(),
    messageExecuted: z.boolean(),
    receiptDelivered: z.boolean(),
    receipts: z.array(z.object({ receivedMessageNonce: lake.bigAmount(), relayerRewardAddress: z.string() })),
    rewardDetails: z.object({
      address: z.string(),
      name: z.string(),
      symbol: z.string(),
      decimals: lake.int32(),
      logoUri: z.string().optional(),
      ercType: z.string(),
      price: price.optional(),
      value: lake.bigAmount(),
    }),
    sourceTransaction: transaction.optional(),
    destinationTransaction: transaction
      .extend({ rewardRedeemer: z.string().optional(), delivererAddress: z.string().optional() })
      .optional(),
  }),
  primaryKey: ['messageId'],
  isFinal: (m) => m.status !== 'pending',
  // The listing is sorted by send time (§4.16): the source transaction's.
  timeOf: (m) => (m.sourceTransaction ? Number(m.sourceTransaction.timestamp) : undefined),
  partitions: (p) => p.icm.addresses.map((address) => ({ network: p.network, address })),
  request: (p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/icm/addresses/{address}/messages',
      params: { address: partition.address },
      query: { network: p.network },
    }),
  records: listField('messages'),
  maxPageSize: MAX_PAGE_SIZE,
});
