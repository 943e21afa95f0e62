import { nativeTokenBalance } from '../../schemas/evm.ts';
import { defineStream, httpGet } from '../stream.ts';
import { perChainAndAddress } from './fields.ts';

const balanceOf = (body: unknown): unknown[] => {
  const balance = (body as { nativeTokenBalance?: unknown } | null)?.nativeTokenBalance;
  return balance === undefined ? [] : [balance];
};

/**
 * §4.12 the native token balance of each configured address on each configured EVM chain at the latest
 * block, in US dollars: one row per run (one request), so balances over time are a series of snapshots.
 */
export const nativeBalances = defineStream({
  name: 'native_balances',
  description: 'Native token balance of the configured EVM addresses at the latest block; a snapshot per run',
  inputs: 'evm.chains and evm.addresses',
  strategy: 'snapshot',
  schema: nativeTokenBalance,
  primaryKey: ['chainId'],
  partitions: perChainAndAddress,
  request: (_p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/chains/{chainId}/addresses/{address}/balances:getNative',
      params: { chainId: partition.chain, address: partition.address },
      query: { currency: 'usd' },
    }),
  records: balanceOf,
});
