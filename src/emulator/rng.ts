import { createHash } from 'node:crypto';

/**
 * A deterministic random stream. Every fact of the emulated world is drawn from one of these,
 * keyed by what the fact is about, so any record can be generated on its own, in any order,
 * and the same seed always gives the same bytes.
 */
export interface Rng {
  /** Uniform 32-bit unsigned integer. */
  u32(): number;
  /** Uniform in [0, 1). */
  float(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** Uniform bigint in [min, max], both inclusive (for amounts beyond 2^53). */
  bigint(min: bigint, max: bigint): bigint;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  bytes(length: number): Buffer;
  /** `length` random bytes as lowercase hex, without a prefix. */
  hex(length: number): string;
}

export type KeyPart = string | number | bigint | boolean;

/** Seeds a stream from the SHA-256 of its key parts (the world seed is normally the first part). */
export function rng(...key: KeyPart[]): Rng {
  const digest = createHash('sha256').update(key.join('\u001f')).digest();
  return sfc32(
    digest.readUInt32LE(0),
    digest.readUInt32LE(4),
    digest.readUInt32LE(8),
    digest.readUInt32LE(12),
  );
}

/** 32 bytes that depend only on the key: ids, hashes and keys of the world. */
export function digest(...key: KeyPart[]): Buffer {
  return createHash('sha256').update(key.join('\u001f')).digest();
}

/**
 * A fast 32-bit hash of a key for hot loops that only need a number (which address a transfer goes to),
 * where SHA-256 per record would dominate a ten-million-record walk.
 */
export function hash32(seed: number, a: number, b = 0, c = 0): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b);
  for (const v of [a, b, c]) {
    let k = Math.imul(v | 0, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
    // Fold the high part so numbers above 2^32 (block numbers at large scale) still mix in.
    h ^= Math.floor(v / 0x1_0000_0000);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** `hash32` scaled to [0, 1). */
export function unit(seed: number, a: number, b = 0, c = 0): number {
  return hash32(seed, a, b, c) / 0x1_0000_0000;
}

function sfc32(a0: number, b0: number, c0: number, d0: number): Rng {
  let a = a0 | 0;
  let b = b0 | 0;
  let c = c0 | 0;
  let d = d0 | 0;
  const u32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) u32();
  const float = () => u32() / 0x1_0000_0000;
  return {
    u32,
    float,
    int: (min, max) => min + Math.floor(float() * (max - min + 1)),
    bigint: (min, max) => {
      const span = max - min + 1n;
      let r = 0n;
      for (let i = 0; i < 4; i++) r = (r << 32n) | BigInt(u32());
      return min + (r % span);
    },
    chance: (p) => float() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('rng.pick from an empty list');
      return items[Math.floor(float() * items.length)] as (typeof items)[number];
    },
    bytes: (length) => {
      const out = Buffer.alloc(length);
      for (let i = 0; i < length; i += 4) {
        const v = u32();
        for (let j = 0; j < 4 && i + j < length; j++) out[i + j] = (v >>> (8 * j)) & 0xff;
      }
      return out;
    },
    hex(length) {
      return this.bytes(length).toString('hex');
    },
  };
}
