import { describe, expect, it } from 'vitest';
import type { HttpClient } from '../../src/extract/http.ts';
import { fetchJson, useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { queryLake, streamTable } from '../helpers/lake.ts';

/**
 * The Data API serves an EVM chain by its id alone, so a mainnet chain listed in a fuji pipeline would be
 * read and labelled fuji. Its partition fails on its first read, naming the chain and the fix; the
 * pipeline's own chains go on; a partition read before asks nothing more.
 */

const emulator = useEmulator();

/** One address's native balance on each chain: a partition per chain, read in one request. */
function oneAddress(p: Record<string, unknown>): string {
  p.streams = ['native_balances'];
  const evm = p.evm as { addresses: string[] };
  evm.addresses = evm.addresses.slice(0, 1);
  return evm.addresses[0] as string;
}

/** Counts the `GET /v1/chains` requests a run sends, whatever their query. */
function countingChainListings(counter: { listings: string[] }) {
  return (http: HttpClient): HttpClient => ({
    send: (request) => {
      const url = new URL(request.url);
      if (url.pathname === '/v1/chains') counter.listings.push(url.searchParams.get('network') ?? '');
      return http.send(request);
    },
    close: () => http.close(),
  });
}

/** The chains the emulator lists on a network. */
async function chainsOf(network: string) {
  const { body } = await fetchJson<{ chains: { chainId: string }[] }>(
    `${emulator.url}/v1/chains?network=${network}`,
  );
  return body.chains;
}

describe('an EVM chain of the other network in the pipeline', () => {
  it('fails its partitions with what to fix, reads the network’s own, and asks once per network', async () => {
    const fuji = (await chainsOf('fuji')).find((c) => c.chainId === '770012');
    const mainnet = (await chainsOf('mainnet')).filter((c) => c.chainId !== '43114');
    expect(fuji).toBeDefined();
    expect(mainnet.length).toBeGreaterThanOrEqual(2);
    const wrongChains = mainnet.slice(0, 2).map((c) => c.chainId);
    const chains = ['770012', ...wrongChains];
    let address = '';
    const w = demoWorkspace(emulator, (p) => {
      address = oneAddress(p);
      (p.evm as { chains: string[] }).chains = chains;
    });

    const counter = { listings: [] as string[] };
    const first = await extractOnce(w.pipelinePath, w.dataDir, {}, countingChainListings(counter));
    expect(first.status).toBe('partial');
    const byChain = new Map(first.partitions.map((p) => [p.partition.chain, p]));
    expect(byChain.get('770012')?.status).toBe('done');
    for (const wrong of wrongChains) {
      const failed = byChain.get(wrong);
      expect(failed?.status).toBe('failed');
      expect(failed?.requests).toBe(0);
      expect(failed?.error).toBe(
        `EVM chain ${wrong} is a mainnet chain, and the pipeline's network is fuji: its rows would be labelled fuji. ` +
          `Remove ${wrong} from evm.chains, or set "network" to mainnet (GET /v1/chains lists each network's chains) ` +
          `(stream native_balances, partition [["address","${address}"],["chain","${wrong}"],["network","fuji"]], GET /v1/chains?network=mainnet)`,
      );
    }
    // One listing of each network for the run, however many partitions asked.
    expect(counter.listings.sort()).toEqual(['fuji', 'mainnet']);
    const rows = await queryLake(
      `select chain, count(*)::int as n from ${streamTable(w.dataDir, 'native_balances')} group by chain`,
    );
    expect(rows).toEqual([{ chain: '770012', n: byChain.get('770012')?.rows }]);

    // The next run with the mistake mended: the chain read before is not looked up again.
    const mended = demoWorkspace(emulator, (p) => {
      oneAddress(p);
      (p.evm as { chains: string[] }).chains = ['770012'];
    });
    counter.listings.length = 0;
    const second = await extractOnce(mended.pipelinePath, w.dataDir, {}, countingChainListings(counter));
    expect(second.status).toBe('ok');
    expect(counter.listings).toEqual([]);
  });

  it('fails a metrics chain of the other network the same way, naming metrics.chains', async () => {
    const w = demoWorkspace(emulator, (p) => {
      p.streams = ['metrics'];
      p.metrics = { chains: ['43114'], metrics: ['txCount'], intervals: ['day'] };
    });
    const summary = await extractOnce(w.pipelinePath, w.dataDir);
    expect(summary.status).toBe('failed');
    expect(summary.partitions.map((p) => [p.requests, p.error?.split(':')[0]])).toEqual([
      [0, "EVM chain 43114 is a mainnet chain, and the pipeline's network is fuji"],
    ]);
    expect(summary.partitions[0]?.error).toContain(
      'Remove 43114 from metrics.chains, or set "network" to mainnet',
    );
  });

  it('lets every chain go on, unchecked and unretried, when the listing fails', async () => {
    const w = demoWorkspace(emulator, (p) => {
      oneAddress(p);
      (p.evm as { chains: string[] }).chains = ['770012', '770001'];
    });
    const counter = { listings: [] as string[] };
    const down = { send: async () => ({ status: 503, headers: {}, text: '{"message":"down"}' }) };
    const failingListing = (http: HttpClient): HttpClient => {
      const listing = countingChainListings(counter)({ ...down, close: () => http.close() });
      return {
        send: (request) =>
          new URL(request.url).pathname === '/v1/chains' ? listing.send(request) : http.send(request),
        close: () => http.close(),
      };
    };
    const summary = await extractOnce(w.pipelinePath, w.dataDir, {}, failingListing);
    expect(summary.status).toBe('ok');
    expect(summary.partitions.map((p) => [p.stream, p.partition.chain, p.status, p.retries]).sort()).toEqual([
      ['native_balances', '770001', 'done', 0],
      ['native_balances', '770012', 'done', 0],
    ]);
    // One attempt a network: the lookup is outside the retry policy.
    expect(counter.listings.sort()).toEqual(['fuji', 'mainnet']);
  });

  it('lets a chain neither network lists go on to the service’s own answer', async () => {
    const w = demoWorkspace(emulator, (p) => {
      oneAddress(p);
      (p.evm as { chains: string[] }).chains = ['99999'];
    });
    const summary = await extractOnce(w.pipelinePath, w.dataDir);
    expect(summary.status).toBe('failed');
    expect(summary.partitions[0]?.requests).toBe(1);
    expect(summary.partitions[0]?.error).toMatch(
      /^the service does not know this resource: .*chainId "99999"/,
    );
  });
});
