import { pChainTransaction } from '../../schemas/avalanche.ts';
import { historyEnd, historyStart } from '../pipeline.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_PAGE_SIZE, perPrimaryAddress } from './fields.ts';

/**
 * §4.2 staking transactions (validations, delegations) of each configured address, oldest first from
 * the last committed block time: a run asks only for what happened since.
 */
export const stakingTransactions = defineStream({
  name: 'staking_transactions',
  description: 'P-Chain staking transactions of the configured addresses',
  inputs: 'primary.addresses',
  strategy: 'cursor',
  schema: pChainTransaction,
  primaryKey: ['txHash'],
  cursorOf: (tx) => Number(tx.blockTimestamp),
  partitions: perPrimaryAddress,
  request: (p, partition, cursor) =>
    httpGet({
      service: 'data',
      route: '/v1/networks/{network}/blockchains/{blockchainId}/transactions:listStaking',
      params: { network: p.network, blockchainId: 'p-chain' },
      query: {
        addresses: partition.address,
        sortOrder: 'asc',
        startTimestamp: cursor ?? historyStart(p),
        endTimestamp: historyEnd(p),
      },
    }),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});
