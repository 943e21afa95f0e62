import { evmTransaction } from '../../schemas/evm.ts';
import { defineStream, httpGet } from '../stream.ts';
import { isNamed, listField, MAX_PAGE_SIZE, perEvmChain } from './fields.ts';

const NAME = 'evm_transactions';

/**
 * §4.13 every transaction of each configured EVM chain, newest first; a run stops at the newest one
 * committed. All statuses in one partition: `txStatus` ("1" success, "0" failed) is a column, and two
 * partitions, one per `status`, would cost a request more per run for the same records.
 *
 * Note: the listing takes no lower bound, so a first run reads newest first down to the pipeline's
 * `start`, and without one back to the chain's genesis (the C-Chain: hundreds of millions of records). A pipeline opts in by naming the stream in `streams`.
 */
export const evmTransactions = defineStream({
  name: NAME,
  description: 'Every transaction of the configured EVM chains (opt-in: name it in the pipeline streams)',
  inputs: 'evm.chains, and the stream name in streams',
  strategy: 'newest-first',
  schema: evmTransaction,
  primaryKey: ['txHash'],
  timeOf: (tx) => Number(tx.blockTimestamp),
  partitions: (p) => (isNamed(p, NAME) ? perEvmChain(p) : []),
  request: (_p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/chains/{chainId}/transactions',
      params: { chainId: partition.chain },
      query: {},
    }),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});
