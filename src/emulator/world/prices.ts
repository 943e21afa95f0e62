import { rng } from '../rng.ts';

/**
 * Prices of the world: one price per (asset, UTC day, currency), read by every answer that quotes one
 * (rewards' `historicalPrice`, native balances' `price` and `balanceValue`, ERC-20 token prices, ICM
 * fee tokens), so the same asset on the same day costs the same everywhere.
 */

/** The §4.0 `currency` values, with the fixed rates (per USD) prices are converted at. */
export const CURRENCY_RATES = {
  usd: 1,
  eur: 0.92,
  aud: 1.52,
  cad: 1.36,
  chf: 0.88,
  clp: 940,
  cny: 7.2,
  czk: 23.1,
  dkk: 6.87,
  gbp: 0.79,
  hkd: 7.8,
  huf: 362,
  jpy: 151,
  nzd: 1.66,
} as const;

export type Currency = keyof typeof CURRENCY_RATES;
export const CURRENCIES = Object.keys(CURRENCY_RATES) as Currency[];

/** The OpenAPI `Money`: a currency code and a plain number. */
export interface Money {
  currencyCode: Currency;
  value: number;
}

/** An asset with a market price, by its symbol: native tokens and the ERC-20s (a wrapped token is its base). */
export type PricedAsset = 'AVAX' | 'LKV' | 'HBR' | 'LAKE' | 'USDC';

/** Each asset's mean USD price; a day's price is within ±30 % of it. Stablecoins hold theirs. */
const MEAN_USD: Record<PricedAsset, number> = { AVAX: 24.5, LKV: 0.85, HBR: 0.12, LAKE: 0.42, USDC: 1 };
const STABLE = new Set<PricedAsset>(['USDC']);
const DAY = 86_400;
/** Prices are kept to the millionth (sub-cent: a 0.12 USD token moves by fractions of a cent). */
const DIGITS = 6;

const round = (x: number) => Math.round(x * 10 ** DIGITS) / 10 ** DIGITS;

/** USD prices by seed, asset and day, drawn once (a listing asks for the same day many times). */
const usdCache = new Map<string, number>();

/** The USD price of `asset` on the UTC day holding `t`: independent of network, endpoint and time of day. */
function usdOn(seed: number, asset: PricedAsset, t: number): number {
  const day = Math.floor(t / DAY);
  const key = `${seed}:${asset}:${day}`;
  let usd = usdCache.get(key);
  if (usd === undefined) {
    const swing = STABLE.has(asset) ? 0 : rng(seed, 'price', asset, day).float() * 0.6 - 0.3;
    usd = round(MEAN_USD[asset] * (1 + swing));
    usdCache.set(key, usd);
  }
  return usd;
}

/** The price of one whole `asset` in `currency` on the UTC day holding `t`: the one price function. */
export function priceOn(seed: number, asset: PricedAsset, t: number, currency: Currency = 'usd'): Money {
  return { currencyCode: currency, value: round(usdOn(seed, asset, t) * CURRENCY_RATES[currency]) };
}

/** The value of `amount` smallest units of a token with `decimals` at `price` a whole token, exact to DIGITS. */
export function worthOf(amount: bigint, decimals: number, price: Money): Money {
  const unit = 10n ** BigInt(decimals);
  const micros = (amount * BigInt(Math.round(price.value * 10 ** DIGITS)) + unit / 2n) / unit;
  return { currencyCode: price.currencyCode, value: Number(micros) / 10 ** DIGITS };
}
