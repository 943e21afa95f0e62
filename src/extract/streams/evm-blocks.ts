import { evmBlock } from '../../schemas/evm.ts';
import { defineStream, httpGet } from '../stream.ts';
import { isNamed, listField, MAX_PAGE_SIZE, perEvmChain } from './fields.ts';

const NAME = 'evm_blocks';

/**
 * §4.14 every block of each configured EVM chain, newest first; a run stops at the newest one committed,
 * so it costs ceil(new blocks / 100) + 1 requests.
 *
 * Note: the listing takes no lower bound, so a first run reads newest first down to the pipeline's
 * `start`, and without one back to the chain's genesis (the C-Chain: tens of millions of blocks, a
 * backfill of days under the free quota). A pipeline opts in by
 * naming the stream in `streams`.
 */
export const evmBlocks = defineStream({
  name: NAME,
  description: 'Every block of the configured EVM chains (opt-in: name it in the pipeline streams)',
  inputs: 'evm.chains, and the stream name in streams',
  strategy: 'newest-first',
  schema: evmBlock,
  primaryKey: ['blockNumber'],
  timeOf: (block) => Number(block.blockTimestamp),
  partitions: (p) => (isNamed(p, NAME) ? perEvmChain(p) : []),
  request: (_p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/chains/{chainId}/blocks',
      params: { chainId: partition.chain },
      query: {},
    }),
  records: listField('blocks'),
  maxPageSize: MAX_PAGE_SIZE,
});
