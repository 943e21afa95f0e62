import { cb58Encode } from './encoding.ts';

/**
 * The Warp unsigned message as avalanchego's linear codec lays it out (pchain-rpc-and-warp.md):
 * codec version u16 = 0, networkID u32, sourceChainID [32]byte, payload (u32 length + bytes).
 * All integers big-endian.
 */
export interface UnsignedWarpMessage {
  networkId: number;
  /** cb58 form of the 32 source-chain bytes. */
  sourceChainId: string;
  payload: Buffer;
  /** The exact bytes that validators sign. */
  bytes: Buffer;
}

export const UNSIGNED_HEADER_BYTES = 2 + 4 + 32 + 4;

/** Parses an unsigned Warp message; returns a reason instead of throwing, for the 400 message. */
export function parseUnsignedWarpMessage(bytes: Buffer): UnsignedWarpMessage | string {
  if (bytes.length < UNSIGNED_HEADER_BYTES)
    return `is ${bytes.length} bytes, shorter than the ${UNSIGNED_HEADER_BYTES}-byte Warp message header`;
  const codecVersion = bytes.readUInt16BE(0);
  if (codecVersion !== 0) return `has codec version ${codecVersion}; only version 0 exists`;
  const payloadLength = bytes.readUInt32BE(38);
  if (UNSIGNED_HEADER_BYTES + payloadLength !== bytes.length)
    return `declares a ${payloadLength}-byte payload but carries ${bytes.length - UNSIGNED_HEADER_BYTES} bytes after the header`;
  return {
    networkId: bytes.readUInt32BE(2),
    sourceChainId: cb58Encode(bytes.subarray(6, 38)),
    payload: bytes.subarray(UNSIGNED_HEADER_BYTES),
    bytes,
  };
}

/** Hex with an optional 0x prefix, as §4.19 accepts it; undefined if not hex. */
export function decodeHex(text: string): Buffer | undefined {
  const body = text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text;
  if (body.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(body)) return undefined;
  return Buffer.from(body, 'hex');
}
