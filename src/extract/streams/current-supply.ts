import { z } from 'zod';
import { lake } from '../../schemas/lake.ts';
import { defineStream } from '../stream.ts';

/** The primary network: getCurrentSupply without `subnetID`. */
const PRIMARY = 'primary';

/**
 * §4.20 `platform.getCurrentSupply` of the primary network and each configured subnet: one point per
 * run, so the lake holds a time series (keyed by the P-Chain height it was read at).
 *
 * Note: avalanchego keeps a supply only for permissionless subnets (TransformSubnetTx, which Etna
 * retired) and answers any other "fetching current supply failed: not found": such a subnet's snapshot
 * is empty, not a failure.
 */
export const currentSupply = defineStream({
  name: 'current_supply',
  description:
    'Upper bound of the stakeable supply (nAVAX) per subnet, one point per run at its P-Chain height',
  strategy: 'snapshot',
  schema: z.object({ supply: lake.amount(), height: lake.int64().optional() }),
  primaryKey: ['height'],
  partitions: (p) => [PRIMARY, ...p.primary.subnets].map((subnet) => ({ network: p.network, subnet })),
  request: (_p, partition) => ({
    kind: 'rpc',
    method: 'platform.getCurrentSupply',
    params: partition.subnet === PRIMARY ? {} : { subnetID: partition.subnet },
    absent: (error) => partition.subnet !== PRIMARY && /current supply failed: not found/.test(error.message),
  }),
  records: (body) => (typeof body === 'object' && body !== null ? [body] : []),
});
