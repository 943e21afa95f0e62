import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { HttpClient } from '../../../src/extract/http.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { startEmulator } from '../../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../../helpers/extract.ts';
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

describe('nft_tokens read in parts (a resumable snapshot)', () => {
  /** One collection, read ten tokens a page and committed every three pages. */
  const inParts = (emulator: Emulator) => {
    let chainId = '';
    let collection = { index: 0, address: '' };
    const w = demoWorkspace(emulator, (p) => {
      const evm = p.evm as { chains: string[]; collections?: string[] };
      chainId = evm.chains[0] as string;
      collection = collectionsOf(emulator, chainId)[0] as typeof collection;
      p.streams = ['nft_tokens'];
      p.evm = { ...evm, chains: [chainId], collections: [collection.address] };
      p.pageSize = { nft_tokens: 10 };
      p.flush = { rows: 30 };
    });
    const minted = () =>
      emulator.truth.evm
        .chain(chainId)
        ?.nfts.mintedCount(collection.index, Math.floor(emulator.clock.now())) ?? 0;
    return { w, minted };
  };

  /** Answers 400 to the nft_tokens request after the first `n`: the run stops there, as a quota or crash would. */
  const failingAfter = (n: number) => (http: HttpClient) => {
    let seen = 0;
    return {
      send: (request: Parameters<HttpClient['send']>[0]) =>
        request.url.includes('/nfts/collections/') && ++seen > n
          ? Promise.resolve({
              status: 400,
              headers: {},
              text: '{"message":"stopped by the test","statusCode":400}',
            })
          : http.send(request),
      close: () => http.close(),
    };
  };

  /** Per token: how many rows, and their snapshot times. */
  const rowsPerToken = (dataDir: string) =>
    queryLake(
      `select tokenIdExact as id, count(*)::integer as n, count(distinct _snapshot_at)::integer as times,
              min(epoch_ms(_snapshot_at))::bigint as at
       from ${streamTable(dataDir, 'nft_tokens')} group by 1 order by tokenIdExact::hugeint`,
    );

  it('commits along the way and carries an interrupted snapshot on from its page token, at the same time', async () => {
    const emulator = await startEmulator();
    try {
      const { w, minted } = inParts(emulator);
      const tokens = minted();
      const pages = Math.ceil(tokens / 10);
      expect(pages).toBeGreaterThan(7);
      const first = await extractOnce(w.pipelinePath, w.dataDir, {}, failingAfter(7));
      expect(first.status).not.toBe('ok');
      // Committed every three pages, and at the stop with the seventh page's token: seven pages held.
      expect((await rowsPerToken(w.dataDir)).length).toBe(70);
      const sent: string[] = [];
      const second = await extractOnce(w.pipelinePath, w.dataDir, {}, (http) => ({
        send: (request) => {
          sent.push(request.url);
          return http.send(request);
        },
        close: () => http.close(),
      }));
      expect(second.status).toBe('ok');
      // The second run starts at the eighth page: no page before it is asked again.
      const nftRequests = sent.filter((u) => u.includes('/nfts/collections/'));
      expect(nftRequests.length).toBe(pages - 7);
      expect(new URL(nftRequests[0] as string).searchParams.has('pageToken')).toBe(true);
      const rows = await rowsPerToken(w.dataDir);
      expect(rows.map((r) => r.id)).toEqual(Array.from({ length: tokens }, (_, i) => String(i)));
      // Every token once, all stamped with the first run's snapshot time.
      expect(rows.every((r) => r.n === 1 && r.times === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.at)).size).toBe(1);
    } finally {
      await emulator.close();
    }
  });

  it('reads a snapshot again from its first page, at the same time, when its page token has expired', async () => {
    const emulator = await startEmulator();
    try {
      const { w, minted } = inParts(emulator);
      await extractOnce(w.pipelinePath, w.dataDir, {}, failingAfter(4));
      const before = await rowsPerToken(w.dataDir);
      expect(before.length).toBe(40);
      // Page tokens live 24 hours: two days later the carried-over token is refused.
      emulator.advance(2 * 86_400);
      const second = await extractOnce(w.pipelinePath, w.dataDir);
      expect(second.status).toBe('ok');
      const rows = await rowsPerToken(w.dataDir);
      expect(rows.length).toBe(minted());
      // One snapshot time: the first forty tokens were read twice (the raw lake keeps both), the rest once.
      expect(new Set(rows.map((r) => r.at))).toEqual(new Set([before[0]?.at]));
      expect(rows.filter((r) => r.n === 2).length).toBe(40);
      expect(rows.every((r) => r.times === 1)).toBe(true);
      // The next run reads the collection again, whole, holding its parts until its answer is known:
      // the same answer as the whole one before, it stores no rows.
      const third = await extractOnce(w.pipelinePath, w.dataDir);
      expect(third.status).toBe('ok');
      expect(third.partitions[0]?.rows).toBe(0);
      expect(await rowsPerToken(w.dataDir)).toEqual(rows);
    } finally {
      await emulator.close();
    }
  });

  it('a collection read again for longer than ten flush periods goes on in committed parts, as a first reading', async () => {
    const emulator = await startEmulator();
    try {
      const { w, minted } = inParts(emulator);
      // Flush periods of a millisecond: every page is past the hold, so a reading killed at any
      // instant keeps what it read, and the unchanged answer is stored again.
      const pipeline = JSON.parse(readFileSync(w.pipelinePath, 'utf8'));
      writeFileSync(w.pipelinePath, JSON.stringify({ ...pipeline, flush: { rows: 30, seconds: 0.001 } }));
      expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
      const again = await extractOnce(w.pipelinePath, w.dataDir);
      expect(again.status).toBe('ok');
      expect(again.partitions[0]?.rows).toBe(minted());
      expect(again.partitions[0]?.commits).toBeGreaterThan(1);
      expect((await rowsPerToken(w.dataDir)).every((r) => r.n === 2)).toBe(true);
    } finally {
      await emulator.close();
    }
  });

  it('a collection larger than a flush, read again unchanged, stores no rows; changed, it stores the new answer whole', async () => {
    const emulator = await startEmulator();
    try {
      const { w, minted } = inParts(emulator);
      const first = await extractOnce(w.pipelinePath, w.dataDir);
      expect(first.status).toBe('ok');
      // Committed along the way (every three pages), as a first reading is.
      expect(first.partitions[0]?.rows).toBe(minted());
      const once = await rowsPerToken(w.dataDir);
      expect(once.every((r) => r.n === 1)).toBe(true);
      const again = await extractOnce(w.pipelinePath, w.dataDir);
      expect(again.status).toBe('ok');
      expect(again.partitions[0]?.rows).toBe(0);
      expect(await rowsPerToken(w.dataDir)).toEqual(once);
      // Tokens minted since: a new answer, stored whole at a new time.
      const before = minted();
      for (let day = 0; minted() === before && day < 60; day++) emulator.advance(86_400);
      expect(minted()).toBeGreaterThan(before);
      const changed = await extractOnce(w.pipelinePath, w.dataDir);
      expect(changed.status).toBe('ok');
      expect(changed.partitions[0]?.rows).toBe(minted());
      const after = await rowsPerToken(w.dataDir);
      expect(after.length).toBe(minted());
      expect(after.filter((r) => r.times === 2).length).toBe(before);
    } finally {
      await emulator.close();
    }
  });
});
