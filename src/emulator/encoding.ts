import { cb58Decode, cb58Encode } from '../schemas/cb58.ts';

// Avalanche's text encodings: cb58 for ids (shared with the client), bech32 for P-/X-Chain addresses, hex for EVM.

export { base58Decode, base58Encode, cb58Decode, cb58Encode } from '../schemas/cb58.ts';

export const nodeIdOf = (bytes20: Uint8Array): string => `NodeID-${cb58Encode(bytes20)}`;

export function isNodeId(text: string): boolean {
  return text.startsWith('NodeID-') && cb58Decode(text.slice(7))?.length === 20;
}

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function bech32Polymod(values: number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= BECH32_GENERATORS[i] as number;
  }
  return chk;
}

function hrpExpand(hrp: string): number[] {
  const codes = [...hrp].map((c) => c.charCodeAt(0));
  return [...codes.map((c) => c >> 5), 0, ...codes.map((c) => c & 31)];
}

function convertBits(
  data: Uint8Array | number[],
  from: number,
  to: number,
  pad: boolean,
): number[] | undefined {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const maxv = (1 << to) - 1;
  for (const value of data) {
    acc = (acc << from) | value;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >> bits) & maxv);
    }
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & maxv);
  } else if (bits >= from || ((acc << (to - bits)) & maxv) !== 0) {
    return undefined;
  }
  return out;
}

export function bech32Encode(hrp: string, bytes: Uint8Array): string {
  const data = convertBits(bytes, 8, 5, true) ?? [];
  const polymod = bech32Polymod([...hrpExpand(hrp), ...data, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = Array.from({ length: 6 }, (_, i) => (polymod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...data, ...checksum].map((d) => BECH32_CHARSET[d]).join('')}`;
}

export function bech32Decode(text: string): { hrp: string; bytes: Buffer } | undefined {
  const lower = text.toLowerCase();
  if (lower !== text && text.toUpperCase() !== text) return undefined;
  const sep = lower.lastIndexOf('1');
  if (sep < 1 || sep + 7 > lower.length) return undefined;
  const hrp = lower.slice(0, sep);
  const data: number[] = [];
  for (const ch of lower.slice(sep + 1)) {
    const v = BECH32_CHARSET.indexOf(ch);
    if (v < 0) return undefined;
    data.push(v);
  }
  if (bech32Polymod([...hrpExpand(hrp), ...data]) !== 1) return undefined;
  const bytes = convertBits(data.slice(0, -6), 5, 8, false);
  return bytes ? { hrp, bytes: Buffer.from(bytes) } : undefined;
}

/** The human-readable part of P-/X-Chain addresses per network. */
export const ADDRESS_HRP = { mainnet: 'avax', fuji: 'fuji' } as const;

/** `avax1…` / `fuji1…` from 20 address bytes (the form the Data API returns, without a chain prefix). */
export const bech32AddressOf = (network: 'mainnet' | 'fuji', bytes20: Uint8Array): string =>
  bech32Encode(ADDRESS_HRP[network], bytes20);

/**
 * Parses a P-/X-Chain address as the Data API accepts it: optional `P-`/`X-`/`C-` prefix, then bech32
 * with the network's (or either network's) prefix. Returns the bare bech32 form, or undefined.
 */
export function normalizePrimaryAddress(text: string, network?: 'mainnet' | 'fuji'): string | undefined {
  const bare = /^[PXC]-/.test(text) ? text.slice(2) : text;
  const decoded = bech32Decode(bare);
  if (!decoded || decoded.bytes.length !== 20) return undefined;
  if (network ? decoded.hrp !== ADDRESS_HRP[network] : !['avax', 'fuji'].includes(decoded.hrp))
    return undefined;
  return bare.toLowerCase();
}

export const isEvmAddress = (text: string): boolean => /^0x[0-9a-fA-F]{40}$/.test(text);
export const evmAddressOf = (bytes20: Uint8Array): string => `0x${Buffer.from(bytes20).toString('hex')}`;
export const hex0x = (bytes: Uint8Array): string => `0x${Buffer.from(bytes).toString('hex')}`;
