import { blsVerifyAggregate } from '../schemas/bls.ts';
import {
  bitsetProblem,
  decodeBitset,
  parseSignedWarpMessage,
  type SignedWarpMessage,
  type UnsignedWarpMessage,
} from '../schemas/warp.ts';
import {
  type CanonicalValidatorSet,
  canonicalValidatorSet,
  meetsQuorum,
  type WarpValidatorInput,
  weightPercent,
} from '../schemas/warp-validators.ts';

/** The checks avalanchego's verifier makes, in its order; the first that fails ends the verification. */
export type CheckName = 'format' | 'network' | 'canonical-order' | 'bitset' | 'signature' | 'quorum';

export interface Check {
  name: CheckName;
  ok: boolean;
  /** What was found; on failure, why it fails. */
  detail: string;
}

export interface Verification {
  valid: boolean;
  checks: Check[];
  /** The first failed check, if any. */
  failed?: Check;
  message?: SignedWarpMessage;
  subnetId?: string;
  set?: CanonicalValidatorSet;
  signers: number[];
  signedWeight: bigint;
}

export interface VerifyArgs {
  bytes: Buffer;
  /** The network the message must belong to (1 mainnet, 5 fuji). */
  networkId: number;
  quorumPercentage: number;
  /** The signing subnet's validators for the message's source chain (from the node, or given). */
  validatorsOf(
    unsigned: UnsignedWarpMessage,
  ): Promise<{ subnetId: string; validators: WarpValidatorInput[] }>;
}

/** Checks a signed Warp message the way a receiving chain would: format, bitset, signature, quorum. */
export async function verifyWarpMessage(args: VerifyArgs): Promise<Verification> {
  const checks: Check[] = [];
  const result = (extra: Partial<Verification> = {}): Verification => {
    const failed = checks.find((c) => !c.ok);
    return { valid: !failed, checks, ...(failed ? { failed } : {}), signers: [], signedWeight: 0n, ...extra };
  };
  const pass = (name: CheckName, detail: string) => checks.push({ name, ok: true, detail });
  const fail = (name: CheckName, detail: string, extra: Partial<Verification> = {}) => {
    checks.push({ name, ok: false, detail });
    return result(extra);
  };

  const message = parseSignedWarpMessage(args.bytes);
  if (typeof message === 'string') return fail('format', `the signed message ${message}`);
  pass('format', `${message.bytes.length} bytes, ${message.unsigned.payload.length}-byte payload`);
  const { unsigned } = message;
  if (unsigned.networkId !== args.networkId)
    return fail(
      'network',
      `the message is for network id ${unsigned.networkId}, expected ${args.networkId}`,
      {
        message,
      },
    );
  pass('network', `network id ${unsigned.networkId}`);

  const { subnetId, validators } = await args.validatorsOf(unsigned);
  let set: CanonicalValidatorSet;
  try {
    set = canonicalValidatorSet(validators);
  } catch (error) {
    return fail('canonical-order', (error as Error).message, { message, subnetId });
  }
  if (set.validators.length === 0)
    return fail('canonical-order', `subnet ${subnetId} has no validators with BLS keys`, {
      message,
      subnetId,
    });
  pass(
    'canonical-order',
    `${set.validators.length} validators with BLS keys on subnet ${subnetId}, sorted by uncompressed public key`,
  );

  const context = { message, subnetId, set };
  const problem = bitsetProblem(message.signers, set.validators.length);
  if (problem) return fail('bitset', problem, context);
  const signers = decodeBitset(message.signers);
  const chosen = signers.map((i) => set.validators[i] as (typeof set.validators)[number]);
  const signedWeight = chosen.reduce((sum, v) => sum + v.weight, 0n);
  const withSigners = { ...context, signers, signedWeight };
  pass('bitset', `signers ${signers.join(', ')} of ${set.validators.length}`);

  const bad = blsVerifyAggregate(
    unsigned.bytes,
    message.signature,
    chosen.map((v) => v.publicKey),
  );
  if (bad) return fail('signature', bad, withSigners);
  pass('signature', `the aggregate signature of ${signers.length} signers verifies`);

  const share = `${weightPercent(signedWeight, set.totalWeight)}% (${signedWeight} of ${set.totalWeight})`;
  if (!meetsQuorum(signedWeight, set.totalWeight, args.quorumPercentage))
    return fail(
      'quorum',
      `the signers hold ${share} of the weight, under the ${args.quorumPercentage}% quorum`,
      withSigners,
    );
  pass('quorum', `the signers hold ${share} of the weight, at least ${args.quorumPercentage}%`);
  return result(withSigners);
}
