import { createHash } from 'node:crypto';

// Avalanche's id encoding, shared by the emulator and the client so both read ids the same way.

const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE58_INDEX = new Map([...BASE58_ALPHABET].map((ch, i) => [ch, i]));

export function base58Encode(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = BASE58_ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}

export function base58Decode(text: string): Buffer | undefined {
  let n = 0n;
  for (const ch of text) {
    const v = BASE58_INDEX.get(ch);
    if (v === undefined) return undefined;
    n = n * 58n + BigInt(v);
  }
  const bytes: number[] = [];
  while (n > 0n) {
    bytes.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  for (const ch of text) {
    if (ch !== '1') break;
    bytes.unshift(0);
  }
  return Buffer.from(bytes);
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
