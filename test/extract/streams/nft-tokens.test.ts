import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { queryLake, streamTable } from '../../helpers/lake.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  openApiExample,
  type StreamCase,
  type Totals,
} from './harness.ts';

/** The NFT collections of a chain: its contracts of kind erc721 (nfts.collections are their indexes). */
const collectionsOf = (emulator: Emulator, chainId: string) => {
  const chain = emulator.truth.evm.chain(chainId);
  if (!chain) throw new Error(`no EVM chain ${chainId}`);
  return chain.nfts.collections.map((i) => ({
    index: i,
    address: chain.core.contracts[i]?.address as string,
  }));
};

const nftTokens: StreamCase = {
  stream: 'nft_tokens',
  // Every collection of the C-Chain and of one L1: the L1's collection asked of the C-Chain is empty.
  edit(p, emulator) {
    const evm = p.evm as { chains: string[]; collections?: string[] };
    evm.chains = evm.chains.slice(0, 2);
    evm.collections = evm.chains.flatMap((chainId) => collectionsOf(emulator, chainId).map((c) => c.address));
  },
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const totals: Totals = {};
    for (const chainId of pipeline.evm.chains) {
      const chain = emulator.truth.evm.chain(chainId);
      for (const { index, address } of collectionsOf(emulator, chainId)) {
        if (!pipeline.evm.collections.includes(address)) continue;
        const minted = chain?.nfts.mintedCount(index, now) ?? 0;
        for (let id = 0; id < minted; id++) add(totals, `${chainId} ${address}`, id);
      }
    }
    return totals;
  },
  lake: {
    partition: "chain || ' ' || collection",
    key: 'chain, collection, address, tokenId',
    amount: 'tokenIdExact::hugeint',
  },
};

describe('nft_tokens', () => {
  it('snapshots every token of each collection with its metadata, and again after the clock moves', async () => {
    await expectMirrorsTruth(nftTokens, 2 * 86_400, async ({ dataDir, first }) => {
      // A collection asked of a chain it is not on: one request, no rows.
      expect(first.partitions.filter((p) => p.rows === 0).every((p) => p.requests === 1)).toBe(true);
      const [indexed] = await queryLake(
        `select metadata.indexStatus as status, json_extract_string(metadata.attributes, '$[0].trait_type') as trait
         from ${streamTable(dataDir, 'nft_tokens')} where metadata.indexStatus = 'INDEXED' limit 1`,
      );
      expect(indexed).toEqual({ status: 'INDEXED', trait: 'Rarity' });
    });
  });

  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(nftTokens));

  it("accepts the OpenAPI document's example", () => {
    const body = openApiExample('data', '/v1/chains/{chainId}/nfts/collections/{address}/tokens');
    const [token] = expectSchemaAccepts('nft_tokens', body);
    expect(token).toMatchObject({ ercType: 'ERC-721', metadata: { indexStatus: 'indexed' } });
  });
});
