import { z } from 'zod';
import { lake } from '../../schemas/lake.ts';
import { defineStream } from '../stream.ts';
import { perPrimaryAddress } from './fields.ts';

/** A map from asset id to an amount, as a list the lake can type. */
const byAsset = z.array(z.object({ assetId: z.string(), amount: lake.amount() }));
const listOf = (map: unknown) =>
  typeof map === 'object' && map !== null
    ? Object.entries(map).map(([assetId, amount]) => ({ assetId, amount }))
    : map;

/** The node wants `P-` addresses; the pipeline may list them bare. */
const pAddress = (address: string) =>
  address.startsWith('P-') ? address : `P-${address.replace(/^X-/, '')}`;

/**
 * §4.20 `platform.getBalance` of each configured address: one row per address and run (the partition
 * is the address). The node costs no compute units; the method is deprecated but still served.
 */
export const pChainBalances = defineStream({
  name: 'p_chain_balances',
  description: 'P-Chain balances of the configured addresses from the node, one snapshot per run',
  inputs: 'primary.addresses',
  strategy: 'snapshot',
  schema: z.object({
    balance: lake.amount(),
    unlocked: lake.amount(),
    lockedStakeable: lake.amount(),
    lockedNotStakeable: lake.amount(),
    balances: byAsset,
    unlockeds: byAsset,
    lockedStakeables: byAsset,
    lockedNotStakeables: byAsset,
    // Note: the node's document leaves the items open (`additionalProperties`); avalanchego sends these two.
    utxoIDs: z.array(z.object({ txID: z.string().optional(), outputIndex: lake.int32().optional() })),
  }),
  primaryKey: [],
  partitions: perPrimaryAddress,
  request: (_p, partition) => ({
    kind: 'rpc',
    method: 'platform.getBalance',
    params: { addresses: [pAddress(partition.address ?? '')] },
  }),
  records: (body) => {
    if (typeof body !== 'object' || body === null) return [];
    const b = body as Record<string, unknown>;
    return [
      {
        ...b,
        balances: listOf(b.balances),
        unlockeds: listOf(b.unlockeds),
        lockedStakeables: listOf(b.lockedStakeables),
        lockedNotStakeables: listOf(b.lockedNotStakeables),
      },
    ];
  },
});
