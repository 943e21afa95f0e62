import type { z } from 'zod';
import { cChainTx, pChainTx, xChainTx } from '../../schemas/primary.ts';
import { historyEnd, historyStart, type Pipeline } from '../pipeline.ts';
import { type CursorStream, defineStream, type Partition } from '../stream.ts';
import { listField, MAX_PAGE_SIZE, perPrimaryAddress } from './fields.ts';

const ROUTE = '/v1/networks/{network}/blockchains/{blockchainId}/transactions';

/**
 * The request of §4.1 with addresses, oldest first from a cursor (inclusive). Every transaction type,
 * no `l1ValidationId`: the pipeline has no field to ask for fewer (see the README's stream table).
 */
const byAddress =
  (blockchainId: string) =>
  (
    p: Pipeline,
    partition: Partition,
    cursor: number | undefined,
  ): ReturnType<CursorStream<z.ZodObject>['request']> => ({
    kind: 'http',
    service: 'data',
    route: ROUTE,
    path: `/v1/networks/${p.network}/blockchains/${blockchainId}/transactions`,
    query: {
      addresses: partition.address,
      sortOrder: 'asc',
      startTimestamp: cursor ?? historyStart(p),
      endTimestamp: historyEnd(p),
    },
  });

/**
 * §4.1 P-Chain transactions of each configured address, every type (transfers, staking, subnets and
 * L1s, atomic), oldest first from the last committed block time.
 */
export const pChainTransactions = defineStream({
  name: 'p_chain_transactions',
  description:
    'P-Chain transactions of the configured addresses, every type, with their UTXOs and L1 details',
  inputs: 'primary.addresses',
  strategy: 'cursor',
  schema: pChainTx,
  primaryKey: ['txHash'],
  cursorOf: (tx) => Number(tx.blockTimestamp),
  partitions: perPrimaryAddress,
  request: byAddress('p-chain'),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});

/** §4.1 X-Chain transactions of each configured address, oldest first from the last committed time. */
export const xChainTransactions = defineStream({
  name: 'x_chain_transactions',
  description: 'X-Chain transactions of the configured addresses, with their UTXOs',
  inputs: 'primary.addresses',
  strategy: 'cursor',
  schema: xChainTx,
  primaryKey: ['txHash'],
  cursorOf: (tx) => Number(tx.timestamp),
  partitions: perPrimaryAddress,
  request: byAddress('x-chain'),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});

/** §4.1 C-Chain atomic transactions (imports, exports) of each configured address, oldest first. */
export const cChainTransactions = defineStream({
  name: 'c_chain_transactions',
  description: 'C-Chain atomic imports and exports of the configured addresses',
  inputs: 'primary.addresses',
  strategy: 'cursor',
  schema: cChainTx,
  primaryKey: ['txHash'],
  cursorOf: (tx) => Number(tx.timestamp),
  partitions: perPrimaryAddress,
  request: byAddress('c-chain'),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});
