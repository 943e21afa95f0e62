import { hash32 } from '../../rng.ts';
import type { ContractInfo } from './addresses.ts';
import type { EvmChainCore } from './chain.ts';

/** The OpenAPI NftTokenMetadataStatus values the emulator produces, and how often. */
const METADATA_STATUSES = [
  ['INDEXED', 0.86],
  ['UNREACHABLE_TOKEN_URI', 0.04],
  ['INVALID_METADATA', 0.03],
  ['THROTTLED_TOKEN_URI', 0.03],
  ['INVALID_TOKEN_URI', 0.02],
  ['MISSING_TOKEN', 0.02],
] as const;

/** A freshly minted token's metadata is fetched this long after its mint; until then it is UNINDEXED. */
const INDEX_DELAY_SECONDS = 3_600;

/** §2.10 Erc721 token (chainId only in balance listings, added by the caller). */
export interface Erc721TokenRecord {
  address: string;
  name: string;
  symbol: string;
  ercType: 'ERC-721';
  tokenId: string;
  tokenUri: string;
  metadata: {
    indexStatus: string;
    metadataLastUpdatedTimestamp?: number;
    name?: string;
    symbol?: string;
    imageUri?: string;
    description?: string;
    externalUrl?: string;
    background?: string;
    attributes?: string;
  };
  ownerAddress: string;
}

/**
 * ERC-721 collections: token k of a collection is minted at a steady pace from genesis (so the
 * collection grows with the clock) to an owner drawn from the wallets, one in ten to the whale.
 * Ownership is fixed at mint: the NFT transfer transactions are not replayed into it.
 */
export interface Nfts {
  /** Contract indexes of the chain's collections. */
  readonly collections: readonly number[];
  /** Tokens minted by `now` (ids 0..n-1). */
  mintedCount(collection: number, now: number): number;
  token(collection: number, tokenId: number, now: number): Erc721TokenRecord;
  /** Wallet index owning a token. */
  ownerOf(collection: number, tokenId: number): number;
}

export function createNfts(core: EvmChainCore, historyDays: number, perCollection: number): Nfts {
  const { pool, chainSeed } = core;
  const collections = core.contracts.flatMap((c, i) => (c.kind === 'erc721' ? [i] : []));
  const spacing = (historyDays * 86_400) / perCollection;
  const mintedAt = (tokenId: number) => core.clock.genesis + Math.floor(tokenId * spacing);
  const ownerOf = (collection: number, tokenId: number) => {
    const h = hash32(chainSeed, collection, tokenId);
    return h % 10 === 0 ? pool.whaleIndex : (h >>> 4) % pool.size;
  };
  const statusOf = (collection: number, tokenId: number): string => {
    let u = hash32(chainSeed ^ 0x4e46, collection, tokenId) / 0x1_0000_0000;
    for (const [status, p] of METADATA_STATUSES) {
      if (u < p) return status;
      u -= p;
    }
    return 'INDEXED';
  };
  return {
    collections,
    mintedCount: (_collection, now) => Math.max(0, Math.floor((now - core.clock.genesis) / spacing) + 1),
    ownerOf,
    token(collection, tokenId, now) {
      const c = core.contracts[collection] as ContractInfo;
      const status =
        now < mintedAt(tokenId) + INDEX_DELAY_SECONDS ? 'UNINDEXED' : statusOf(collection, tokenId);
      const updated = mintedAt(tokenId) + INDEX_DELAY_SECONDS;
      const metadata: Erc721TokenRecord['metadata'] =
        status === 'INDEXED'
          ? {
              indexStatus: status,
              metadataLastUpdatedTimestamp: updated,
              name: `${c.name} #${tokenId}`,
              symbol: c.symbol,
              imageUri: `https://nft.avalake.invalid/${c.symbol.toLowerCase()}/${tokenId}.png`,
              description: `Token ${tokenId} of ${c.name}.`,
              externalUrl: `https://nft.avalake.invalid/${c.symbol.toLowerCase()}/${tokenId}`,
              background: `#${(hash32(chainSeed, collection, tokenId, 1) & 0xffffff).toString(16).padStart(6, '0')}`,
              attributes: JSON.stringify([
                { trait_type: 'Rarity', value: ['Common', 'Rare', 'Epic'][tokenId % 3] },
                { trait_type: 'Generation', value: Math.floor(tokenId / 100) },
              ]),
            }
          : status === 'UNINDEXED'
            ? { indexStatus: status }
            : { indexStatus: status, metadataLastUpdatedTimestamp: updated };
      return {
        address: c.address,
        name: c.name,
        symbol: c.symbol,
        ercType: 'ERC-721',
        tokenId: String(tokenId),
        tokenUri: `ipfs://bafy${c.symbol.toLowerCase()}${core.info.evmChainId}/${tokenId}.json`,
        metadata,
        ownerAddress: pool.addressOf(ownerOf(collection, tokenId)),
      };
    },
  };
}
