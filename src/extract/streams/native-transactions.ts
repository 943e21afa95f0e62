import { evmTransaction } from '../../schemas/evm.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_PAGE_SIZE, perChainAndAddress } from './fields.ts';

/**
 * §4.10 native transactions of each configured address on each configured EVM chain. The listing is
 * newest first and takes `startBlock` (inclusive): a run starts at the newest committed block and
 * stops there, like the ERC-20 transfers.
 */
export const nativeTransactions = defineStream({
  name: 'native_transactions',
  description: 'EVM transactions sent or received by the configured EVM addresses',
  inputs: 'evm.chains and evm.addresses',
  strategy: 'newest-first',
  schema: evmTransaction,
  primaryKey: ['txHash'],
  sinceOf: (t) => Number(t.blockNumber),
  // A first run has no block to start from: it reads newest first down to the pipeline's `start`.
  timeOf: (t) => Number(t.blockTimestamp),
  partitions: perChainAndAddress,
  request: (_p, partition, since) =>
    httpGet({
      service: 'data',
      route: '/v1/chains/{chainId}/addresses/{address}/transactions:listNative',
      params: { chainId: partition.chain, address: partition.address },
      query: { startBlock: since },
    }),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});
