import { erc721Token } from '../../schemas/evm.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_PAGE_SIZE } from './fields.ts';

/**
 * §4.15 the tokens of each configured NFT collection on each configured EVM chain, with their metadata
 * (attributes as JSON text). The listing is by token id, takes no lower bound, and a token's metadata
 * and owner change in place, so each run reads the collection whole as one snapshot: ceil(tokens / 100)
 * requests. A large collection is read in parts (resumable): committed at the flush thresholds with
 * its page token, so an interrupted or quota-stopped run is carried on by the next, with the same
 * snapshot time. A collection that is not on a chain answers an empty list: one request, no rows.
 */
export const nftTokens = defineStream({
  name: 'nft_tokens',
  description: 'Tokens of the configured NFT collections with their metadata; a snapshot per run',
  inputs: 'evm.chains and evm.collections',
  strategy: 'snapshot',
  resumable: true,
  schema: erc721Token,
  primaryKey: ['address', 'tokenId'],
  partitions: (p) =>
    p.evm.chains.flatMap((chain) =>
      p.evm.collections.map((collection) => ({ network: p.network, chain, collection })),
    ),
  request: (_p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/chains/{chainId}/nfts/collections/{address}/tokens',
      params: { chainId: partition.chain, address: partition.collection },
      query: {},
    }),
  records: listField('tokens'),
  maxPageSize: MAX_PAGE_SIZE,
});
