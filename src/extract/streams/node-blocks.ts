import { z } from 'zod';
import { lake } from '../../schemas/lake.ts';
import { numericAmount } from '../../schemas/primary.ts';
import { historyEnd, historyStart } from '../pipeline.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_PAGE_SIZE } from './fields.ts';

/**
 * §4.7 P-Chain blocks proposed by each configured validator. The listing is newest first and has no
 * `sortOrder`, but takes `startTimestamp`: a run asks from the newest committed block's time and walks
 * down to it.
 */
export const nodeBlocks = defineStream({
  name: 'node_blocks',
  description: 'P-Chain blocks proposed by the configured validators',
  inputs: 'primary.nodeIds',
  strategy: 'newest-first',
  schema: z.object({
    blockNumber: lake.int64(),
    blockHash: z.string(),
    parentHash: z.string(),
    blockTimestamp: lake.timestamp(),
    blockType: z.string(),
    txCount: lake.int32(),
    transactions: z.array(z.string()),
    blockSizeBytes: lake.int64(),
    l1ValidatorsAccruedFees: numericAmount().optional(),
    activeL1Validators: lake.int32().optional(),
    currentSupply: lake.amount().optional(),
    proposerDetails: z
      .object({
        proposerId: z.string().optional(),
        proposerParentId: z.string().optional(),
        proposerNodeId: z.string().optional(),
        proposerPChainHeight: lake.int64().optional(),
        proposerTimestamp: lake.timestamp().optional(),
      })
      .optional(),
  }),
  primaryKey: ['blockHash'],
  sinceOf: (b) => Number(b.blockTimestamp),
  timeOf: (b) => Number(b.blockTimestamp),
  partitions: (p) => p.primary.nodeIds.map((nodeId) => ({ network: p.network, nodeId })),
  request: (p, partition, since) =>
    httpGet({
      service: 'data',
      route: '/v1/networks/{network}/blockchains/{blockchainId}/nodes/{nodeId}/blocks',
      params: { network: p.network, blockchainId: 'p-chain', nodeId: partition.nodeId },
      query: { startTimestamp: since ?? historyStart(p), endTimestamp: historyEnd(p) },
    }),
  records: listField('blocks'),
  maxPageSize: MAX_PAGE_SIZE,
});
