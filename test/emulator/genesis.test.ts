import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoPipelineOf } from '../../src/emulator/demo-pipeline.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { checkGenesis, parseGenesis } from '../../src/emulator/world/genesis.ts';
import { fetchJson, startEmulator, TEST_EPOCH } from '../helpers/emulator.ts';

/**
 * An emulator restarted later serves the world of its first start when given that start's genesis:
 * the same records at the same times, as if its clock had run on. Without it, a restart on a later
 * UTC day began a history shifted by those days, and a cron user's lake held records the world no
 * longer had.
 */

const DAY = 86_400;
/** 23:45 UTC: the restart, two days and 30 minutes on, is three UTC days later. */
const FIRST_START = TEST_EPOCH + DAY - 15 * 60;
const RESTART = FIRST_START + 2 * DAY + 30 * 60;

/** Every listing a pipeline reads, for the demo's ids, first page of 100 (the emulator's own order). */
function listings(emu: Emulator): string[] {
  const p = demoPipelineOf(emu.truth, 'fuji', emu.url);
  const net = `${emu.url}/v1/networks/fuji`;
  const [address] = p.primary.addresses;
  const [nodeId] = p.primary.nodeIds;
  const [chainId] = p.evm.chains;
  const [evmAddress] = p.evm.addresses;
  return [
    `${net}/rewards?nodeIds=${nodeId}&pageSize=100`,
    `${net}/rewards?addresses=${address}&pageSize=100`,
    `${net}/delegators?nodeIds=${nodeId}&pageSize=100`,
    `${net}/blockchains/p-chain/transactions?addresses=${address}&pageSize=100`,
    `${net}/blockchains/p-chain/transactions:listStaking?addresses=${address}&pageSize=100`,
    `${net}/blockchains/p-chain/utxos?addresses=${address}&pageSize=100`,
    `${net}/blockchains/p-chain/nodes/${nodeId}/blocks?pageSize=100`,
    `${net}/blockchains/x-chain/vertices?pageSize=100`,
    `${emu.url}/v1/chains/${chainId}/addresses/${evmAddress}/transactions:listNative?pageSize=100`,
    `${emu.url}/v1/chains/${chainId}/blocks?pageSize=100`,
    `${emu.url}/v1/chains/${chainId}/transactions?pageSize=100`,
    `${emu.url}/v1/chains/${chainId}/addresses/${evmAddress}/transactions:listErc20?pageSize=100`,
    `${emu.url}/v1/icm/addresses/${evmAddress}/messages?network=fuji&pageSize=100`,
    `${emu.url}/v2/chains/${chainId}/metrics/txCount?timeInterval=day&pageSize=100`,
  ];
}

/** The answers, with the emulator's own URL and the (random) page tokens left out. */
async function answers(emu: Emulator): Promise<unknown[]> {
  const out = [];
  for (const url of listings(emu)) {
    const { status, body } = await fetchJson<Record<string, unknown>>(url);
    expect(status, url).toBe(200);
    const { nextPageToken: _, ...page } = body;
    out.push({ listing: url.slice(emu.url.length), page });
  }
  const rpc = await fetchJson(`${emu.url}/fuji/ext/bc/P`, {
    method: 'POST',
    body: { jsonrpc: '2.0', id: 1, method: 'platform.getCurrentValidators', params: {} },
  });
  out.push({ listing: 'platform.getCurrentValidators', rpc: rpc.body });
  return out;
}

describe('a world continued across restarts (--genesis)', () => {
  let runOn: Emulator;
  let restarted: Emulator;
  let restartedUnpinned: Emulator;

  beforeAll(async () => {
    runOn = await startEmulator({ clock: `fixed:${FIRST_START}` });
    runOn.advance(RESTART - FIRST_START);
    restarted = await startEmulator({ clock: `fixed:${RESTART}`, genesis: runOn.truth.genesis });
    restartedUnpinned = await startEmulator({ clock: `fixed:${RESTART}` });
  });
  afterAll(async () => {
    await Promise.all([runOn, restarted, restartedUnpinned].map((e) => e?.close()));
  });

  it('serves, after a restart two days on, what the first start serves at that time', async () => {
    expect(restarted.truth.genesis).toBe(runOn.truth.genesis);
    const expected = await answers(runOn);
    // A listing that came back empty would prove nothing about times.
    for (const a of expected) expect(JSON.stringify(a).length, JSON.stringify(a)).toBeGreaterThan(400);
    expect(await answers(restarted)).toEqual(expected);
  });

  it('without it, a restart on a later day begins a history shifted by those days', async () => {
    expect(restartedUnpinned.truth.genesis - runOn.truth.genesis).toBe(3 * DAY);
    expect(await answers(restartedUnpinned)).not.toEqual(await answers(runOn));
  });
});

describe('parseGenesis and checkGenesis', () => {
  it('takes a UTC date or the Unix seconds of a UTC midnight', () => {
    expect(parseGenesis('2026-10-03')).toBe(1_790_985_600);
    expect(parseGenesis('1790985600')).toBe(1_790_985_600);
    expect(parseGenesis(1_790_985_600)).toBe(1_790_985_600);
  });

  it.each([
    ['2026-02-30', /expected a UTC date \(YYYY-MM-DD\).*got "2026-02-30"/],
    ['03/10/2026', /expected a UTC date.*got "03\/10\/2026"/],
    ['1790985601', /1790985601 is not a UTC midnight/],
    ['', /got ""/],
  ])('refuses %j, naming --genesis and what it expects', (spec, message) => {
    expect(() => parseGenesis(spec)).toThrow(/^--genesis: /);
    expect(() => parseGenesis(spec)).toThrow(message);
  });

  it('refuses a world that begins after its clock’s day, and takes that very day', () => {
    const clockDay = 1_790_985_600;
    expect(() => checkGenesis(clockDay + DAY, clockDay + 3600)).toThrow(
      "--genesis: 2026-10-04 is after the clock's day (2026-10-03)",
    );
    expect(() => checkGenesis(clockDay, clockDay + 3600)).not.toThrow();
  });
});
