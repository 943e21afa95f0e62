import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { EvmChain } from '../../src/emulator/world/evm/index.ts';
import { fetchJson, startEmulator } from '../helpers/emulator.ts';

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ scale: 'large' });
});
afterAll(() => emu.close());

describe('scale large', () => {
  it('gives the whale ten million transactions and serves pages from anywhere in them', async () => {
    const chain = emu.truth.evm.chain('43114') as EvmChain;
    const whale = emu.truth.evm.whale('mainnet');
    const now = emu.clock.now();
    const head = chain.head(now);
    const party = chain.core.partyOf(whale);
    if (!party) throw new Error('whale unknown');
    expect(chain.activity.sentCount(party, chain.txCountBetween(0, head + 1))).toBeGreaterThanOrEqual(
      10_000_000,
    );

    const url = `${emu.url}/v1/chains/43114/addresses/${whale}/transactions:listNative?pageSize=100`;
    const first = await fetchJson(url);
    expect(first.body.transactions).toHaveLength(100);
    const middle = Math.floor(head / 2);
    const mid = await fetchJson(`${url}&startBlock=${middle - 1_000}&endBlock=${middle}`);
    expect(mid.body.transactions).toHaveLength(100);
    expect(Number(mid.body.transactions[0].blockNumber)).toBeLessThan(middle);
    let token = mid.body.nextPageToken as string;
    for (let i = 0; i < 50; i++) {
      const next = await fetchJson(
        `${url}&startBlock=${middle - 1_000}&endBlock=${middle}&pageToken=${token}`,
      );
      expect(next.status).toBe(200);
      token = next.body.nextPageToken;
      if (!token) break;
    }
    const erc20 = await fetchJson(
      `${emu.url}/v1/chains/43114/addresses/${whale}/transactions:listErc20?pageSize=100`,
    );
    expect(erc20.body.transactions).toHaveLength(100);
    expect(process.memoryUsage().rss).toBeLessThan(500 * 1024 * 1024);
  });

  it("answers the whale's native balance the first time, equal to the truth", async () => {
    const whale = emu.truth.evm.whale('mainnet');
    for (const id of ['43114', '770001']) {
      // How fast it answers is for bench/emulator.ts to show; here only that it answers rightly.
      const res = await fetchJson(`${emu.url}/v1/chains/${id}/addresses/${whale}/balances:getNative`);
      expect(res.status).toBe(200);
      const chain = emu.truth.evm.chain(id) as EvmChain;
      expect(BigInt(res.body.nativeTokenBalance.balance)).toBe(
        chain.nativeBalance(whale, chain.head(emu.clock.now())),
      );
    }
  });

  it('answers the closed-form metrics at once', async () => {
    const res = await fetchJson(`${emu.url}/v2/chains/total/metrics/cumulativeTxCount?pageSize=800`);
    expect(res.status).toBe(200);
    expect(res.body.results.length).toBe(731);
    expect(res.body.results[0].value).toBeGreaterThan(100_000_000);
  });
});
