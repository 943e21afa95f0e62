import { badRequest } from '../http/errors.ts';

export type Network = 'mainnet' | 'fuji';
export const NETWORKS: readonly Network[] = ['mainnet', 'fuji'];

/** Network ids as the node and Warp messages use them. */
export const NETWORK_ID: Record<Network, number> = { mainnet: 1, fuji: 5 };

/** The primary network's chain ids (from the OpenAPI enums) and the AVAX asset per network. */
export const PRIMARY_CHAINS = {
  mainnet: {
    p: '11111111111111111111111111111111LpoYY',
    x: '2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM',
    c: '2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5',
    avaxAssetId: 'FvwEAhmxKfeiG8SnEvq42hc6whRyY3EFYAvebMqDNDGCgxN5Z',
    cChainEvmId: '43114',
  },
  fuji: {
    p: '11111111111111111111111111111111LpoYY',
    x: '2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm',
    c: 'yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp',
    avaxAssetId: 'U8iRqJoiJm8xZHAacmvYyZVwqQx6uDNtQeP3CQ6fcgQk3JqnK',
    cChainEvmId: '43113',
  },
} as const;

/** The primary network's subnet id (all ones, like the P-Chain id). */
export const PRIMARY_SUBNET_ID = '11111111111111111111111111111111LpoYY';

export type PrimaryChain = 'p' | 'x' | 'c';

/** Path `{network}`: `mainnet`, `fuji` or its alias `testnet`; anything else is a 400 naming it. */
export function parseNetwork(value: string, name = 'network'): Network {
  if (value === 'mainnet') return 'mainnet';
  if (value === 'fuji' || value === 'testnet') return 'fuji';
  throw badRequest(`${name} must be one of the following values: mainnet, fuji, testnet; got "${value}"`);
}

/**
 * Path `{blockchainId}`: a cb58 id of the network's P-, X- or C-Chain or the alias `p-chain`, `x-chain`,
 * `c-chain`, restricted to the chains the endpoint allows.
 */
export function parsePrimaryChain(
  network: Network,
  value: string,
  allowed: readonly PrimaryChain[] = ['p', 'x', 'c'],
): PrimaryChain {
  const ids = PRIMARY_CHAINS[network];
  const byValue: Record<string, PrimaryChain> = {
    'p-chain': 'p',
    'x-chain': 'x',
    'c-chain': 'c',
    [ids.p]: 'p',
    [ids.x]: 'x',
    [ids.c]: 'c',
  };
  const chain = byValue[value];
  if (chain && allowed.includes(chain)) return chain;
  const names = allowed.flatMap((c) => [`${c}-chain`, ids[c]]);
  throw badRequest(
    `blockchainId must be one of the following values for ${network}: ${names.join(', ')}; got "${value}"`,
  );
}
