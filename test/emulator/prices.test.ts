import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { EvmChain } from '../../src/emulator/world/evm/index.ts';
import { fetchJson, startEmulator, walk } from '../helpers/emulator.ts';

// Issue 15.5: one price per asset, UTC day and currency, whichever endpoint quotes it: the rewards'
// historicalPrice, native balances (getNative, listErc721), ERC-20 token prices and ICM fee tokens.

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(() => emu.close());

const DAY = 86_400;
const now = () => Math.floor(emu.clock.now());
const dayOf = (t: number) => Math.floor(t / DAY);
const get = async (path: string) => {
  const res = await fetchJson(`${emu.url}${path}`);
  expect(res.status, path).toBe(200);
  return res.body;
};
const chain = (id: string) => emu.truth.evm.chain(id) as EvmChain;
/** The chain's blocks sealed on a UTC day (first and last), up to the head. */
const blocksOn = (c: EvmChain, day: number): [number, number] => {
  const { clock } = c.core;
  return [
    clock.firstBlockAtOrAfter(day * DAY),
    Math.min(clock.firstBlockAtOrAfter((day + 1) * DAY) - 1, c.head(now())),
  ];
};
/** The native token's price on a chain at a block, in a currency, as balances:getNative quotes it. */
const nativePrice = async (c: EvmChain, block: number, currency: string) =>
  (
    await get(
      `/v1/chains/${c.info.evmChainId}/addresses/${emu.truth.evm.whale(c.info.network)}/balances:getNative?blockNumber=${block}&currency=${currency}`,
    )
  ).nativeTokenBalance;

/** The rewards of a node with their price per UTC day, checking that a day has one price. */
async function rewardPrices(network: string, currency: string): Promise<Map<number, number>> {
  const node = emu.truth.primary(network as 'mainnet').nodes()[0]?.nodeId as string;
  const { items } = await walk(
    `${emu.url}/v1/networks/${network}/rewards?nodeIds=${node}&pageSize=100&currency=${currency}`,
    'historicalRewards',
  );
  // A reward is paid by its RewardValidatorTx: at its period's end, or a fee at its validator's end.
  const paidAt = new Map(
    emu.truth
      .primary(network as 'mainnet')
      .transactions('p', now())
      .map((tx) => [tx.hash, tx.time]),
  );
  const byDay = new Map<number, number>();
  for (const r of items) {
    const paid = paidAt.get(r.rewardTxHash);
    expect(paid, r.rewardTxHash).toBeDefined();
    const day = dayOf(paid as number);
    const { currencyCode, value } = r.reward.historicalPrice;
    expect(currencyCode).toBe(currency);
    expect(byDay.get(day) ?? value, `two ${currency} prices on day ${day}`).toBe(value);
    byDay.set(day, value);
  }
  return byDay;
}

describe('prices', () => {
  it('AVAX has one price per UTC day and currency in rewards (both networks) and C-Chain native balances', async () => {
    const cChain = chain('43114');
    let shared = 0;
    for (const currency of ['usd', 'eur', 'jpy']) {
      const mainnet = await rewardPrices('mainnet', currency);
      const fuji = await rewardPrices('fuji', currency);
      expect(mainnet.size).toBeGreaterThan(2);
      for (const [day, price] of mainnet) {
        // The same asset on the same day: Fuji's AVAX (rewards and its C-Chain) is priced as mainnet's.
        if (fuji.has(day)) {
          expect(fuji.get(day)).toBe(price);
          shared++;
        }
        expect(
          (await nativePrice(chain('43113'), blocksOn(chain('43113'), day)[0], currency)).price.value,
        ).toBe(price);
        // Any block of the day, first or last, is valued at the day's price.
        for (const block of blocksOn(cChain, day)) {
          const native = await nativePrice(cChain, block, currency);
          expect(native.symbol).toBe('AVAX');
          expect(native.price, `day ${day} block ${block}`).toEqual({ currencyCode: currency, value: price });
          // balanceValue is the balance (18 decimals) at that price, rounded half up to the millionth.
          const micros =
            (BigInt(native.balance) * BigInt(Math.round(price * 1e6)) + 5n * 10n ** 17n) / 10n ** 18n;
          expect(native.balanceValue).toEqual({ currencyCode: currency, value: Number(micros) / 1e6 });
        }
      }
    }
    expect(shared).toBeGreaterThan(0);
  });

  it('the ERC-721 listing quotes the native token at the head as getNative does', async () => {
    for (const c of emu.truth.evm.chains('mainnet')) {
      const whale = emu.truth.evm.whale('mainnet');
      const listed = (await get(`/v1/chains/${c.info.evmChainId}/addresses/${whale}/balances:listErc721`))
        .nativeTokenBalance;
      expect(listed.price).toEqual((await nativePrice(c, c.head(now()), 'usd')).price);
      expect(listed.balanceValue).toEqual((await nativePrice(c, c.head(now()), 'usd')).balanceValue);
    }
  });

  it('an ERC-20 transfer and an ICM fee quote a wrapped token at its base asset price of the day', async () => {
    const t = now();
    for (const c of emu.truth.evm.chains('mainnet')) {
      const symbol = `W${c.info.token.symbol}`;
      let checked = 0;
      for (const wallet of emu.truth.evm.wallets('mainnet').slice(0, 10)) {
        for (const day of [dayOf(t) - 3, dayOf(t) - 1]) {
          const [from, to] = blocksOn(c, day);
          const { items } = await walk(
            `${emu.url}/v1/chains/${c.info.evmChainId}/addresses/${wallet}/transactions:listErc20?startBlock=${from}&endBlock=${to + 1}&pageSize=100`,
            'transactions',
          );
          for (const transfer of items.filter((x) => x.erc20Token.symbol === symbol)) {
            const native = await nativePrice(c, Number(transfer.blockNumber), 'usd');
            expect(transfer.erc20Token.price).toEqual(native.price);
            checked++;
          }
        }
      }
      expect(checked, `${symbol} transfers on ${c.info.name}`).toBeGreaterThan(0);
    }
    const wallet = emu.truth.evm.wallets('mainnet')[0] as string;
    const { messages } = await get(`/v1/icm/addresses/${wallet}/messages?pageSize=20`);
    const sent = messages.filter((m: { sourceTransaction?: unknown }) => m.sourceTransaction !== undefined);
    expect(sent.length).toBeGreaterThan(0);
    for (const m of sent) {
      const source = chain(m.sourceEvmChainId);
      expect(m.rewardDetails.symbol).toBe(`W${source.info.token.symbol}`);
      const block = source.core.clock.firstBlockAtOrAfter(m.sourceTransaction.timestamp);
      expect(m.rewardDetails.price).toEqual((await nativePrice(source, block, 'usd')).price);
    }
  });

  it('keeps prices below the cent: a day moves a 0.12 USD token by fractions of a cent', async () => {
    const mainnet = await rewardPrices('mainnet', 'usd');
    const subCent = [...mainnet.values()].filter((v) => Math.round(v * 100) !== v * 100);
    expect(subCent.length).toBeGreaterThan(0);
    const harbor = emu.truth.evm.chains('mainnet').find((c) => c.info.token.symbol === 'HBR') as EvmChain;
    const prices = new Set<number>();
    for (let day = dayOf(now()) - 5; day <= dayOf(now()); day++)
      prices.add((await nativePrice(harbor, blocksOn(harbor, day)[0], 'usd')).price.value);
    expect(prices.size).toBeGreaterThan(1);
    for (const p of prices) expect(p).toBeLessThan(0.2);
  });
});
