import type { z } from 'zod';
import { cChainTx, pChainTx, xChainTx } from '../../schemas/primary.ts';
import { historyEnd, historyStart, type Pipeline } from '../pipeline.ts';
import { type CursorStream, defineStream, httpGet, type Partition } from '../stream.ts';
import { listField, MAX_PAGE_SIZE, perPrimaryAddress } from './fields.ts';

const ROUTE = '/v1/networks/{network}/blockchains/{blockchainId}/transactions';

/**
 * The request of §4.1, oldest first from a cursor (inclusive): of one address, or (P-Chain) of one L1
 * validation without addresses, which the OpenAPI document lets take `txTypes` and timestamps too.
 */
const listing =
  (blockchainId: string) =>
  (
    p: Pipeline,
    partition: Partition,
    cursor: number | undefined,
  ): ReturnType<CursorStream<z.ZodObject>['request']> =>
    httpGet({
      service: 'data',
      route: ROUTE,
      params: { network: p.network, blockchainId: blockchainId },
      query: {
        ...(partition.l1ValidationId !== undefined
          ? { l1ValidationId: partition.l1ValidationId }
          : { addresses: partition.address }),
        txTypes: partition.txTypes,
        sortOrder: 'asc',
        startTimestamp: cursor ?? historyStart(p),
        endTimestamp: historyEnd(p),
      },
    });

/**
 * A partition per address and per L1 validation id. The types asked for are a partition key (sorted,
 * comma-separated, as sent): the checkpoint of one filter says nothing of another, so changing
 * `primary.txTypes` starts new partitions, read from the pipeline's start, instead of skipping the
 * history of a type just added.
 */
function pChainPartitions(p: Pipeline): Partition[] {
  const types = [...new Set(p.primary.txTypes)].sort();
  const filter: Record<string, string> = types.length > 0 ? { txTypes: types.join(',') } : {};
  return [
    ...p.primary.addresses.map((address) => ({ network: p.network, address, ...filter })),
    ...p.primary.l1ValidationIds.map((l1ValidationId) => ({ network: p.network, l1ValidationId, ...filter })),
  ];
}

/**
 * §4.1 P-Chain transactions of each configured address and of each configured L1 validation (every
 * type, or those of `primary.txTypes`), oldest first from the last committed block time.
 */
export const pChainTransactions = defineStream({
  name: 'p_chain_transactions',
  description:
    'P-Chain transactions of the configured addresses and L1 validations (every type, or the configured ones), with their UTXOs and L1 details',
  inputs: 'primary.addresses or primary.l1ValidationIds',
  strategy: 'cursor',
  schema: pChainTx,
  primaryKey: ['txHash'],
  cursorOf: (tx) => Number(tx.blockTimestamp),
  partitions: pChainPartitions,
  request: listing('p-chain'),
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
  request: listing('x-chain'),
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
  request: listing('c-chain'),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});
