import { createHash } from 'node:crypto';

// Avalanche's id encoding, shared by the emulator and the client so both read ids the same way.

const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE58_INDEX = new Map([...BASE58_ALPHABET].map((ch, i) => [ch, i]));

// Note: base58 works on small-number digit arrays and joins once. BigInt division was the hot spot of
// world generation, and prepending to a string builds a rope of one node per character (about 1 KB per
// id) that lives as long as the id does.
export function base58Encode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i] as number;
    for (let j = 0; j < digits.length; j++) {
      carry += (digits[j] as number) << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  const chars: string[] = [];
  for (let i = 0; i < zeros; i++) chars.push('1');
  for (let i = digits.length - 1; i >= 0; i--) chars.push(BASE58_ALPHABET[digits[i] as number] as string);
  return chars.join('');
}

export function base58Decode(text: string): Buffer | undefined {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  const bytes: number[] = [];
  for (let i = zeros; i < text.length; i++) {
    const v = BASE58_INDEX.get(text[i] as string);
    if (v === undefined) return undefined;
    let carry = v;
    for (let j = 0; j < bytes.length; j++) {
      carry += (bytes[j] as number) * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  const out = Buffer.alloc(zeros + bytes.length);
  for (let i = 0; i < bytes.length; i++) out[zeros + i] = bytes[bytes.length - 1 - i] as number;
  return out;
}

/** cb58: base58 of the bytes followed by the last four bytes of their SHA-256. */
export function cb58Encode(bytes: Uint8Array): string {
  const checksum = createHash('sha256').update(bytes).digest().subarray(-4);
  return base58Encode(Buffer.concat([bytes, checksum]));
}

export function cb58Decode(text: string): Buffer | undefined {
  const raw = base58Decode(text);
  if (!raw || raw.length < 4) return undefined;
  const body = raw.subarray(0, -4);
  const checksum = createHash('sha256').update(body).digest().subarray(-4);
  return checksum.equals(raw.subarray(-4)) ? body : undefined;
}
