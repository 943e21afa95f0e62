import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { offlineNodes } from '../../src/emulator/warp/online.ts';
import { signingValidatorsAt } from '../../src/emulator/warp/validators.ts';
import { evmChainsOf } from '../../src/emulator/world/chains.ts';
import { PRIMARY_CHAINS, PRIMARY_SUBNET_ID } from '../../src/emulator/world/networks.ts';
import { secretKeyOf } from '../../src/emulator/world/primary/bls-keys.ts';
import { blsProofOfPossession, blsPublicKey } from '../../src/schemas/bls.ts';
import { decodeBitset, parseSignedWarpMessage, type SignedWarpMessage } from '../../src/schemas/warp.ts';
import { canonicalValidatorSet, weightPercent } from '../../src/schemas/warp-validators.ts';
import { fetchJson, startEmulator } from '../helpers/emulator.ts';
import { asSendWarpMessageLog, exampleMessageFrom } from '../helpers/warp.ts';

let emulator: Emulator;
const fujiC = exampleMessageFrom(PRIMARY_CHAINS.fuji.c);
const post = (body: unknown, network = 'fuji') =>
  fetchJson(`${emulator.url}/v1/signatureAggregator/${network}/aggregateSignatures`, {
    method: 'POST',
    body,
  });
const signedOf = (hex: string) => parseSignedWarpMessage(Buffer.from(hex, 'hex')) as SignedWarpMessage;

beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator?.close());

/** The primary network of Fuji at the emulator's now: its canonical set and who is online. */
function fujiPrimary() {
  const now = emulator.clock.now();
  const validators = signingValidatorsAt(emulator.truth, 'fuji', PRIMARY_SUBNET_ID, now) ?? [];
  const set = canonicalValidatorSet(validators);
  const offline = offlineNodes(emulator.truth.seed, 'fuji', validators, now);
  const online = set.validators.filter((v) => v.nodeIds.some((id) => !offline.has(id)));
  const pct = (vs: typeof set.validators) =>
    Number(
      weightPercent(
        vs.reduce((s, v) => s + v.weight, 0n),
        set.totalWeight,
      ),
    );
  return { set, offline, keyedPct: pct(set.validators), onlinePct: pct(online) };
}

describe('validator keys are real BLS keys', () => {
  it('each node publishes the public key of its secret and a proof of possession over it', () => {
    const node = emulator.truth.primary('fuji').nodes()[1];
    const secret = secretKeyOf(node?.signer as object) as Uint8Array;
    expect(node?.publicKey).toBe(`0x${Buffer.from(blsPublicKey(secret)).toString('hex')}`);
    expect(node?.proofOfPossession).toBe(`0x${Buffer.from(blsProofOfPossession(secret)).toString('hex')}`);
    expect(JSON.stringify(node?.signer)).not.toContain('secret');
  });
});

describe('POST aggregateSignatures signs with the online validators', () => {
  it('201 with a signed message over the exact unsigned bytes, signers reaching the quorum', async () => {
    const res = await post({ message: `0x${fujiC.toString('hex')}` });
    expect(res.status).toBe(201);
    const signed = signedOf(res.body.signedMessage);
    expect(signed.unsigned.bytes.equals(fujiC)).toBe(true);
    const { set, offline } = fujiPrimary();
    const signers = decodeBitset(signed.signers);
    const weight = signers.reduce((s, i) => s + (set.validators[i]?.weight ?? 0n), 0n);
    expect(weight * 100n >= set.totalWeight * 67n).toBe(true);
    // Offline validators never sign.
    expect(offline.size).toBeGreaterThan(0);
    for (const i of signers)
      expect(
        set.validators[i]?.nodeIds.some((id) => !offline.has(id)),
        `signer ${i}`,
      ).toBe(true);
  });

  it('accepts the message as SendWarpMessage log data and as a lone justification, hex without 0x', async () => {
    const direct = await post({ message: fujiC.toString('hex') });
    const fromLog = await post({ message: asSendWarpMessageLog(fujiC).toString('hex') });
    const fromJustification = await post({ justification: fujiC.toString('hex') });
    expect([fromLog.status, fromJustification.status]).toEqual([201, 201]);
    expect(fromLog.body.signedMessage).toBe(direct.body.signedMessage);
    expect(fromJustification.body.signedMessage).toBe(direct.body.signedMessage);
  });

  it('signs for an L1 with its own validators (the source chain’s subnet by default)', async () => {
    const l1 = evmChainsOf(emulator.truth.seed, 'fuji').find((c) => c.validatorSet === 'l1');
    const res = await post({ message: exampleMessageFrom(l1?.blockchainId as string).toString('hex') });
    expect(res.status).toBe(201);
    const validators = signingValidatorsAt(
      emulator.truth,
      'fuji',
      l1?.subnetId as string,
      emulator.clock.now(),
    );
    const signers = decodeBitset(signedOf(res.body.signedMessage).signers);
    expect(Math.max(...signers)).toBeLessThan(canonicalValidatorSet(validators ?? []).validators.length);
  });

  it('a quorum above the online weight is a 503 that says so, not a hang', async () => {
    const { keyedPct, onlinePct } = fujiPrimary();
    const quorum = Math.floor(keyedPct);
    expect(quorum).toBeGreaterThan(onlinePct);
    const res = await post({ message: fujiC.toString('hex'), quorumPercentage: quorum });
    expect(res.status).toBe(503);
    expect(res.body.message).toMatch(/failed to aggregate signatures: quorumPercentage \d+ needs/);
    expect(res.body.message).toContain('offline');
  });

  it('a quorum above the weight with BLS keys is a 400 naming quorumPercentage', async () => {
    const res = await post({ message: fujiC.toString('hex'), quorumPercentage: 100 });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('quorumPercentage 100 cannot be reached');
  });

  it('the buffer asks for more signers when they are there', async () => {
    const plain = signedOf(
      (await post({ message: fujiC.toString('hex'), quorumPercentage: 40 })).body.signedMessage,
    );
    const buffered = signedOf(
      (await post({ message: fujiC.toString('hex'), quorumPercentage: 40, quorumPercentageBuffer: 25 })).body
        .signedMessage,
    );
    expect(decodeBitset(buffered.signers).length).toBeGreaterThan(decodeBitset(plain.signers).length);
  });

  it('pChainHeight selects an earlier validator set; above the tip it is a 400', async () => {
    const blocks = emulator.truth.primary('fuji').blocks(emulator.clock.now());
    const early = await post({ message: fujiC.toString('hex'), pChainHeight: Math.floor(blocks.length / 2) });
    expect(early.status).toBe(201);
    const above = await post({ message: fujiC.toString('hex'), pChainHeight: blocks.length + 5 });
    expect(above.status).toBe(400);
    expect(above.body.message).toContain(
      `pChainHeight ${blocks.length + 5} is above the current P-Chain height`,
    );
  });
});

describe('every rule of the §4.19 table is a 400 that names it', () => {
  const message = fujiC.toString('hex');
  it.each([
    ['neither message nor justification', {}, 'Either message or justification must be provided'],
    ['message not hex', { message: 'zz' }, 'message must be a hex string'],
    ['justification not hex', { justification: '0x123' }, 'justification must be a hex string'],
    ['message too short', { message: '0x000000' }, 'message is 3 bytes'],
    [
      'quorumPercentage above 100',
      { message, quorumPercentage: 101 },
      'quorumPercentage must be an integer from 0 to 100',
    ],
    [
      'quorumPercentage not an integer',
      { message, quorumPercentage: 66.5 },
      'quorumPercentage must be an integer',
    ],
    [
      'quorumPercentageBuffer below 0',
      { message, quorumPercentageBuffer: -1 },
      'quorumPercentageBuffer must be an integer from 0 to 100',
    ],
    [
      'quorum + buffer above 100',
      { message, quorumPercentage: 80, quorumPercentageBuffer: 21 },
      'quorumPercentage + quorumPercentageBuffer must not be greater than 100',
    ],
    ['pChainHeight negative', { message, pChainHeight: -1 }, 'pChainHeight must be a non-negative integer'],
    [
      'signingSubnetId malformed',
      { message, signingSubnetId: 'not-an-id' },
      'signingSubnetId must be a subnet id',
    ],
    [
      'signingSubnetId unknown',
      { message, signingSubnetId: `0x${'ab'.repeat(32)}` },
      'is not a subnet of fuji',
    ],
    [
      'source chain unknown',
      { message: Buffer.from(exampleMessageFrom(PRIMARY_CHAINS.fuji.c)).fill(7, 6, 38).toString('hex') },
      'signingSubnetId: the source chain',
    ],
  ] as const)('%s', async (_name, body, expected) => {
    const res = await post(body, 'fuji');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Bad Request');
    expect([res.body.message].flat().join('; ')).toContain(expected);
  });

  it('message of another network', async () => {
    const res = await post({ message }, 'mainnet');
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('message is for network id 5, but mainnet is network id 1');
  });

  it('network not mainnet, fuji or testnet', async () => {
    const res = await post({ message }, 'devnet');
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('network must be one of');
  });
});
