import type { WarpValidatorInput } from '../../schemas/warp-validators.ts';
import { evmChainsOf } from '../world/chains.ts';
import type { World } from '../world/index.ts';
import { type Network, PRIMARY_SUBNET_ID } from '../world/networks.ts';
import { secretKeyOf } from '../world/primary/bls-keys.ts';
import type { StakeRec } from '../world/primary/index.ts';

/** A validator of the signing subnet as the aggregator sees it: what the P-Chain says, plus its key. */
export interface SigningValidator extends WarpValidatorInput {
  secretKey?: Uint8Array;
}

/**
 * The validators of `subnetId` at time `t`, with the weights avalanchego's validator manager uses:
 * primary-network weight counts delegated stake; an L1 counts active validators (balance > 0) only; a
 * permissioned subnet's validators sign with the BLS key of their primary-network registration.
 * Undefined if the subnet does not exist at `t`.
 */
export function signingValidatorsAt(
  world: World,
  network: Network,
  subnetId: string,
  t: number,
): SigningValidator[] | undefined {
  const primary = world.primary(network);
  const withKey = (nodeId: string, weight: bigint, holder?: { publicKey: string }) => {
    if (!holder) return { nodeId, weight };
    // Reading publicKey derives the key; the secret comes with it.
    const publicKey = holder.publicKey;
    return { nodeId, weight, publicKey, secretKey: secretKeyOf(holder) as Uint8Array };
  };
  if (subnetId === PRIMARY_SUBNET_ID) {
    const delegated = (s: StakeRec) =>
      primary.currentDelegations(s, t).reduce((sum, d) => sum + d.amount, 0n);
    return primary.validators(t).map((s) => withKey(s.nodeId, s.amount + delegated(s), s.signer));
  }
  const chain = evmChainsOf(world.seed, network).find((c) => c.subnetId === subnetId);
  if (!chain || primary.createdAt(subnetId, t) === undefined) return undefined;
  if (chain.validatorSet === 'l1')
    return primary
      .l1Validators(t)
      .filter(({ validator, balance }) => balance > 0n && validator.subnetId === subnetId)
      .map(({ validator: v }) => withKey(v.nodeId, BigInt(v.weight), v));
  return primary
    .validators(t)
    .filter((s) => s.subnetTx?.subnetId === subnetId && s.subnetTx.time <= t)
    .map((s) => withKey(s.nodeId, s.subnetTx?.subnetPeriod?.weight ?? 0n, s.signer));
}
