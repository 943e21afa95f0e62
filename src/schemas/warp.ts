import { cb58Encode } from './cb58.ts';

// The Warp message codec (pchain-rpc-and-warp.md): avalanchego's linear codec, version 0, big-endian
// integers, u32-length-prefixed byte slices. One module for the emulator (which signs) and avalake
// (which decodes and verifies), so both read the same bytes the same way.

/** codec version u16 + networkID u32 + sourceChainID [32]byte + payload length u32. */
export const UNSIGNED_HEADER_BYTES = 2 + 4 + 32 + 4;
export const BLS_SIGNATURE_BYTES = 96;
/** BitSetSignature, the only signature type avalanchego registers. */
export const BITSET_SIGNATURE_TYPE_ID = 0;

/** The bytes validators sign. */
export interface UnsignedWarpMessage {
  networkId: number;
  /** cb58 form of the 32 source-chain bytes. */
  sourceChainId: string;
  sourceChainIdBytes: Buffer;
  payload: Buffer;
  /** The whole unsigned message: exactly what is signed. */
  bytes: Buffer;
}

export interface SignedWarpMessage {
  unsigned: UnsignedWarpMessage;
  /** The signer bitset as serialized: big.Int.Bytes(), bit i = canonical validator i. */
  signers: Buffer;
  /** Compressed BLS12-381 G2 aggregate signature. */
  signature: Buffer;
  bytes: Buffer;
}

/** Parses an unsigned Warp message; returns a reason instead of throwing, for error messages. */
export function parseUnsignedWarpMessage(bytes: Buffer): UnsignedWarpMessage | string {
  const header = readHeader(bytes);
  if (typeof header === 'string') return header;
  if (header.end !== bytes.length)
    return `declares a ${header.payload.length}-byte payload but carries ${bytes.length - UNSIGNED_HEADER_BYTES} bytes after the header`;
  return header.message;
}

export function encodeUnsignedWarpMessage(m: {
  networkId: number;
  sourceChainIdBytes: Uint8Array;
  payload: Uint8Array;
}): Buffer {
  if (m.sourceChainIdBytes.length !== 32) throw new Error('sourceChainIdBytes must be 32 bytes');
  const head = Buffer.alloc(UNSIGNED_HEADER_BYTES);
  head.writeUInt32BE(m.networkId, 2);
  Buffer.from(m.sourceChainIdBytes).copy(head, 6);
  head.writeUInt32BE(m.payload.length, 38);
  return Buffer.concat([head, m.payload]);
}

/** Parses a signed Warp message: the unsigned part, then the BitSetSignature. */
export function parseSignedWarpMessage(bytes: Buffer): SignedWarpMessage | string {
  const header = readHeader(bytes);
  if (typeof header === 'string') return header;
  let at = header.end;
  if (bytes.length < at + 8) return `ends at byte ${bytes.length}, inside the signature header at byte ${at}`;
  const typeId = bytes.readUInt32BE(at);
  if (typeId !== BITSET_SIGNATURE_TYPE_ID)
    return `has signature type id ${typeId}; only ${BITSET_SIGNATURE_TYPE_ID} (BitSetSignature) exists`;
  const signersLength = bytes.readUInt32BE(at + 4);
  at += 8;
  const expected = at + signersLength + BLS_SIGNATURE_BYTES;
  if (bytes.length !== expected)
    return `is ${bytes.length} bytes, but a ${signersLength}-byte signer bitset and a ${BLS_SIGNATURE_BYTES}-byte signature make ${expected}`;
  return {
    unsigned: header.message,
    signers: bytes.subarray(at, at + signersLength),
    signature: bytes.subarray(at + signersLength),
    bytes,
  };
}

export function encodeSignedWarpMessage(unsigned: Buffer, signers: Buffer, signature: Uint8Array): Buffer {
  if (signature.length !== BLS_SIGNATURE_BYTES) throw new Error('signature must be 96 bytes');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(BITSET_SIGNATURE_TYPE_ID, 0);
  head.writeUInt32BE(signers.length, 4);
  return Buffer.concat([unsigned, head, signers, signature]);
}

function readHeader(bytes: Buffer): { message: UnsignedWarpMessage; payload: Buffer; end: number } | string {
  if (bytes.length < UNSIGNED_HEADER_BYTES)
    return `is ${bytes.length} bytes, shorter than the ${UNSIGNED_HEADER_BYTES}-byte Warp message header`;
  const codecVersion = bytes.readUInt16BE(0);
  if (codecVersion !== 0) return `has codec version ${codecVersion}; only version 0 exists`;
  const payloadLength = bytes.readUInt32BE(38);
  const end = UNSIGNED_HEADER_BYTES + payloadLength;
  if (end > bytes.length)
    return `declares a ${payloadLength}-byte payload but carries ${bytes.length - UNSIGNED_HEADER_BYTES} bytes after the header`;
  const payload = bytes.subarray(UNSIGNED_HEADER_BYTES, end);
  const sourceChainIdBytes = bytes.subarray(6, 38);
  return {
    message: {
      networkId: bytes.readUInt32BE(2),
      sourceChainId: cb58Encode(sourceChainIdBytes),
      sourceChainIdBytes,
      payload,
      bytes: bytes.subarray(0, end),
    },
    payload,
    end,
  };
}

/**
 * The ABI-encoded `bytes` of a SendWarpMessage log (32-byte offset = 0x20, 32-byte length, data padded to
 * 32): the inner bytes, or undefined if `data` is not in that form. icm-services tries this form first.
 */
export function unwrapSendWarpMessageLog(data: Buffer): Buffer | undefined {
  if (data.length < 64 || data.length % 32 !== 0) return undefined;
  const word = (offset: number) => BigInt(`0x${data.subarray(offset, offset + 32).toString('hex')}`);
  if (word(0) !== 32n) return undefined;
  const length = word(32);
  if (length > BigInt(data.length - 64)) return undefined;
  const n = Number(length);
  if (64 + Math.ceil(n / 32) * 32 !== data.length) return undefined;
  const padding = data.subarray(64 + n);
  if (padding.some((b) => b !== 0)) return undefined;
  return data.subarray(64, 64 + n);
}

/** An unsigned message given raw or as SendWarpMessage log data, as the aggregation API accepts it. */
export function parseWarpMessageInput(bytes: Buffer): UnsignedWarpMessage | string {
  const inner = unwrapSendWarpMessageLog(bytes);
  if (inner) {
    const parsed = parseUnsignedWarpMessage(inner);
    if (typeof parsed !== 'string') return parsed;
  }
  return parseUnsignedWarpMessage(bytes);
}

/** Hex with an optional 0x prefix; undefined if not hex. */
export function decodeHex(text: string): Buffer | undefined {
  const body = text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text;
  if (body.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(body)) return undefined;
  return Buffer.from(body, 'hex');
}

// ---- signer bitset: big.Int.Bytes() of a set of canonical indices ----

/** The bitset bytes of `indices`: big-endian, no leading zero bytes (empty for no signers). */
export function encodeBitset(indices: Iterable<number>): Buffer {
  let n = 0n;
  for (const i of indices) n |= 1n << BigInt(i);
  if (n === 0n) return Buffer.alloc(0);
  const hex = n.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
}

/** The indices set in `bits`, ascending. */
export function decodeBitset(bits: Uint8Array): number[] {
  const out: number[] = [];
  for (let byte = bits.length - 1, base = 0; byte >= 0; byte--, base += 8) {
    const b = bits[byte] as number;
    for (let k = 0; k < 8; k++) if (b & (1 << k)) out.push(base + k);
  }
  return out;
}

/** Why avalanchego would reject this bitset for a set of `validatorCount`, or undefined if it would not. */
export function bitsetProblem(bits: Uint8Array, validatorCount: number): string | undefined {
  if (bits.length > 0 && bits[0] === 0)
    return 'the signer bitset has a leading zero byte (it must be big.Int.Bytes(): minimal, big-endian)';
  const indices = decodeBitset(bits);
  const outside = indices.filter((i) => i >= validatorCount);
  if (outside.length > 0)
    return `the signer bitset sets bit ${outside.join(', ')}, but the canonical validator set has only ${validatorCount} validators (bits 0..${validatorCount - 1})`;
  if (indices.length === 0) return 'the signer bitset is empty: nobody signed';
  return undefined;
}

// ---- payloads (avalanchego vms/platformvm/warp/payload) ----

export type WarpPayload =
  | { type: 'AddressedCall'; sourceAddress: Buffer; payload: Buffer }
  | { type: 'Hash'; hash: Buffer }
  | { type: 'unknown'; reason: string };

export function decodeWarpPayload(bytes: Buffer): WarpPayload {
  if (bytes.length < 6)
    return { type: 'unknown', reason: `${bytes.length} bytes, shorter than a payload header` };
  if (bytes.readUInt16BE(0) !== 0) return { type: 'unknown', reason: 'codec version is not 0' };
  const typeId = bytes.readUInt32BE(2);
  if (typeId === 0 && bytes.length === 6 + 32) return { type: 'Hash', hash: bytes.subarray(6) };
  if (typeId === 1 && bytes.length >= 10) {
    const addressLength = bytes.readUInt32BE(6);
    const at = 10 + addressLength;
    if (at + 4 <= bytes.length && at + 4 + bytes.readUInt32BE(at) === bytes.length)
      return {
        type: 'AddressedCall',
        sourceAddress: bytes.subarray(10, at),
        payload: bytes.subarray(at + 4),
      };
  }
  return { type: 'unknown', reason: `type id ${typeId} with ${bytes.length} bytes is not a known payload` };
}
