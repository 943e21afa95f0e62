import { blsUncompressedPublicKey } from './bls.ts';
import { decodeHex } from './warp.ts';

// avalanchego snow/validators/warp.go: the validator set a Warp signature's bitset indexes into.

/** One validator of the signing subnet at the P-Chain height, as the P-Chain reports it. */
export interface WarpValidatorInput {
  nodeId: string;
  weight: bigint;
  /** 0x hex of the 48-byte compressed G1 key; absent for validators registered without one. */
  publicKey?: string;
}

/** One entry of the canonical set: every validator sharing one BLS key, merged. */
export interface CanonicalValidator {
  /** 48-byte compressed key. */
  publicKey: Buffer;
  /** 96-byte uncompressed key: the sort key. */
  publicKeyUncompressed: Buffer;
  weight: bigint;
  nodeIds: string[];
}

export interface CanonicalValidatorSet {
  validators: CanonicalValidator[];
  /** Weight of every validator, including those without BLS keys: the quorum's denominator. */
  totalWeight: bigint;
}

/**
 * Validators with BLS keys, merged by identical key (weights summed), sorted ascending by the uncompressed
 * key bytes. Throws if a key is not a valid G1 point (the P-Chain never holds one).
 */
export function canonicalValidatorSet(validators: readonly WarpValidatorInput[]): CanonicalValidatorSet {
  const byKey = new Map<string, CanonicalValidator>();
  let totalWeight = 0n;
  for (const v of validators) {
    totalWeight += v.weight;
    if (!v.publicKey) continue;
    const publicKey = decodeHex(v.publicKey);
    if (publicKey?.length !== 48)
      throw new Error(`validator ${v.nodeId}: public key ${v.publicKey} is not 48 bytes of hex`);
    const id = publicKey.toString('hex');
    const entry = byKey.get(id);
    if (entry) {
      entry.weight += v.weight;
      entry.nodeIds.push(v.nodeId);
      continue;
    }
    let publicKeyUncompressed: Buffer;
    try {
      publicKeyUncompressed = Buffer.from(blsUncompressedPublicKey(publicKey));
    } catch (cause) {
      throw new Error(`validator ${v.nodeId}: public key ${v.publicKey} is not a BLS12-381 G1 point`, {
        cause,
      });
    }
    byKey.set(id, { publicKey, publicKeyUncompressed, weight: v.weight, nodeIds: [v.nodeId] });
  }
  const sorted = [...byKey.values()].sort((a, b) =>
    Buffer.compare(a.publicKeyUncompressed, b.publicKeyUncompressed),
  );
  return { validators: sorted, totalWeight };
}

/** The signature aggregator's default quorum, and avalake verify-message's. */
export const DEFAULT_QUORUM_PERCENTAGE = 67;

/** avalanchego's quorum rule: signedWeight · den >= totalWeight · num. */
export function meetsQuorum(signedWeight: bigint, totalWeight: bigint, percentage: number): boolean {
  return signedWeight * 100n >= totalWeight * BigInt(percentage);
}

/** Weight as a percentage with two decimals, for people. */
export function weightPercent(weight: bigint, totalWeight: bigint): string {
  if (totalWeight === 0n) return '0.00';
  const hundredths = (weight * 10_000n) / totalWeight;
  return `${hundredths / 100n}.${String(hundredths % 100n).padStart(2, '0')}`;
}
