import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { EvmTransactionRecord } from '../../src/emulator/world/evm/chain.ts';
import { fetchJson, startEmulator, TEST_EPOCH, walk } from '../helpers/emulator.ts';

const DAY = 86_400;
let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(() => emu.close());

const metric = (chain: string, name: string, query = '') =>
  fetchJson(`${emu.url}/v2/chains/${chain}/metrics/${name}?pageSize=2160${query}`);
const at = (results: { timestamp: number; value: number }[], t: number) =>
  results.find((r) => r.timestamp === t)?.value;

describe('metrics are computed from the same transactions the Data API lists', () => {
  it("yesterday's txCount, gasUsed, feesPaid and activeSenders equal the listed transactions", async () => {
    const day = TEST_EPOCH - DAY;
    const txs: EvmTransactionRecord[] = [];
    let token: string | undefined;
    do {
      const res = await fetchJson(
        `${emu.url}/v1/chains/770001/transactions?pageSize=100${token ? `&pageToken=${token}` : ''}`,
      );
      txs.push(...res.body.transactions);
      token = res.body.nextPageToken;
    } while (token && (txs.at(-1) as { blockTimestamp: number }).blockTimestamp >= day);
    const ofDay = txs.filter((t) => t.blockTimestamp >= day && t.blockTimestamp < day + DAY);
    expect(ofDay.length).toBeGreaterThan(100);
    const value = async (name: string) => at((await metric('770001', name)).body.results, day);
    expect(await value('txCount')).toBe(ofDay.length);
    expect(await value('gasUsed')).toBe(ofDay.reduce((a, t) => a + Number(t.gasUsed), 0));
    expect(await value('feesPaid')).toBe(
      Number(ofDay.reduce((a, t) => a + BigInt(t.gasUsed) * BigInt(t.gasPrice), 0n)),
    );
    expect(await value('activeSenders')).toBe(new Set(ofDay.map((t) => t.from.address)).size);
    const parties = new Set(ofDay.flatMap((t) => [t.from.address, t.to.address]));
    expect(await value('activeAddresses')).toBeGreaterThanOrEqual(parties.size);
    expect(await value('contracts')).toBe(
      ofDay.filter((t) => t.method.callType === 'CONTRACT_CREATION').length,
    );
    const maxPrice = Math.max(...ofDay.map((t) => Number(t.gasPrice)));
    expect(await value('maxGasPrice')).toBe(maxPrice);
    expect(await value('avgTps')).toBeCloseTo(ofDay.length / DAY, 12);
  });

  it('cumulative metrics accumulate their daily ones; total sums the networks', async () => {
    const daily = (await metric('43114', 'txCount')).body.results;
    const cumulative = (await metric('43114', 'cumulativeTxCount')).body.results;
    expect(cumulative).toHaveLength(daily.length);
    for (let i = 0; i + 1 < daily.length; i++)
      expect(cumulative[i].value - cumulative[i + 1].value).toBe(daily[i].value);
    expect(cumulative.at(-1).value).toBe(daily.at(-1).value);
    const chain = emu.truth.evm.chain('43114');
    const now = emu.clock.now();
    expect(cumulative[0].value).toBe(chain?.txCountBetween(0, chain.head(now) + 1));
    const contracts = (await metric('43114', 'contracts')).body.results;
    const cumContracts = (await metric('43114', 'cumulativeContracts')).body.results;
    expect(cumContracts[0].value).toBe(contracts.reduce((a: number, r: { value: number }) => a + r.value, 0));

    const [total, mainnet, testnet] = await Promise.all(
      ['total', 'mainnet', 'testnet'].map((c) => metric(c, 'txCount')),
    );
    const sums = mainnet?.body.results.map(
      (r: { value: number }, i: number) => r.value + testnet?.body.results[i].value,
    );
    expect(total?.body.results.map((r: { value: number }) => r.value)).toEqual(sums);
  });

  it("an L1's first day counts from its creation: no transactions before, the day equals its blocks", async () => {
    const chain = emu.truth.evm.chain('770001');
    if (!chain) throw new Error('no L1');
    const genesis = emu.truth.genesis;
    const created = genesis + chain.info.createdAfterGenesis;
    const hours = (
      await metric(
        '770001',
        'txCount',
        `&timeInterval=hour&startTimestamp=${genesis}&endTimestamp=${genesis + DAY - 1}`,
      )
    ).body.results as { timestamp: number; value: number }[];
    expect(hours).toHaveLength(24);
    for (const h of hours) {
      if (h.timestamp < created) expect(h.value).toBe(0);
      else expect(h.value).toBeGreaterThan(0);
    }
    const day0 = at((await metric('770001', 'txCount')).body.results, genesis);
    let blocks = 0;
    for (let b = 0; chain.block(b).blockTimestamp < genesis + DAY; b++) blocks += chain.block(b).txCount;
    expect(day0).toBe(blocks);
    expect(hours.reduce((a, h) => a + h.value, 0)).toBe(day0);
    // The days after line up with UTC midnight like every other chain's.
    const day1 = chain.dayStats(1, TEST_EPOCH);
    expect(day1.start).toBe(genesis + DAY);
    expect(chain.block(day1.firstBlock).blockTimestamp).toBe(genesis + DAY);
  });

  it('hours add up to their day', async () => {
    const day = TEST_EPOCH - 3 * DAY;
    for (const name of ['txCount', 'gasUsed']) {
      const hours = (
        await metric('43114', name, `&timeInterval=hour&startTimestamp=${day}&endTimestamp=${day + DAY - 1}`)
      ).body.results;
      expect(hours).toHaveLength(24);
      expect(hours.every((h: { timestamp: number }) => h.timestamp % 3600 === 0)).toBe(true);
      const dayValue = at((await metric('43114', name)).body.results, day);
      expect(hours.reduce((a: number, h: { value: number }) => a + h.value, 0)).toBe(dayValue);
    }
  });
});

describe('intervals, ranges and paging', () => {
  it('aligns weeks to Monday and months to the first, newest first', async () => {
    const weeks = (await metric('43114', 'txCount', '&timeInterval=week')).body.results;
    expect(weeks.length).toBeGreaterThanOrEqual(5);
    for (const w of weeks) expect((Math.floor(w.timestamp / DAY) + 3) % 7).toBe(0);
    expect(
      weeks.every((w: { timestamp: number }, i: number) => i === 0 || weeks[i - 1].timestamp > w.timestamp),
    ).toBe(true);
    const months = (await metric('43114', 'activeAddresses', '&timeInterval=month')).body.results;
    expect(months.length).toBeGreaterThanOrEqual(2);
    for (const m of months) {
      const d = new Date(m.timestamp * 1000);
      expect([d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()]).toEqual([1, 0, 0]);
    }
    const days = (await metric('43114', 'txCount')).body.results;
    const weekTotal = weeks.reduce((a: number, w: { value: number }) => a + w.value, 0);
    expect(weekTotal).toBe(days.reduce((a: number, d: { value: number }) => a + d.value, 0));
  });

  it('rejects other intervals for the day-only metrics, naming timeInterval', async () => {
    for (const [name, interval] of [
      ['cumulativeTxCount', 'hour'],
      ['maxTps', 'week'],
      ['avgGasPrice', 'month'],
      ['contracts', 'hour'],
      ['deployers', 'week'],
    ]) {
      const res = await metric('43114', name as string, `&timeInterval=${interval}`);
      expect(res.status).toBe(400);
      expect(String(res.body.message)).toContain('timeInterval');
    }
    expect((await metric('43114', 'txCount', '&timeInterval=hour')).status).toBe(200);
    expect((await metric('43114', 'nope')).status).toBe(400);
    expect((await metric('1', 'txCount')).status).toBe(404);
    expect((await fetchJson(`${emu.url}/v2/chains/43114/metrics/txCount?pageSize=2161`)).status).toBe(400);
  });

  it('pages through a series once each, within startTimestamp and endTimestamp', async () => {
    const start = TEST_EPOCH - 20 * DAY;
    const end = TEST_EPOCH - 5 * DAY;
    const all = (await metric('770002', 'activeSenders', `&startTimestamp=${start}&endTimestamp=${end}`)).body
      .results;
    expect(all.map((r: { timestamp: number }) => r.timestamp)).toEqual(
      Array.from({ length: 16 }, (_, i) => end - i * DAY),
    );
    const paged = await walk(
      `${emu.url}/v2/chains/770002/metrics/activeSenders?pageSize=3&startTimestamp=${start}&endTimestamp=${end}`,
      'results',
    );
    expect(paged.items).toEqual(all);
  });

  it('updates the latest point as the clock moves', async () => {
    const before = (await metric('43114', 'txCount')).body.results[0];
    emu.advance(4 * 3600);
    const after = (await metric('43114', 'txCount')).body.results[0];
    expect(after.timestamp).toBe(before.timestamp);
    expect(after.value).toBeGreaterThan(before.value);
    const tps = await fetchJson(`${emu.url}/v1/avg_tps/43114`);
    expect(tps.body.status).toBe(200);
    expect(tps.body.lastRun).toBe(Math.floor(emu.clock.now() / 600) * 600);
    expect(tps.body.results[0].timestamp).toBe(before.timestamp);
  });
});
