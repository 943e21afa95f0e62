import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { fetchJson, startEmulator, walk } from '../helpers/emulator.ts';

// At scale `large` the primary network of both networks is built on the first request, fast and small:
// its size is bounded (params.ts SIZES.large), so the EVM side's ten-million-record walks keep the
// emulator under 500 MB with the primary worlds beside them.

/** Both networks' primary worlds together; measured about 80 MB. */
const PRIMARY_HEAP_MB = 200;

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ scale: 'large' });
});
afterAll(() => emu.close());

const heapMb = () => {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed / 1e6;
};

describe('primary network at scale large', () => {
  it('answers the first P-Chain page of both networks correctly, with bounded memory', async () => {
    const before = heapMb();
    const now = Math.floor(emu.clock.now());
    for (const network of ['mainnet', 'fuji'] as const) {
      // The first page's latency is bench/emulator.ts's to show (side by side with small); here, correctness.
      const res = await fetchJson(
        `${emu.url}/v1/networks/${network}/blockchains/p-chain/transactions?pageSize=100`,
      );
      expect(res.status).toBe(200);
      const truth = emu.truth.primary(network);
      const count = truth.txCount('p', now);
      const newest = Array.from({ length: 100 }, (_, k) => truth.tx('p', count - 1 - k).hash);
      expect(res.body.transactions.map((t: any) => t.txHash)).toEqual(newest);
      // The history reaches back to genesis and forward to 'now'.
      expect(truth.tx('p', 0).time).toBeLessThan(emu.truth.genesis + 3600);
      expect(res.body.transactions[0].blockTimestamp).toBeGreaterThan(now - 86_400);
      // A page deep in the history, by time window, as fast as the first.
      const start = emu.truth.genesis + 100 * 86_400;
      const deep = await fetchJson(
        `${emu.url}/v1/networks/${network}/blockchains/p-chain/transactions?pageSize=10&sortOrder=asc&addresses=${truth.addresses()[0]}&startTimestamp=${start}&endTimestamp=${now}`,
      );
      expect(deep.status).toBe(200);
      expect(deep.body.transactions.length).toBe(10);
      for (const t of deep.body.transactions) expect(t.blockTimestamp).toBeGreaterThanOrEqual(start);
    }
    // Other listings of the same worlds, walked a little.
    const rewards = await walk(
      `${emu.url}/v1/networks/mainnet/rewards?nodeIds=${emu.truth.primary('mainnet').nodes()[0]?.nodeId}&pageSize=100`,
      'historicalRewards',
      { maxPages: 3 },
    );
    expect(rewards.items.length).toBeGreaterThan(100);
    const utxos = await fetchJson(
      `${emu.url}/v1/networks/fuji/blockchains/p-chain/utxos?sortBy=amount&pageSize=100`,
    );
    expect(utxos.body.utxos.length).toBe(100);
    const grown = heapMb() - before;
    expect(grown, 'heap MB taken by both primary worlds').toBeLessThan(PRIMARY_HEAP_MB);
    expect(process.memoryUsage().rss / 1e6).toBeLessThan(500);
  });
});
