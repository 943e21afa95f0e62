/** The §4.0 `currency` values, with the fixed rates (per USD) the emulator converts prices at. */
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

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

export const priceIn = (usd: number, currency: Currency = 'usd'): Money => ({
  currencyCode: currency,
  value: round(usd * CURRENCY_RATES[currency], 6),
});

/** The value of `amount` smallest units of a token with `decimals` at `usd` a whole token. */
export function worthOf(amount: bigint, decimals: number, usd: number, currency: Currency = 'usd'): Money {
  const scale = 10n ** BigInt(Math.max(0, decimals - 6));
  const whole = Number(amount / scale) / 10 ** Math.min(decimals, 6);
  return { currencyCode: currency, value: round(whole * usd * CURRENCY_RATES[currency], 2) };
}
