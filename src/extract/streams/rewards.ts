import { z } from 'zod';
import { assetAmount, price } from '../../schemas/avalanche.ts';
import { lake } from '../../schemas/lake.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_PAGE_SIZE } from './fields.ts';

/**
 * §4.5 historical rewards, per reward address and per validator node id (`subject`). Rewards never
 * change once paid, and the listing is newest first, so a run reads only the pages above the last one;
 * a first run reads down to the pipeline's `start` (the listing takes no time bounds).
 */
export const rewards = defineStream({
  name: 'rewards',
  description: 'Staking rewards paid, one row per reward UTXO',
  inputs: 'primary.addresses or primary.nodeIds',
  strategy: 'newest-first',
  schema: z.object({
    utxoId: z.string(),
    txHash: z.string(),
    rewardTxHash: z.string(),
    rewardType: z.enum(['VALIDATOR', 'DELEGATOR', 'VALIDATOR_FEE']),
    nodeId: z.string(),
    addresses: z.array(z.string()),
    amountStaked: lake.amount(),
    startTimestamp: lake.timestamp(),
    endTimestamp: lake.timestamp(),
    outputIndex: lake.int32(),
    reward: assetAmount.extend({ historicalPrice: price.optional() }),
  }),
  primaryKey: ['utxoId'],
  // The listing is sorted by when the reward was paid: a validator's or delegator's reward at the end of
  // its own period, a validator's fee on a delegation (since Cortina) at the end of the VALIDATOR's
  // period, which the record does not carry (its times are the delegation's). A fee has no time here
  // then, so the walk never stops at one: stopping at a delegation that ended before `start` would skip
  // rewards paid after it.
  timeOf: (r) => (r.rewardType === 'VALIDATOR_FEE' ? undefined : Number(r.endTimestamp)),
  partitions: (p) =>
    [...p.primary.addresses, ...p.primary.nodeIds].map((subject) => ({ network: p.network, subject })),
  request: (p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/networks/{network}/rewards',
      params: { network: p.network },
      query: {
        [partition.subject?.startsWith('NodeID-') ? 'nodeIds' : 'addresses']: partition.subject,
        sortOrder: 'desc',
      },
    }),
  records: listField('historicalRewards'),
  maxPageSize: MAX_PAGE_SIZE,
});
