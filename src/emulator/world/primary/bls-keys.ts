import {
  blsProofOfPossession,
  blsPublicKey,
  blsSecretKeyFrom,
  SECRET_KEY_SEED_BYTES,
} from '../../../schemas/bls.ts';
import { hex0x } from '../../encoding.ts';
import { digest, type KeyPart } from '../../rng.ts';

// Validators' real BLS keys, derived from the world seed. Deriving a key and its proof of possession
// costs milliseconds, and a world has tens to hundreds of them, so each is computed on first read only.

/** What the P-Chain shows of a validator's BLS key (0x hex). */
export interface BlsSigner {
  readonly publicKey: string;
  readonly proofOfPossession: string;
}

// A symbol, not a field: JSON.stringify and the API shapes never see the secret key.
const SECRET = Symbol('bls secret key');

/** A key derived from `key` (e.g. seed, network, 'node', index) on first use, then memoized. */
export function lazyBlsSigner(...key: KeyPart[]): BlsSigner {
  let secretKey: Uint8Array | undefined;
  let publicKey: string | undefined;
  let proofOfPossession: string | undefined;
  const secret = () => {
    secretKey ??= blsSecretKeyFrom(
      Buffer.concat([digest(...key, 'bls', 0), digest(...key, 'bls', 1)]).subarray(0, SECRET_KEY_SEED_BYTES),
    );
    return secretKey;
  };
  const signer = {
    get publicKey() {
      publicKey ??= hex0x(blsPublicKey(secret()));
      return publicKey;
    },
    get proofOfPossession() {
      proofOfPossession ??= hex0x(blsProofOfPossession(secret()));
      return proofOfPossession;
    },
  };
  Object.defineProperty(signer, SECRET, { get: secret, enumerable: false });
  return signer;
}

/** Gives `target` the signer's public fields as lazy getters (and its secret, hidden). */
export function withBlsSigner<T extends object>(target: T, signer: BlsSigner): T & BlsSigner {
  return Object.defineProperties(target, {
    publicKey: { get: () => signer.publicKey, enumerable: true },
    proofOfPossession: { get: () => signer.proofOfPossession, enumerable: true },
    [SECRET]: { get: () => secretKeyOf(signer), enumerable: false },
  }) as T & BlsSigner;
}

/** The secret key behind a world signer (or a record given one by withBlsSigner). */
export function secretKeyOf(signer: object): Uint8Array | undefined {
  return (signer as { [SECRET]?: Uint8Array })[SECRET];
}
