import { z } from 'zod';
import { party, price } from '../../schemas/avalanche.ts';
import { lake } from '../../schemas/lake.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_PAGE_SIZE, perChainAndAddress } from './fields.ts';

/**
 * §4.9 ERC-20 transfers of each configured address on each configured EVM chain. The listing is newest
 * first and takes `startBlock` (inclusive): a run starts at the newest committed block and stops there.
 */
export const erc20Transfers = defineStream({
  name: 'erc20_transfers',
  description: 'ERC-20 transfers from or to the configured EVM addresses',
  inputs: 'evm.chains and evm.addresses',
  strategy: 'newest-first',
  schema: z.object({
    txHash: z.string(),
    logIndex: lake.int32(),
    blockNumber: lake.int64(),
    blockTimestamp: lake.timestamp(),
    blockHash: z.string(),
    from: party,
    to: party,
    value: lake.bigAmount(),
    erc20Token: z.object({
      address: z.string(),
      name: z.string(),
      symbol: z.string(),
      decimals: lake.int32(),
      logoUri: z.string().optional(),
      ercType: z.string(),
      price: price.optional(),
    }),
  }),
  primaryKey: ['txHash', 'logIndex'],
  sinceOf: (t) => Number(t.blockNumber),
  // A first run has no block to start from: it reads newest first down to the pipeline's `start`.
  timeOf: (t) => Number(t.blockTimestamp),
  partitions: perChainAndAddress,
  request: (_p, partition, since) =>
    httpGet({
      service: 'data',
      route: '/v1/chains/{chainId}/addresses/{address}/transactions:listErc20',
      params: { chainId: partition.chain, address: partition.address },
      query: { startBlock: since },
    }),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});
