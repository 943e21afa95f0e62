/** Exact text for the numbers the warehouse gives as strings; Number() is only ever for plotting. */

const NAVAX_PER_AVAX_DIGITS = 9;

/** Thousands separators on an exact decimal string: `1234567.5` → `1,234,567.5`. */
export function groupDigits(text: string): string {
  const negative = text.startsWith('-');
  const unsigned = negative ? text.slice(1) : text;
  const [whole = '0', fraction] = unsigned.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** An exact nAVAX integer string as AVAX, exact, trailing zeros dropped: `1500000000` → `1.5`. */
export function navaxToAvax(navax: string): string {
  const negative = navax.startsWith('-');
  const digits = (negative ? navax.slice(1) : navax).padStart(NAVAX_PER_AVAX_DIGITS + 1, '0');
  const whole = digits.slice(0, -NAVAX_PER_AVAX_DIGITS);
  const fraction = digits.slice(-NAVAX_PER_AVAX_DIGITS).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/** nAVAX as a plotted AVAX value (may lose precision: plotting only). */
export const avaxNumber = (navax: unknown): number => Number(navax) / 10 ** NAVAX_PER_AVAX_DIGITS;

/** A value for a table cell: exact text, null as an em dash. */
export const cell = (value: unknown): string =>
  value === null || value === undefined
    ? '—'
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);

/** A short axis label: 1200 → 1.2k, 3400000 → 3.4M. */
export function compact(value: number): string {
  const abs = Math.abs(value);
  for (const [limit, suffix] of [
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ] as const)
    if (abs >= limit) return `${trimZeros((value / limit).toFixed(1))}${suffix}`;
  return trimZeros(abs < 10 && abs !== Math.round(abs) ? value.toFixed(2) : value.toFixed(0));
}

const trimZeros = (text: string): string => (text.includes('.') ? text.replace(/\.?0+$/, '') : text);

/** A duration for a reader: 42 s, 3.5 min, 2.1 h. */
export function duration(seconds: number): string {
  if (seconds < 120) return `${trimZeros(seconds.toFixed(1))} s`;
  if (seconds < 7200) return `${trimZeros((seconds / 60).toFixed(1))} min`;
  return `${trimZeros((seconds / 3600).toFixed(1))} h`;
}

/** Escapes text for HTML and SVG content and attributes. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
