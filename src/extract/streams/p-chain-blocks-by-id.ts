import { rpcBlock } from '../../schemas/primary.ts';
import { defineStream } from '../stream.ts';
import { blockRows } from './p-chain-blocks.ts';

/**
 * §4.20 `platform.getBlock` (JSON encoding) for each block id the pipeline lists: a block is final, but
 * the node costs no compute units, so it is simply read each run as a snapshot.
 */
export const pChainBlocksById = defineStream({
  name: 'p_chain_blocks_by_id',
  description: 'The P-Chain blocks the pipeline lists by id, from the node',
  inputs: 'primary.blockIds',
  strategy: 'snapshot',
  schema: rpcBlock,
  primaryKey: ['id'],
  partitions: (p) => p.primary.blockIds.map((blockId) => ({ network: p.network, blockId })),
  request: (_p, partition) => ({
    kind: 'rpc',
    method: 'platform.getBlock',
    params: { blockID: partition.blockId, encoding: 'json' },
  }),
  records: blockRows,
});
