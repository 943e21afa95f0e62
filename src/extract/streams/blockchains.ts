import { z } from 'zod';
import { defineStream } from '../stream.ts';

/** The primary network's chains; the P-Chain's id is the same on every network. */
const PRIMARY_BLOCKCHAINS: Record<'mainnet' | 'fuji', readonly string[]> = {
  mainnet: [
    '11111111111111111111111111111111LpoYY',
    '2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM',
    '2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5',
  ],
  fuji: [
    '11111111111111111111111111111111LpoYY',
    '2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm',
    'yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp',
  ],
};

/**
 * §4.20 `platform.getBlockchains`: every blockchain the P-Chain knows except itself, one snapshot per
 * run (deprecated on the node, still served).
 */
export const pChainBlockchains = defineStream({
  name: 'p_chain_blockchains',
  description: 'Blockchains registered on the P-Chain (id, name, subnet, VM), one snapshot per run',
  strategy: 'snapshot',
  schema: z.object({ id: z.string(), name: z.string(), subnetID: z.string(), vmID: z.string() }),
  primaryKey: ['id'],
  partitions: (p) => [{ network: p.network }],
  request: () => ({ kind: 'rpc', method: 'platform.getBlockchains', params: {} }),
  records: (body) => {
    const list = (body as { blockchains?: unknown } | null)?.blockchains;
    return Array.isArray(list) ? list : [];
  },
});

/**
 * §4.20 `platform.getBlockchainStatus` of every blockchain the pipeline names: the primary network's P-,
 * X- and C-Chain always, and `primary.blockchains` (the L1 chains `p_chain_blockchains` lists), one
 * snapshot per run and chain (the partition is the blockchain id).
 * Note: a partition needs its id before the run, so the L1 chains come from the pipeline, not from this
 * run's `platform.getBlockchains`; a chain the node does not know answers `Unknown`, which is recorded.
 */
export const blockchainStatus = defineStream({
  name: 'blockchain_status',
  description:
    "The node's status of each chain (Validating, Syncing, …): P, X, C and the configured L1 chains; one snapshot per run",
  strategy: 'snapshot',
  schema: z.object({ status: z.string() }),
  primaryKey: [],
  partitions: (p) =>
    [...new Set([...PRIMARY_BLOCKCHAINS[p.network], ...p.primary.blockchains])].map((blockchainId) => ({
      network: p.network,
      blockchainId,
    })),
  request: (_p, partition) => ({
    kind: 'rpc',
    method: 'platform.getBlockchainStatus',
    params: { blockchainID: partition.blockchainId },
  }),
  records: (body) => (typeof body === 'object' && body !== null ? [body] : []),
});
