import { evmTransaction } from '../../schemas/evm.ts';
import type { Pipeline } from '../pipeline.ts';
import { defineStream } from '../stream.ts';
import { listField, MAX_PAGE_SIZE, whenNamed } from './fields.ts';

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
  partitions: whenNamed(NAME, (p: Pipeline) => p.evm.chains.map((chain) => ({ network: p.network, chain }))),
  request: (_p, partition) => ({
    kind: 'http',
    service: 'data',
    route: '/v1/chains/{chainId}/transactions',
    path: `/v1/chains/${partition.chain}/transactions`,
    query: {},
  }),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});
