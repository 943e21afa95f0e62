import { describe, expect, it } from 'vitest';
import {
  bitsetProblem,
  decodeBitset,
  decodeWarpPayload,
  encodeBitset,
  encodeSignedWarpMessage,
  encodeUnsignedWarpMessage,
  parseSignedWarpMessage,
  parseUnsignedWarpMessage,
  parseWarpMessageInput,
  type SignedWarpMessage,
} from '../../src/schemas/warp.ts';
import { asSendWarpMessageLog, WARP_EXAMPLE } from '../helpers/warp.ts';

const signed = parseSignedWarpMessage(Buffer.from(WARP_EXAMPLE.signedMessageHex, 'hex')) as SignedWarpMessage;

describe('the documented signed message decodes as the reference byte table says', () => {
  it('parses, with the sizes of the reference', () => {
    expect(typeof signed).toBe('object');
    expect(signed.bytes.length).toBe(WARP_EXAMPLE.signedMessageBytes);
    expect(signed.unsigned.bytes.length).toBe(WARP_EXAMPLE.unsignedMessageBytes);
    expect(signed.unsigned.bytes.toString('hex')).toBe(WARP_EXAMPLE.unsignedMessageHex);
  });

  // Each row of the table: where the decoder found the field, and its value.
  const decoded: Record<string, { offset: number; bytes: Buffer; value?: unknown }> = {};
  const base = signed.unsigned.bytes.length;
  const at = (buf: Buffer) => buf.byteOffset - signed.bytes.byteOffset;
  decoded.codecVersion = { offset: 0, bytes: signed.bytes.subarray(0, 2), value: 0 };
  decoded.networkID = { offset: 2, bytes: signed.bytes.subarray(2, 6), value: signed.unsigned.networkId };
  decoded.sourceChainID = {
    offset: at(signed.unsigned.sourceChainIdBytes),
    bytes: signed.unsigned.sourceChainIdBytes,
    value: signed.unsigned.sourceChainId,
  };
  decoded.payloadLength = {
    offset: 38,
    bytes: signed.bytes.subarray(38, 42),
    value: signed.unsigned.payload.length,
  };
  decoded.payload = { offset: at(signed.unsigned.payload), bytes: signed.unsigned.payload };
  decoded.signatureTypeID = { offset: base, bytes: signed.bytes.subarray(base, base + 4), value: 0 };
  decoded.signersLength = {
    offset: base + 4,
    bytes: signed.bytes.subarray(base + 4, base + 8),
    value: signed.signers.length,
  };
  decoded.signers = {
    offset: at(signed.signers),
    bytes: signed.signers,
    value: decodeBitset(signed.signers),
  };
  decoded.blsAggregateSignature = { offset: at(signed.signature), bytes: signed.signature };

  it.each(WARP_EXAMPLE.layout.map((row) => [row.field, row] as const))('%s', (field, row) => {
    const got = decoded[field];
    expect(got, `decoder has field ${field}`).toBeDefined();
    expect(got?.offset).toBe(row.offset);
    expect(got?.bytes.length).toBe(row.length);
    // The reference shortens long hex with "..."; compare the part it shows.
    const shown = row.hex.replace(/\.\.\.$/, '');
    expect(got?.bytes.toString('hex').startsWith(shown)).toBe(true);
    if ('value' in row && row.value !== undefined) expect(got?.value).toEqual(row.value);
  });

  it('the payload is the AddressedCall of the reference', () => {
    const payload = decodeWarpPayload(signed.unsigned.payload);
    expect(payload.type).toBe('AddressedCall');
    if (payload.type !== 'AddressedCall') return;
    expect(`0x${payload.sourceAddress.toString('hex')}`).toBe(WARP_EXAMPLE.payloadDecoded.sourceAddressHex);
    expect(payload.payload.length).toBe(WARP_EXAMPLE.payloadDecoded.innerPayloadLength);
  });

  it('re-encodes to the same bytes', () => {
    const unsigned = encodeUnsignedWarpMessage(signed.unsigned);
    expect(encodeSignedWarpMessage(unsigned, signed.signers, signed.signature).equals(signed.bytes)).toBe(
      true,
    );
  });
});

describe('message input forms', () => {
  it('the SendWarpMessage log-data form unwraps to the raw message (the OpenAPI request example)', () => {
    const raw = Buffer.from(WARP_EXAMPLE.unsignedMessageHex, 'hex');
    const fromLog = parseWarpMessageInput(asSendWarpMessageLog(raw));
    expect(typeof fromLog).toBe('object');
    expect((fromLog as { bytes: Buffer }).bytes.equals(raw)).toBe(true);
    expect((parseWarpMessageInput(raw) as { bytes: Buffer }).bytes.equals(raw)).toBe(true);
  });

  it.each([
    [Buffer.alloc(3), 'shorter than the 42-byte Warp message header'],
    [Buffer.concat([Buffer.from([0, 1]), Buffer.alloc(40)]), 'codec version 1'],
    [Buffer.concat([Buffer.alloc(38), Buffer.from([0, 0, 0, 9])]), 'declares a 9-byte payload'],
  ])('rejects a malformed unsigned message with its reason (%#)', (bytes, reason) => {
    expect(parseUnsignedWarpMessage(bytes)).toContain(reason);
  });

  it('rejects a signed message of the wrong length', () => {
    expect(parseSignedWarpMessage(signed.bytes.subarray(0, -1))).toContain('a 1-byte signer bitset');
  });
});

describe('signer bitset', () => {
  it('is big.Int.Bytes(): bit i = validator i, minimal big-endian', () => {
    expect(encodeBitset([0, 1]).toString('hex')).toBe('03');
    expect(encodeBitset([8]).toString('hex')).toBe('0100');
    expect(encodeBitset([]).length).toBe(0);
    expect(decodeBitset(Buffer.from('0103', 'hex'))).toEqual([0, 1, 8]);
    expect(decodeBitset(encodeBitset([3, 17, 40]))).toEqual([3, 17, 40]);
  });

  it('names what avalanchego rejects', () => {
    expect(bitsetProblem(Buffer.from('0003', 'hex'), 4)).toContain('leading zero byte');
    expect(bitsetProblem(Buffer.from('10', 'hex'), 4)).toContain('sets bit 4');
    expect(bitsetProblem(Buffer.alloc(0), 4)).toContain('empty');
    expect(bitsetProblem(Buffer.from('03', 'hex'), 2)).toBeUndefined();
  });
});
