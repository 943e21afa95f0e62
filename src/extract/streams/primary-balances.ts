import { balanceRow } from '../../schemas/primary.ts';
import type { Pipeline } from '../pipeline.ts';
import { defineStream, httpGet } from '../stream.ts';

const CHAINS = ['p-chain', 'x-chain', 'c-chain'] as const;

/** The partition value of the current balances; a past one is its UTC date. */
const LATEST = 'latest';

/** A `balancesAsOf` date means its end: the last second of that UTC day. */
const endOfDay = (date: string) => Date.parse(`${date}T23:59:59Z`) / 1000;

/** §2.4's members, each a list of balances, as one row per (member, asset). */
const balanceRows = (body: unknown): unknown[] => {
  const balances = (body as { balances?: unknown } | null)?.balances;
  if (typeof balances !== 'object' || balances === null) return [];
  return Object.entries(balances).flatMap(([category, list]) =>
    Array.isArray(list) ? list.map((b) => ({ category, ...(b as object) })) : [],
  );
};

const asOfDays = (p: Pipeline) => [LATEST, ...(p.primary.balancesAsOf ? [p.primary.balancesAsOf] : [])];

/**
 * §4.3 balances of each configured address on the P-, X- and C-Chain (the C-Chain's atomic memory
 * only), one snapshot per run; with `primary.balancesAsOf`, also as of the end of that UTC day.
 */
export const primaryBalances = defineStream({
  name: 'primary_balances',
  description:
    'P-/X-Chain balances and atomic memory of the configured addresses by category and asset, one snapshot per run',
  inputs: 'primary.addresses',
  strategy: 'snapshot',
  schema: balanceRow,
  primaryKey: ['category', 'assetId', 'sharedWithChainId'],
  partitions: (p) =>
    CHAINS.flatMap((chain) =>
      p.primary.addresses.flatMap((address) =>
        asOfDays(p).map((asOfDay) => ({ network: p.network, chain, address, asOfDay })),
      ),
    ),
  request: (p, partition) =>
    httpGet({
      service: 'data',
      route: '/v1/networks/{network}/blockchains/{blockchainId}/balances',
      params: { network: p.network, blockchainId: partition.chain },
      query: {
        addresses: partition.address,
        blockTimestamp:
          partition.asOfDay && partition.asOfDay !== LATEST ? endOfDay(partition.asOfDay) : undefined,
      },
    }),
  records: balanceRows,
});
