import { utxo } from '../../schemas/avalanche.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_PAGE_SIZE } from './fields.ts';

const CHAINS = ['p-chain', 'x-chain'] as const;

/**
 * §4.4 UTXOs of each configured address on the P- and X-Chain, spent ones included, newest first. An
 * unspent UTXO can still be spent, so each run re-reads the unspent ones and appends a new version of
 * those that were spent since.
 */
export const utxos = defineStream({
  name: 'utxos',
  description: 'P- and X-Chain UTXOs of the configured addresses, one row per version (unspent, spent)',
  inputs: 'primary.addresses',
  strategy: 'newest-first',
  schema: utxo,
  primaryKey: ['utxoId'],
  isFinal: (u) => u.consumingTxHash !== undefined,
  // P-Chain UTXOs carry `blockTimestamp`, X-Chain ones `timestamp`: when the UTXO was created.
  timeOf: (u) => {
    const at = u.blockTimestamp ?? u.timestamp;
    return at === undefined ? undefined : Number(at);
  },
  partitions: (p) =>
    CHAINS.flatMap((chain) => p.primary.addresses.map((address) => ({ network: p.network, chain, address }))),
  request: (p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/networks/{network}/blockchains/{blockchainId}/utxos',
      params: { network: p.network, blockchainId: partition.chain },
      query: {
        addresses: partition.address,
        includeSpent: true,
        sortBy: 'timestamp',
        sortOrder: 'desc',
      },
    }),
  records: listField('utxos'),
  maxPageSize: MAX_PAGE_SIZE,
});
