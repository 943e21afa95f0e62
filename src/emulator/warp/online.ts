import { DEFAULT_QUORUM_PERCENTAGE } from '../../schemas/warp-validators.ts';
import { digest } from '../rng.ts';
import type { Network } from '../world/networks.ts';

// Which validators answer signature requests. Real aggregators always meet a few unreachable nodes, so
// the emulator takes some offline: the seed decides, per node and per hour, stably.

/** Chance that a validator is offline in a given hour. */
export const OFFLINE_CHANCE = 0.15;
/** Offline validators never hold more than this share of a subnet's weight. */
export const MAX_OFFLINE_SHARE = 0.15;
const HOUR = 3_600;

/**
 * Node ids offline at `t`. Only validators with BLS keys matter (the others never sign). Each draws a
 * number for the hour; those under OFFLINE_CHANCE go offline, lowest first, while the offline weight stays
 * within MAX_OFFLINE_SHARE of the total and leaves the default quorum reachable by the rest. With four or
 * more keyed validators at least one (the lowest draw that fits) is offline, so signing is a real choice.
 */
export function offlineNodes(
  seed: number,
  network: Network,
  validators: readonly { nodeId: string; weight: bigint; publicKey?: string }[],
  t: number,
): Set<string> {
  const hour = Math.floor(t / HOUR);
  const total = validators.reduce((sum, v) => sum + v.weight, 0n);
  const keyed = validators.filter((v) => v.publicKey);
  const keyedWeight = keyed.reduce((sum, v) => sum + v.weight, 0n);
  const defaultQuorum = (total * BigInt(DEFAULT_QUORUM_PERCENTAGE) + 99n) / 100n;
  const share = (total * BigInt(Math.round(MAX_OFFLINE_SHARE * 10_000))) / 10_000n;
  const slack = keyedWeight - defaultQuorum;
  const cap = slack < share ? slack : share;
  const draws = keyed
    .map((v) => ({ v, u: digest(seed, network, 'offline', hour, v.nodeId).readUInt32BE(0) / 2 ** 32 }))
    .sort((a, b) => a.u - b.u);
  const offline = new Set<string>();
  let weight = 0n;
  for (const { v, u } of draws) {
    const forced = offline.size === 0 && keyed.length >= 4;
    if (u >= OFFLINE_CHANCE && !forced) break;
    if (weight + v.weight > cap) continue;
    offline.add(v.nodeId);
    weight += v.weight;
  }
  return offline;
}
