/** Decimal128(38,0) as Arrow stores it: four little-endian uint32 words, two's complement. */

const DECIMAL_PATTERN = /^-?\d{1,38}$/;
const TWO_32 = 4294967296;
const MASK_32 = 0xffffffffn;

/** True when `text` is an integer that fits Decimal128(38,0). */
export function fitsDecimal38(text: string): boolean {
  return DECIMAL_PATTERN.test(text);
}

/**
 * Writes the integer `text` (a decimal string already checked by fitsDecimal38) at word offset `at`.
 * Up to 15 digits need no BigInt: the hot path for most amounts.
 */
export function writeDecimal38(words: Uint32Array, at: number, text: string): void {
  if (text.length <= 15 && text.charCodeAt(0) !== 45 /* '-' */) {
    const n = Number(text);
    words[at] = n % TWO_32;
    words[at + 1] = Math.floor(n / TWO_32);
    words[at + 2] = 0;
    words[at + 3] = 0;
    return;
  }
  let v = BigInt.asUintN(128, BigInt(text));
  for (let i = 0; i < 4; i++) {
    words[at + i] = Number(v & MASK_32);
    v >>= 32n;
  }
}

/** The inverse of writeDecimal38, for tests and debugging. */
export function readDecimal38(words: Uint32Array, at: number): string {
  let v = 0n;
  for (let i = 3; i >= 0; i--) v = (v << 32n) | BigInt(words[at + i] ?? 0);
  return BigInt.asIntN(128, v).toString();
}
