import { z } from 'zod';
import { lake } from '../../schemas/lake.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_PAGE_SIZE } from './fields.ts';

/**
 * §4.6 delegators of a validator node id or to a reward address (`subject`), in every status. A pending
 * or active delegation still changes (its status, its rewards), so each run re-reads those and appends
 * a new version when it differs; completed ones are final.
 */
export const delegators = defineStream({
  name: 'delegators',
  description: 'Delegations to the configured validators and reward addresses, one row per version',
  inputs: 'primary.nodeIds or primary.addresses',
  strategy: 'newest-first',
  schema: z.object({
    txHash: z.string(),
    nodeId: z.string(),
    rewardAddresses: z.array(z.string()),
    amountDelegated: lake.amount(),
    delegationFee: z.string(),
    startTimestamp: lake.timestamp(),
    endTimestamp: lake.timestamp(),
    grossReward: lake.amount().optional(),
    netReward: lake.amount().optional(),
    estimatedGrossReward: lake.amount().optional(),
    estimatedNetReward: lake.amount().optional(),
    delegationStatus: z.enum(['pending', 'active', 'completed']),
  }),
  primaryKey: ['txHash'],
  isFinal: (d) => d.delegationStatus === 'completed',
  // Note: the listing is sorted by acceptance, which the record does not carry; a delegation starts
  // when it is accepted (or later, when pending), so a walk stops at the first one started before `start`.
  timeOf: (d) => Number(d.startTimestamp),
  partitions: (p) =>
    [...p.primary.nodeIds, ...p.primary.addresses].map((subject) => ({ network: p.network, subject })),
  request: (p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/networks/{network}/delegators',
      params: { network: p.network },
      query: {
        [partition.subject?.startsWith('NodeID-') ? 'nodeIds' : 'rewardAddresses']: partition.subject,
        sortOrder: 'desc',
      },
    }),
  records: listField('delegators'),
  maxPageSize: MAX_PAGE_SIZE,
});
