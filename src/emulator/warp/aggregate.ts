import { createHash } from 'node:crypto';
import { blsAggregateSign } from '../../schemas/bls.ts';
import { encodeBitset, encodeSignedWarpMessage, type UnsignedWarpMessage } from '../../schemas/warp.ts';
import { canonicalValidatorSet, meetsQuorum, weightPercent } from '../../schemas/warp-validators.ts';
import { badRequest, HttpError } from '../http/errors.ts';
import { digest } from '../rng.ts';
import type { World } from '../world/index.ts';
import type { Network } from '../world/networks.ts';
import { offlineNodes } from './online.ts';
import { type SigningValidator, signingValidatorsAt } from './validators.ts';

export interface AggregationInput {
  world: World;
  network: Network;
  now: number;
  message: UnsignedWarpMessage;
  signingSubnetId: string;
  quorumPercentage: number;
  quorumPercentageBuffer: number;
  pChainHeight: number;
}

export interface Aggregation {
  signedMessage: Buffer;
  /** Canonical indices that signed, ascending. */
  signers: number[];
  signedWeight: bigint;
  totalWeight: bigint;
}

/**
 * Gathers signatures as icm-services does: every validator is asked, answers arrive in some order (here a
 * per-message order drawn from the seed), and aggregation stops once quorum + buffer of the weight has
 * signed. If every online validator has answered without reaching that, quorum alone is enough.
 *
 * Errors: 400 when the request cannot succeed however many validators answer (unknown subnet, height
 * above the tip, quorum above the weight that has BLS keys); 503 when it fails only because validators
 * are offline now: the request is fine and may succeed later, like the real service's "failed to
 * aggregate signatures".
 */
export function aggregateSignatures(input: AggregationInput): Aggregation {
  const { world, network, message, signingSubnetId } = input;
  const at = timeOfHeight(input);
  const validators = signingValidatorsAt(world, network, signingSubnetId, at);
  if (!validators)
    throw badRequest(
      `signingSubnetId ${signingSubnetId} is not a subnet of ${network} at P-Chain height ${input.pChainHeight || 'current'}`,
    );
  const set = canonicalValidatorSet(validators);
  const keyed = set.validators.reduce((sum, v) => sum + v.weight, 0n);
  const quorum = input.quorumPercentage;
  const target = Math.min(100, quorum + input.quorumPercentageBuffer);
  const describe = (w: bigint) => `${weightPercent(w, set.totalWeight)}% (${w} of ${set.totalWeight})`;
  if (set.totalWeight === 0n || !meetsQuorum(keyed, set.totalWeight, quorum))
    throw badRequest(
      `quorumPercentage ${quorum} cannot be reached on subnet ${signingSubnetId}: validators with BLS keys hold ${describe(keyed)} of its weight`,
    );

  const offline = offlineNodes(world.seed, network, validators, at);
  const secrets = new Map<string, Uint8Array>();
  for (const v of validators as SigningValidator[])
    if (v.publicKey && v.secretKey && !offline.has(v.nodeId)) secrets.set(v.publicKey.slice(2), v.secretKey);
  const messageId = createHash('sha256').update(message.bytes).digest('hex');
  const responders = set.validators
    .map((v, index) => ({ v, index, secret: secrets.get(v.publicKey.toString('hex')) }))
    .filter((r): r is typeof r & { secret: Uint8Array } => r.secret !== undefined)
    .map((r) => ({ ...r, order: digest(world.seed, 'response', messageId, r.index).readUInt32BE(0) }))
    .sort((a, b) => a.order - b.order);

  const chosen: typeof responders = [];
  let signedWeight = 0n;
  for (const r of responders) {
    // A signature needs one signer even when quorumPercentage is 0.
    if (chosen.length > 0 && meetsQuorum(signedWeight, set.totalWeight, target)) break;
    chosen.push(r);
    signedWeight += r.v.weight;
  }
  if (!meetsQuorum(signedWeight, set.totalWeight, quorum))
    throw new HttpError(
      503,
      `failed to aggregate signatures: quorumPercentage ${quorum} needs ${quorum}% of subnet ${signingSubnetId}'s weight, but the validators that answered hold ${describe(signedWeight)} (${offline.size} offline); try a lower quorumPercentage or again later`,
    );

  const signers = chosen.map((r) => r.index).sort((a, b) => a - b);
  const signature = blsAggregateSign(
    message.bytes,
    chosen.map((r) => r.secret),
  );
  return {
    signedMessage: encodeSignedWarpMessage(message.bytes, encodeBitset(signers), signature),
    signers,
    signedWeight,
    totalWeight: set.totalWeight,
  };
}

/** The time of the P-Chain block at `pChainHeight` (0 = the tip, i.e. now). */
function timeOfHeight(input: AggregationInput): number {
  if (input.pChainHeight === 0) return input.now;
  const primary = input.world.primary(input.network);
  const block = primary.block(input.pChainHeight, input.now);
  if (!block)
    throw badRequest(
      `pChainHeight ${input.pChainHeight} is above the current P-Chain height ${primary.blockCount(input.now) - 1} of ${input.network}`,
    );
  return block.time;
}
