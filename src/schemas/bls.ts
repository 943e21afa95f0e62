import { bls12_381 } from '@noble/curves/bls12-381.js';

// Avalanche's BLS: public keys in G1 (48-byte compressed), signatures in G2 (96 bytes), i.e. noble's
// "long signatures", with the proof-of-possession ciphersuite (avalanchego utils/crypto/bls).
// Note: noble's default DST is the _NUL_ suite; every hash here must name the POP suite or nothing verifies.

const bls = bls12_381.longSignatures;
const Fr = bls12_381.fields.Fr;

export const SIGNATURE_DST = 'BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_';
export const PROOF_OF_POSSESSION_DST = 'BLS_POP_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_';
/** Bytes of key material `blsSecretKeyFrom` reduces to a scalar. */
export const SECRET_KEY_SEED_BYTES = bls.lengths.seed ?? 48;

/** A secret key (32 bytes, big-endian scalar) derived deterministically from `seed`. */
export function blsSecretKeyFrom(seed: Uint8Array): Uint8Array {
  return bls.keygen(seed).secretKey;
}

/** The 48-byte compressed G1 public key. */
export function blsPublicKey(secretKey: Uint8Array): Uint8Array {
  return bls.getPublicKey(secretKey).toBytes(true);
}

/** Signature over the compressed public key with the POP tag: what a validator registers beside its key. */
export function blsProofOfPossession(secretKey: Uint8Array): Uint8Array {
  const message = bls.hash(blsPublicKey(secretKey), PROOF_OF_POSSESSION_DST);
  return bls.sign(message, secretKey).toBytes(true);
}

/**
 * The aggregate of each key's signature over `message`. BLS is linear, so the aggregate of
 * sk_i·H(m) equals (Σ sk_i)·H(m): one scalar multiplication instead of one per signer, same bytes.
 */
export function blsAggregateSign(message: Uint8Array, secretKeys: readonly Uint8Array[]): Uint8Array {
  if (secretKeys.length === 0) throw new Error('no secret keys to sign with');
  let sum = 0n;
  for (const sk of secretKeys) sum = Fr.add(sum, Fr.fromBytes(sk));
  return bls.sign(bls.hash(message, SIGNATURE_DST), Fr.toBytes(sum)).toBytes(true);
}

/** The 96-byte uncompressed form of a compressed G1 key: the canonical validator order sorts by it. */
export function blsUncompressedPublicKey(compressed: Uint8Array): Uint8Array {
  return bls12_381.G1.Point.fromBytes(compressed).toBytes(false);
}

/**
 * Checks an aggregate signature over `message` by the aggregate of `publicKeys`. Returns a reason on
 * failure, separating "not a point" from "does not verify" for the user.
 */
export function blsVerifyAggregate(
  message: Uint8Array,
  signature: Uint8Array,
  publicKeys: readonly Uint8Array[],
): string | undefined {
  if (publicKeys.length === 0) return 'there are no public keys to verify against';
  let sig: ReturnType<typeof bls.Signature.fromBytes>;
  try {
    sig = bls.Signature.fromBytes(signature);
    sig.assertValidity();
  } catch (error) {
    return `the signature is not a valid compressed BLS12-381 G2 point (${(error as Error).message})`;
  }
  let key: ReturnType<typeof bls.aggregatePublicKeys>;
  try {
    key = bls.aggregatePublicKeys(publicKeys.map((k) => bls12_381.G1.Point.fromBytes(k)));
  } catch (error) {
    return `a signer's public key is not a valid compressed BLS12-381 G1 point (${(error as Error).message})`;
  }
  return bls.verify(sig, bls.hash(message, SIGNATURE_DST), key)
    ? undefined
    : 'the aggregate signature does not verify over the unsigned message with the signers’ aggregate public key';
}
