import { z } from 'zod';
import { erc721Token, nativeTokenBalance } from '../../schemas/evm.ts';
import { defineStream, httpGet } from '../stream.ts';

/** §8: the ERC-721 balance listing alone pages up to 500. */
const MAX_ERC721_PAGE_SIZE = 500;

/**
 * Each token row carries the address's native balance from the same answer, so one snapshot says what
 * the address held of both at that moment (the native balance alone is the native_balances stream).
 */
const tokensWithNative = (body: unknown): unknown[] => {
  const { erc721TokenBalances, nativeTokenBalance } = (body ?? {}) as Record<string, unknown>;
  return Array.isArray(erc721TokenBalances)
    ? erc721TokenBalances.map((t) => ({ ...(t as object), nativeTokenBalance }))
    : [];
};

/**
 * §4.11 the ERC-721 tokens each configured address holds on each configured EVM chain, with its native
 * token balance. Holdings change without a trace in this listing, so each run takes the whole answer
 * as one snapshot: ceil(tokens / 500) requests (at least one) per chain and address.
 */
export const erc721Balances = defineStream({
  name: 'erc721_balances',
  description:
    'ERC-721 tokens held by the configured EVM addresses, with their native balance; a snapshot per run',
  inputs: 'evm.chains and evm.addresses',
  strategy: 'snapshot',
  schema: erc721Token.extend({ chainId: z.string(), nativeTokenBalance }),
  primaryKey: ['address', 'tokenId'],
  // Note: the holder is `owner`, not `address`: each record's `address` is its collection's.
  partitions: (p) =>
    p.evm.chains.flatMap((chain) => p.evm.addresses.map((owner) => ({ network: p.network, chain, owner }))),
  request: (_p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/chains/{chainId}/addresses/{address}/balances:listErc721',
      params: { chainId: partition.chain, address: partition.owner },
      query: {},
    }),
  records: tokensWithNative,
  maxPageSize: MAX_ERC721_PAGE_SIZE,
});
