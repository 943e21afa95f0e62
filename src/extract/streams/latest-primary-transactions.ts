import { cChainTx, pChainTx, xChainTx } from '../../schemas/primary.ts';
import type { Pipeline } from '../pipeline.ts';
import { defineStream, type HttpPageRequest, httpGet } from '../stream.ts';
import { isNamed, listField, MAX_PAGE_SIZE } from './fields.ts';

/**
 * §4.1 without addresses: the chain's latest transactions, newest first. The listing takes no time
 * bound then (rule 1), so a run walks down to the newest transaction of the last run and stops there.
 * Note: without a `start`, a first run walks the chain's whole history (millions of pages on mainnet):
 * opt-in, named in the pipeline's `streams`.
 */
const latest =
  (blockchainId: string) =>
  (p: Pipeline): HttpPageRequest =>
    httpGet({
      service: 'data',
      route: '/v1/networks/{network}/blockchains/{blockchainId}/transactions',
      params: { network: p.network, blockchainId: blockchainId },
      query: {},
    });

const perNetwork = (p: Pipeline) => [{ network: p.network }];

export const pChainLatestTransactions = defineStream({
  name: 'p_chain_latest_transactions',
  description: "Every P-Chain transaction of the network, newest first (the chain's latest transactions)",
  inputs: 'the stream name in streams',
  strategy: 'newest-first',
  schema: pChainTx,
  primaryKey: ['txHash'],
  timeOf: (tx) => Number(tx.blockTimestamp),
  partitions: (p) => (isNamed(p, 'p_chain_latest_transactions') ? perNetwork(p) : []),
  request: latest('p-chain'),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});

export const xChainLatestTransactions = defineStream({
  name: 'x_chain_latest_transactions',
  description: "Every X-Chain transaction of the network, newest first (the chain's latest transactions)",
  inputs: 'the stream name in streams',
  strategy: 'newest-first',
  schema: xChainTx,
  primaryKey: ['txHash'],
  timeOf: (tx) => Number(tx.timestamp),
  partitions: (p) => (isNamed(p, 'x_chain_latest_transactions') ? perNetwork(p) : []),
  request: latest('x-chain'),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});

export const cChainLatestTransactions = defineStream({
  name: 'c_chain_latest_transactions',
  description: 'Every C-Chain atomic transaction of the network, newest first',
  inputs: 'the stream name in streams',
  strategy: 'newest-first',
  schema: cChainTx,
  primaryKey: ['txHash'],
  timeOf: (tx) => Number(tx.timestamp),
  partitions: (p) => (isNamed(p, 'c_chain_latest_transactions') ? perNetwork(p) : []),
  request: latest('c-chain'),
  records: listField('transactions'),
  maxPageSize: MAX_PAGE_SIZE,
});
