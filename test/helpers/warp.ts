import { readFileSync } from 'node:fs';
import { cb58Decode } from '../../src/schemas/cb58.ts';

/** The providers' documented signed message, decoded field by field (reference/warp-example-decoded.json). */
export interface WarpExample {
  signedMessageHex: string;
  unsignedMessageHex: string;
  signedMessageBytes: number;
  unsignedMessageBytes: number;
  layout: { offset: number; length: number; field: string; hex: string; value?: unknown }[];
  payloadDecoded: { typeID: number; sourceAddressHex: string; innerPayloadLength: number };
}

export const WARP_EXAMPLE: WarpExample = JSON.parse(
  readFileSync(new URL('../../../shared/reference/warp-example-decoded.json', import.meta.url), 'utf8'),
);

/** The example's unsigned message, re-addressed to come from `blockchainId` (an emulated chain). */
export function exampleMessageFrom(blockchainId: string): Buffer {
  const bytes = Buffer.from(WARP_EXAMPLE.unsignedMessageHex, 'hex');
  (cb58Decode(blockchainId) as Buffer).copy(bytes, 6);
  return bytes;
}

/** The ABI-encoded `bytes` of a SendWarpMessage log: offset 0x20, length, data zero-padded to 32. */
export function asSendWarpMessageLog(unsigned: Buffer): Buffer {
  const word = (n: number) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
  const padded = Buffer.alloc(Math.ceil(unsigned.length / 32) * 32);
  unsigned.copy(padded);
  return Buffer.concat([word(32), word(unsigned.length), padded]);
}
