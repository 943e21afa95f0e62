import { z } from 'zod';
import { outputOwners } from '../../schemas/avalanche.ts';
import { lake } from '../../schemas/lake.ts';
import type { Pipeline } from '../pipeline.ts';
import { defineStream } from '../stream.ts';

/** The primary network's subnet id: getCurrentValidators without `subnetID`. */
const PRIMARY = 'primary';

const validatorsOf = (body: unknown): Record<string, unknown>[] => {
  const list = (body as { validators?: unknown } | null)?.validators;
  return Array.isArray(list) ? list : [];
};

const subnetsOf = (p: Pipeline) => [PRIMARY, ...p.primary.subnets];

/**
 * `platform.getCurrentValidators` of the primary network and each configured subnet: one snapshot per
 * run. The node costs no compute units, so this is where validator state is cheapest to observe.
 * Fields depend on the subnet kind (primary, permissioned, L1); those absent stay null.
 */
export const validators = defineStream({
  name: 'validators',
  description: 'Current validators of the primary network and configured subnets, one snapshot per run',
  strategy: 'snapshot',
  schema: z.object({
    nodeID: z.string(),
    txID: z.string().optional(),
    validationID: z.string().optional(),
    startTime: lake.timestamp(),
    endTime: lake.timestamp().optional(),
    weight: lake.amount(),
    potentialReward: lake.amount().optional(),
    accruedDelegateeReward: lake.amount().optional(),
    delegationFee: z.coerce.number().optional(),
    uptime: z.coerce.number().optional(),
    connected: z.boolean().optional(),
    delegatorCount: lake.int64().optional(),
    delegatorWeight: lake.amount().optional(),
    publicKey: z.string().optional(),
    signer: z.object({ publicKey: z.string(), proofOfPossession: z.string() }).optional(),
    validationRewardOwner: outputOwners.optional(),
    delegationRewardOwner: outputOwners.optional(),
    remainingBalanceOwner: outputOwners.optional(),
    deactivationOwner: outputOwners.optional(),
    minNonce: lake.int64().optional(),
    balance: lake.amount().optional(),
  }),
  primaryKey: ['nodeID'],
  partitions: (p) => subnetsOf(p).map((subnet) => ({ network: p.network, subnet })),
  request: (_p, partition) => ({
    kind: 'rpc',
    method: 'platform.getCurrentValidators',
    params: partition.subnet === PRIMARY ? {} : { subnetID: partition.subnet },
  }),
  records: validatorsOf,
});

/**
 * The delegators of each configured node id, from `platform.getCurrentValidators` with that one node
 * (the node lists delegators only when asked for exactly one).
 */
export const validatorDelegators = defineStream({
  name: 'validator_delegators',
  description: 'Current delegators of the configured validators, one snapshot per run',
  inputs: 'primary.nodeIds',
  strategy: 'snapshot',
  schema: z.object({
    txID: z.string(),
    nodeID: z.string(),
    startTime: lake.timestamp(),
    endTime: lake.timestamp(),
    weight: lake.amount(),
    potentialReward: lake.amount().optional(),
    rewardOwner: outputOwners.optional(),
  }),
  primaryKey: ['txID'],
  partitions: (p) => p.primary.nodeIds.map((nodeId) => ({ network: p.network, nodeId })),
  request: (_p, partition) => ({
    kind: 'rpc',
    method: 'platform.getCurrentValidators',
    params: { nodeIDs: [partition.nodeId] },
  }),
  records: (body) => validatorsOf(body).flatMap((v) => (Array.isArray(v.delegators) ? v.delegators : [])),
});
