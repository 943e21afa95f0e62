import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { PRIMARY_CHAINS } from '../../src/emulator/world/networks.ts';
import { createFetcher } from '../../src/extract/fetcher.ts';
import { createHttpClient, type HttpClient } from '../../src/extract/http.ts';
import {
  decodeBitset,
  encodeBitset,
  parseSignedWarpMessage,
  type SignedWarpMessage,
} from '../../src/schemas/warp.ts';
import { requestAggregation } from '../../src/warp/aggregate.ts';
import { createNodeReader } from '../../src/warp/node.ts';
import { verifyWarpMessage } from '../../src/warp/verify.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { exampleMessageFrom } from '../helpers/warp.ts';

let emulator: Emulator;
let http: HttpClient;
let signed: Buffer;

const verify = (bytes: Buffer, quorumPercentage = 67) => {
  const node = createNodeReader(createFetcher({ http, retries: 0 }), `${emulator.url}/fuji`);
  return verifyWarpMessage({
    bytes,
    networkId: 5,
    quorumPercentage,
    async validatorsOf(unsigned) {
      const subnetId = (await node.subnetOf(unsigned.sourceChainId)) as string;
      return { subnetId, validators: await node.validatorsOf(subnetId) };
    },
  });
};

beforeAll(async () => {
  emulator = await startEmulator();
  http = createHttpClient({ userAgent: 'avalake-test' });
  signed = await requestAggregation({
    http,
    baseUrl: emulator.url,
    network: 'fuji',
    body: { message: exampleMessageFrom(PRIMARY_CHAINS.fuji.c).toString('hex') },
  });
});
afterAll(async () => {
  await http?.close();
  await emulator?.close();
});

describe('verifyWarpMessage against the node RPC', () => {
  it('a message signed by the emulator verifies: every check passes', async () => {
    const v = await verify(signed);
    expect(v.failed).toBeUndefined();
    expect(v.valid).toBe(true);
    expect(v.checks.map((c) => c.name)).toEqual([
      'format',
      'network',
      'canonical-order',
      'bitset',
      'signature',
      'quorum',
    ]);
    expect(v.signedWeight * 100n >= (v.set?.totalWeight ?? 0n) * 67n).toBe(true);
  });

  it('one flipped payload byte fails the signature check', async () => {
    const bytes = Buffer.from(signed);
    bytes[100] = (bytes[100] as number) ^ 0x01;
    const v = await verify(bytes);
    expect(v.failed?.name).toBe('signature');
    expect(v.failed?.detail).toContain('does not verify over the unsigned message');
  });

  it('one flipped signature byte fails the signature check', async () => {
    const bytes = Buffer.from(signed);
    bytes[bytes.length - 10] = (bytes[bytes.length - 10] as number) ^ 0x01;
    const v = await verify(bytes);
    expect(v.failed?.name).toBe('signature');
    expect(v.failed?.detail).toMatch(
      /signature (is not a valid compressed BLS12-381 G2 point|does not verify)/,
    );
  });

  it('one flipped signer bit fails: the signature (a different signer set) or the bitset (out of range)', async () => {
    const m = parseSignedWarpMessage(signed) as SignedWarpMessage;
    const signers = decodeBitset(m.signers);
    const count = (await verify(signed)).set?.validators.length as number;
    const withSigners = (indices: number[]) =>
      Buffer.concat([m.unsigned.bytes, header(encodeBitset(indices)), encodeBitset(indices), m.signature]);
    const dropped = await verify(withSigners(signers.slice(1)));
    expect(dropped.failed?.name).toBe('signature');
    const beyond = await verify(withSigners([...signers, count]));
    expect(beyond.failed?.name).toBe('bitset');
    expect(beyond.failed?.detail).toContain(`sets bit ${count}`);
  });

  it('a leading zero byte in the bitset fails the bitset check', async () => {
    const m = parseSignedWarpMessage(signed) as SignedWarpMessage;
    const bits = Buffer.concat([Buffer.from([0]), m.signers]);
    const v = await verify(Buffer.concat([m.unsigned.bytes, header(bits), bits, m.signature]));
    expect(v.failed?.name).toBe('bitset');
    expect(v.failed?.detail).toContain('leading zero byte');
  });

  it('a quorum above the signed weight fails the quorum check, saying the share', async () => {
    const v = await verify(signed, 95);
    expect(v.failed?.name).toBe('quorum');
    expect(v.failed?.detail).toMatch(/the signers hold \d+\.\d\d% .* under the 95% quorum/);
  });

  it('another network fails the network check', async () => {
    const node = createNodeReader(createFetcher({ http, retries: 0 }), emulator.url);
    const v = await verifyWarpMessage({
      bytes: signed,
      networkId: 1,
      quorumPercentage: 67,
      validatorsOf: async () => ({ subnetId: '', validators: await node.validatorsOf('') }),
    });
    expect(v.failed?.name).toBe('network');
  });
});

/** Signature type id 0 and the bitset length: what sits between the unsigned message and the bitset. */
function header(bits: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(bits.length, 4);
  return h;
}
