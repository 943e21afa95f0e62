import { bech32AddressOf, cb58Encode, evmAddressOf, nodeIdOf } from '../../encoding.ts';
import { digest, rng } from '../../rng.ts';
import type { Network } from '../networks.ts';
import { type BlsSigner, lazyBlsSigner, withBlsSigner } from './bls-keys.ts';

/** A wallet of the pool: one key, seen as a bech32 address on P/X and an EVM address on the C-Chain. */
export interface Wallet {
  index: number;
  address: string;
  evmAddress: string;
}

/** A node of the primary network with its BLS key: a real one, derived from the seed on first read. */
export interface NodeInfo {
  index: number;
  nodeId: string;
  publicKey: string;
  proofOfPossession: string;
  /** The key as a StakeRec's `signer` holds it (lazy; its secret is reachable with secretKeyOf). */
  signer: BlsSigner;
  /** The wallet that stakes and receives this node's validation rewards and fees. */
  owner: string;
  feePpm: number;
  uptime: string;
  /** Seconds after genesis at which the node first stakes. */
  joinOffset: number;
  /** Validators registered before Durango use AddValidatorTx; the rest are permissionless. */
  legacyTx: boolean;
}

export function createWallets(seed: number, network: Network, count: number): Wallet[] {
  return Array.from({ length: count }, (_, index) => {
    const key = digest(seed, network, 'wallet', index).subarray(0, 20);
    return {
      index,
      address: bech32AddressOf(network, key),
      evmAddress: evmAddressOf(digest(seed, network, 'wallet-evm', index).subarray(0, 20)),
    };
  });
}

export function createNodes(
  seed: number,
  network: Network,
  count: number,
  wallets: readonly Wallet[],
): NodeInfo[] {
  return Array.from({ length: count }, (_, index) => {
    const r = rng(seed, network, 'node', index);
    const nodeId = nodeIdOf(digest(seed, network, 'node-id', index).subarray(0, 20));
    // Note: these draws once were the (random) key bytes; keep them so every later draw, and so the
    // rest of the world, stays as it was.
    r.bytes(48 + 96);
    const signer = lazyBlsSigner(seed, network, 'node', index);
    const node = {
      index,
      nodeId,
      signer,
      owner: (wallets[index % wallets.length] as Wallet).address,
      feePpm: r.pick([20_000, 20_000, 30_000, 50_000, 100_000]),
      uptime: (95 + r.float() * 5).toFixed(4),
      // Most nodes stake in the first days; a few join later so re-staking and joins both show.
      joinOffset: r.chance(0.8) ? r.int(0, 3 * 86_400) : r.int(3 * 86_400, 12 * 86_400),
      legacyTx: index % 5 === 0,
    };
    return withBlsSigner(node, signer);
  });
}

/** A deterministic cb58 id of the world (transactions, blocks, UTXOs). */
export const idOf = (seed: number, ...key: (string | number)[]): string => cb58Encode(digest(seed, ...key));
