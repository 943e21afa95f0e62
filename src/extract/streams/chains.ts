import { z } from 'zod';
import { lake } from '../../schemas/lake.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField } from './fields.ts';

/** `all` is the listing without the `feature` filter; the others are §4.17's feature values. */
const FEATURES = ['all', 'nftIndexing', 'webhooks', 'teleporter'] as const;

/**
 * §4.17 the EVM chains the Data API supports on the pipeline's network, per feature: a dimension, one
 * snapshot per run (one request per feature, 1 CU each). Fed whenever the pipeline reads EVM chains.
 */
export const chains = defineStream({
  name: 'chains',
  description: 'EVM chains the Data API supports, per enabled feature; a snapshot per run',
  strategy: 'snapshot',
  schema: z.object({
    chainId: z.string(),
    status: z.string(),
    chainName: z.string(),
    description: z.string(),
    platformChainId: z.string().optional(),
    subnetId: z.string().optional(),
    vmId: z.string().optional(),
    vmName: z.string(),
    explorerUrl: z.string().optional(),
    rpcUrl: z.string(),
    wsUrl: z.string().optional(),
    isTestnet: z.boolean(),
    utilityAddresses: z.object({ multicall: z.string().optional() }).optional(),
    networkToken: z.object({
      name: z.string(),
      symbol: z.string(),
      decimals: lake.int32(),
      logoUri: z.string().optional(),
      description: z.string().optional(),
    }),
    chainLogoUri: z.string().optional(),
    private: z.boolean().optional(),
    enabledFeatures: z.array(z.string()).optional(),
  }),
  primaryKey: ['chainId'],
  partitions: (p) =>
    p.evm.chains.length + p.metrics.chains.length + p.icm.addresses.length > 0
      ? FEATURES.map((feature) => ({ network: p.network, feature }))
      : [],
  request: (p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/chains',
      params: {},
      query: { network: p.network, feature: partition.feature === 'all' ? undefined : partition.feature },
    }),
  records: listField('chains'),
});
