import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cb58Decode } from '../../src/emulator/encoding.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { PRIMARY_CHAINS } from '../../src/emulator/world/networks.ts';
import { CHAIN_METRICS } from '../../src/reference/metrics.ts';
import { fetchJson, type JsonResponse, startEmulator } from '../helpers/emulator.ts';
import { type ApiDocument, findOperation, matchesTemplate, responseValidator } from '../helpers/openapi.ts';

/**
 * Every endpoint of api-surfaces.md §4.1–§4.19 and the metrics service, answered by the emulator and
 * checked against the provider's OpenAPI schema for that operation and status. Where api-surfaces.md
 * deliberately differs from the OpenAPI document, the difference is listed in DELIBERATE_DIFFERENCES
 * (and explained in docs/emulator-vs-openapi.md); nothing else is excused.
 */

/** Parameters taken from the emulator's own world, so every request asks about something that exists. */
interface Params {
  pAddress: string;
  xAddress: string;
  cAddress: string;
  nodeId: string;
  rewardAddress: string;
  evmChainId: string;
  evmAddress: string;
  erc20Address: string;
  nftOwner: string;
  nftContract: string;
  icmAddress: string;
  warpMessageHex: string;
}

interface Case {
  /** OpenAPI operation key, `METHOD /template`. */
  operation: string;
  document?: ApiDocument;
  /** Path and query, relative to the emulator's base URL. */
  url: (p: Params) => string;
  status: number;
  /** Follow `nextPageToken` once and check the later page instead of the first. */
  laterPage?: boolean;
  /** The list field that must hold at least one record, so the schema check has something to bite on. */
  nonEmpty?: string;
  body?: (p: Params) => unknown;
  headers?: Record<string, string>;
  /** For a response that is a oneOf of per-chain shapes: the component schema of this case's chain. */
  variant?: string;
}

/**
 * Differences between the emulator and the OpenAPI document that api-surfaces.md decides (it wins).
 * Each entry excuses only the errors it matches, on its operation; see docs/emulator-vs-openapi.md.
 */
const DELIBERATE_DIFFERENCES: readonly {
  id: string;
  operation: string;
  status: number;
  /** Matches one line of the validator's errors. */
  error: RegExp;
  reason: string;
}[] = [];

/** The §4.18 "earlier form", which the metrics OpenAPI document does not describe at all. */
const AVG_TPS_V1_SCHEMA = {
  type: 'object',
  required: ['results', 'status', 'lastRun'],
  properties: {
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['timestamp', 'value'],
        properties: { timestamp: { type: 'integer' }, value: { type: 'number' } },
      },
    },
    status: { const: 200 },
    lastRun: { type: 'integer' },
    nextPageToken: { type: 'string' },
  },
};

const N = '/v1/networks/mainnet';
const TX = 'GET /v1/networks/{network}/blockchains/{blockchainId}/transactions';
const STAKING = 'GET /v1/networks/{network}/blockchains/{blockchainId}/transactions:listStaking';
const BALANCES = 'GET /v1/networks/{network}/blockchains/{blockchainId}/balances';
const UTXOS = 'GET /v1/networks/{network}/blockchains/{blockchainId}/utxos';
const REWARDS = 'GET /v1/networks/{network}/rewards';
const DELEGATORS = 'GET /v1/networks/{network}/delegators';
const NODE_BLOCKS = 'GET /v1/networks/{network}/blockchains/{blockchainId}/nodes/{nodeId}/blocks';
const VERTICES = 'GET /v1/networks/{network}/blockchains/{blockchainId}/vertices';
const ERC20 = 'GET /v1/chains/{chainId}/addresses/{address}/transactions:listErc20';
const NATIVE_TXS = 'GET /v1/chains/{chainId}/addresses/{address}/transactions:listNative';
const ERC721 = 'GET /v1/chains/{chainId}/addresses/{address}/balances:listErc721';
const NATIVE_BALANCE = 'GET /v1/chains/{chainId}/addresses/{address}/balances:getNative';
const EVM_TXS = 'GET /v1/chains/{chainId}/transactions';
const EVM_BLOCKS = 'GET /v1/chains/{chainId}/blocks';
const NFT_TOKENS = 'GET /v1/chains/{chainId}/nfts/collections/{address}/tokens';
const ICM = 'GET /v1/icm/addresses/{address}/messages';
const CHAINS = 'GET /v1/chains';
const METRIC = 'GET /v2/chains/{chainId}/metrics/{metric}';
const AGGREGATE = 'POST /v1/signatureAggregator/{network}/aggregateSignatures';
const AVG_TPS_V1 = 'GET /v1/avg_tps/{chainId}';

const METRICS = CHAIN_METRICS;

const CASES: Case[] = [
  // §4.1
  {
    operation: TX,
    url: (p) => `${N}/blockchains/p-chain/transactions?addresses=${p.pAddress}`,
    status: 200,
    variant: 'ListPChainTransactionsResponse',
    nonEmpty: 'transactions',
  },
  {
    operation: TX,
    url: (p) => `${N}/blockchains/p-chain/transactions?addresses=${p.pAddress}&pageSize=2`,
    status: 200,
    variant: 'ListPChainTransactionsResponse',
    laterPage: true,
    nonEmpty: 'transactions',
  },
  {
    operation: TX,
    url: () => `${N}/blockchains/p-chain/transactions?pageSize=25`,
    status: 200,
    variant: 'ListPChainTransactionsResponse',
    nonEmpty: 'transactions',
  },
  {
    operation: TX,
    url: (p) => `${N}/blockchains/x-chain/transactions?addresses=${p.xAddress}&sortOrder=asc`,
    status: 200,
    variant: 'ListXChainTransactionsResponse',
    nonEmpty: 'transactions',
  },
  {
    operation: TX,
    url: () => `${N}/blockchains/${PRIMARY_CHAINS.mainnet.x}/transactions?pageSize=2`,
    status: 200,
    variant: 'ListXChainTransactionsResponse',
    laterPage: true,
  },
  {
    operation: TX,
    url: (p) => `${N}/blockchains/c-chain/transactions?addresses=${p.cAddress}`,
    status: 200,
    variant: 'ListCChainAtomicTransactionsResponse',
    nonEmpty: 'transactions',
  },
  {
    operation: TX,
    url: (p) =>
      `${N}/blockchains/p-chain/transactions?addresses=${p.pAddress}&txTypes=AddPermissionlessDelegatorTx,AddDelegatorTx&startTimestamp=0&endTimestamp=4000000000&sortOrder=desc`,
    status: 200,
    variant: 'ListPChainTransactionsResponse',
  },
  {
    operation: TX,
    url: () => `/v1/networks/testnet/blockchains/p-chain/transactions?pageSize=5`,
    status: 200,
    variant: 'ListPChainTransactionsResponse',
    nonEmpty: 'transactions',
  },
  { operation: TX, url: () => `${N}/blockchains/d-chain/transactions`, status: 400 },
  { operation: TX, url: () => `${N}/blockchains/p-chain/transactions?pageSize=101`, status: 400 },
  // §4.2
  {
    operation: STAKING,
    url: (p) => `${N}/blockchains/p-chain/transactions:listStaking?addresses=${p.rewardAddress}`,
    status: 200,
  },
  {
    operation: STAKING,
    url: (p) => `${N}/blockchains/p-chain/transactions:listStaking?addresses=${p.rewardAddress}&pageSize=1`,
    status: 200,
    laterPage: true,
  },
  {
    operation: STAKING,
    url: (p) => `${N}/blockchains/x-chain/transactions:listStaking?addresses=${p.xAddress}`,
    status: 400,
  },
  // §4.3
  {
    operation: BALANCES,
    url: (p) => `${N}/blockchains/p-chain/balances?addresses=${p.pAddress}`,
    status: 200,
    variant: 'ListPChainBalancesResponse',
  },
  {
    operation: BALANCES,
    url: (p) => `${N}/blockchains/x-chain/balances?addresses=${p.xAddress}`,
    status: 200,
    variant: 'ListXChainBalancesResponse',
  },
  {
    operation: BALANCES,
    url: (p) => `${N}/blockchains/c-chain/balances?addresses=${p.cAddress}`,
    status: 200,
    variant: 'ListCChainAtomicBalancesResponse',
  },
  {
    operation: BALANCES,
    url: (p) => `${N}/blockchains/p-chain/balances?addresses=${p.pAddress}&blockTimestamp=1790000000`,
    status: 200,
    variant: 'ListPChainBalancesResponse',
  },
  {
    operation: BALANCES,
    url: (p) => `${N}/blockchains/p-chain/balances?addresses=${p.pAddress}&blockTimestamp=-1`,
    status: 400,
  },
  // §4.4
  {
    operation: UTXOS,
    url: (p) => `${N}/blockchains/p-chain/utxos?addresses=${p.pAddress}`,
    status: 200,
    variant: 'ListPChainUtxosResponse',
    nonEmpty: 'utxos',
  },
  {
    operation: UTXOS,
    url: (p) =>
      `${N}/blockchains/p-chain/utxos?addresses=${p.pAddress}&includeSpent=true&sortBy=amount&sortOrder=desc&pageSize=2`,
    status: 200,
    variant: 'ListPChainUtxosResponse',
    laterPage: true,
    nonEmpty: 'utxos',
  },
  {
    operation: UTXOS,
    url: (p) =>
      `${N}/blockchains/x-chain/utxos?addresses=${p.xAddress}&assetId=${PRIMARY_CHAINS.mainnet.avaxAssetId}&minUtxoAmount=0`,
    status: 200,
    variant: 'ListUtxosResponse',
  },
  {
    operation: UTXOS,
    url: (p) => `${N}/blockchains/c-chain/utxos?addresses=${p.cAddress}&includeSpent=true`,
    status: 200,
    variant: 'ListUtxosResponse',
  },
  {
    operation: UTXOS,
    url: (p) => `${N}/blockchains/p-chain/utxos?addresses=${p.pAddress}&minUtxoAmount=-1`,
    status: 400,
  },
  // §4.5
  {
    operation: REWARDS,
    url: (p) => `${N}/rewards?addresses=${p.rewardAddress}`,
    status: 200,
    nonEmpty: 'historicalRewards',
  },
  {
    operation: REWARDS,
    url: (p) => `${N}/rewards?nodeIds=${p.nodeId}&pageSize=1&currency=eur&sortOrder=asc`,
    status: 200,
    laterPage: true,
    nonEmpty: 'historicalRewards',
  },
  { operation: REWARDS, url: () => `${N}/rewards`, status: 400 },
  // §4.6
  { operation: DELEGATORS, url: () => `${N}/delegators`, status: 200, nonEmpty: 'delegators' },
  {
    operation: DELEGATORS,
    url: () => `${N}/delegators?pageSize=3`,
    status: 200,
    laterPage: true,
    nonEmpty: 'delegators',
  },
  {
    operation: DELEGATORS,
    url: (p) => `${N}/delegators?nodeIds=${p.nodeId}&delegationStatus=completed&sortOrder=asc`,
    status: 200,
  },
  {
    operation: DELEGATORS,
    url: (p) => `${N}/delegators?rewardAddresses=${p.rewardAddress}`,
    status: 200,
    nonEmpty: 'delegators',
  },
  { operation: DELEGATORS, url: () => `${N}/delegators?delegationStatus=finished`, status: 400 },
  // §4.7
  {
    operation: NODE_BLOCKS,
    url: (p) => `${N}/blockchains/p-chain/nodes/${p.nodeId}/blocks`,
    status: 200,
    nonEmpty: 'blocks',
  },
  {
    operation: NODE_BLOCKS,
    url: (p) => `${N}/blockchains/p-chain/nodes/${p.nodeId}/blocks?pageSize=1&startTimestamp=0`,
    status: 200,
    laterPage: true,
  },
  {
    operation: NODE_BLOCKS,
    url: (p) => `${N}/blockchains/p-chain/nodes/${p.nodeId}/blocks?pageSize=0`,
    status: 400,
  },
  // §4.8
  { operation: VERTICES, url: () => `${N}/blockchains/x-chain/vertices`, status: 200, nonEmpty: 'vertices' },
  {
    operation: VERTICES,
    url: () => `${N}/blockchains/x-chain/vertices?pageSize=2`,
    status: 200,
    laterPage: true,
    nonEmpty: 'vertices',
  },
  { operation: VERTICES, url: () => `${N}/blockchains/p-chain/vertices`, status: 400 },
  // §4.9
  {
    operation: ERC20,
    url: (p) => `/v1/chains/${p.evmChainId}/addresses/${p.erc20Address}/transactions:listErc20`,
    status: 200,
    nonEmpty: 'transactions',
  },
  {
    operation: ERC20,
    url: (p) =>
      `/v1/chains/${p.evmChainId}/addresses/${p.erc20Address}/transactions:listErc20?pageSize=1&startBlock=0`,
    status: 200,
    laterPage: true,
  },
  {
    operation: ERC20,
    url: (p) => `/v1/chains/${p.evmChainId}/addresses/${p.erc20Address}/transactions:listErc20?pageSize=500`,
    status: 400,
  },
  // §4.10
  {
    operation: NATIVE_TXS,
    url: (p) => `/v1/chains/${p.evmChainId}/addresses/${p.evmAddress}/transactions:listNative`,
    status: 200,
    nonEmpty: 'transactions',
  },
  {
    operation: NATIVE_TXS,
    url: (p) =>
      `/v1/chains/${p.evmChainId}/addresses/${p.evmAddress}/transactions:listNative?pageSize=1&endBlock=999999999`,
    status: 200,
    laterPage: true,
  },
  // §4.11
  {
    operation: ERC721,
    url: (p) => `/v1/chains/${p.evmChainId}/addresses/${p.nftOwner}/balances:listErc721?pageSize=500`,
    status: 200,
    nonEmpty: 'erc721TokenBalances',
  },
  {
    operation: ERC721,
    url: (p) =>
      `/v1/chains/${p.evmChainId}/addresses/${p.nftOwner}/balances:listErc721?contractAddress=${p.nftContract}`,
    status: 200,
  },
  {
    operation: ERC721,
    url: (p) => `/v1/chains/${p.evmChainId}/addresses/${p.nftOwner}/balances:listErc721?pageSize=501`,
    status: 400,
  },
  // §4.12
  {
    operation: NATIVE_BALANCE,
    url: (p) => `/v1/chains/${p.evmChainId}/addresses/${p.evmAddress}/balances:getNative`,
    status: 200,
  },
  {
    operation: NATIVE_BALANCE,
    url: (p) =>
      `/v1/chains/${p.evmChainId}/addresses/${p.evmAddress}/balances:getNative?blockNumber=1&currency=eur`,
    status: 200,
  },
  {
    operation: NATIVE_BALANCE,
    url: (p) => `/v1/chains/${p.evmChainId}/addresses/${p.evmAddress}/balances:getNative?currency=xyz`,
    status: 400,
  },
  // §4.13
  {
    operation: EVM_TXS,
    url: (p) => `/v1/chains/${p.evmChainId}/transactions`,
    status: 200,
    nonEmpty: 'transactions',
  },
  {
    operation: EVM_TXS,
    url: (p) => `/v1/chains/${p.evmChainId}/transactions?pageSize=2&status=success`,
    status: 200,
    laterPage: true,
    nonEmpty: 'transactions',
  },
  { operation: EVM_TXS, url: (p) => `/v1/chains/${p.evmChainId}/transactions?status=failed`, status: 200 },
  { operation: EVM_TXS, url: (p) => `/v1/chains/${p.evmChainId}/transactions?status=pending`, status: 400 },
  // §4.14
  { operation: EVM_BLOCKS, url: (p) => `/v1/chains/${p.evmChainId}/blocks`, status: 200, nonEmpty: 'blocks' },
  {
    operation: EVM_BLOCKS,
    url: (p) => `/v1/chains/${p.evmChainId}/blocks?pageSize=2`,
    status: 200,
    laterPage: true,
    nonEmpty: 'blocks',
  },
  { operation: EVM_BLOCKS, url: (p) => `/v1/chains/${p.evmChainId}/blocks?pageSize=abc`, status: 400 },
  // §4.15
  {
    operation: NFT_TOKENS,
    url: (p) => `/v1/chains/${p.evmChainId}/nfts/collections/${p.nftContract}/tokens`,
    status: 200,
    nonEmpty: 'tokens',
  },
  {
    operation: NFT_TOKENS,
    url: (p) => `/v1/chains/${p.evmChainId}/nfts/collections/${p.nftContract}/tokens?pageSize=1`,
    status: 200,
    laterPage: true,
  },
  // §4.16
  {
    operation: ICM,
    url: (p) => `/v1/icm/addresses/${p.icmAddress}/messages`,
    status: 200,
    nonEmpty: 'messages',
  },
  {
    operation: ICM,
    url: (p) => `/v1/icm/addresses/${p.icmAddress}/messages?pageSize=1&network=mainnet`,
    status: 200,
    laterPage: true,
  },
  { operation: ICM, url: (p) => `/v1/icm/addresses/${p.icmAddress}/messages?network=devnet`, status: 400 },
  // §4.17
  { operation: CHAINS, url: () => `/v1/chains`, status: 200, nonEmpty: 'chains' },
  { operation: CHAINS, url: () => `/v1/chains?network=testnet`, status: 200, nonEmpty: 'chains' },
  { operation: CHAINS, url: () => `/v1/chains?network=mainnet&feature=nftIndexing`, status: 200 },
  { operation: CHAINS, url: () => `/v1/chains?feature=bridges`, status: 400 },
  // §4.18
  ...METRICS.map(
    (metric): Case => ({
      operation: METRIC,
      url: (p) => `/v2/chains/${p.evmChainId}/metrics/${metric}?timeInterval=day&pageSize=10`,
      status: 200,
      nonEmpty: 'results',
    }),
  ),
  ...(['hour', 'week', 'month'] as const).map(
    (interval): Case => ({
      operation: METRIC,
      url: (p) => `/v2/chains/${p.evmChainId}/metrics/txCount?timeInterval=${interval}`,
      status: 200,
      nonEmpty: 'results',
    }),
  ),
  {
    operation: METRIC,
    url: (p) => `/v2/chains/${p.evmChainId}/metrics/activeAddresses?pageSize=3`,
    status: 200,
    laterPage: true,
    nonEmpty: 'results',
  },
  {
    operation: METRIC,
    url: () => `/v2/chains/total/metrics/txCount?timeInterval=day&startTimestamp=0`,
    status: 200,
    nonEmpty: 'results',
  },
  { operation: METRIC, url: () => `/v2/chains/mainnet/metrics/gasUsed`, status: 200 },
  {
    operation: METRIC,
    url: (p) => `/v2/chains/${p.evmChainId}/metrics/avgTps?timeInterval=hour`,
    status: 400,
  },
  { operation: METRIC, url: (p) => `/v2/chains/${p.evmChainId}/metrics/txCount?pageSize=2161`, status: 400 },
  { operation: METRIC, url: (p) => `/v2/chains/${p.evmChainId}/metrics/blockCount`, status: 400 },
  { operation: AVG_TPS_V1, url: (p) => `/v1/avg_tps/${p.evmChainId}`, status: 200, nonEmpty: 'results' },
  // §4.19
  {
    operation: AGGREGATE,
    url: () => `/v1/signatureAggregator/fuji/aggregateSignatures`,
    body: (p) => ({ message: p.warpMessageHex }),
    status: 201,
  },
  {
    operation: AGGREGATE,
    url: () => `/v1/signatureAggregator/mainnet/aggregateSignatures`,
    body: () => ({ quorumPercentage: 67 }),
    status: 400,
  },
  // §5 and §7 on data and metrics routes
  { operation: CHAINS, url: () => `/v1/chains`, headers: { 'x-data-api-key': 'no-such-key' }, status: 401 },
  { operation: CHAINS, url: () => `/v1/chains/`, status: 404 },
];

/** Documents that describe each case's operation; the v1 avg_tps route has none (see the docs). */
const documentedIn = (c: Case): ApiDocument | undefined =>
  c.operation === AVG_TPS_V1
    ? undefined
    : (c.document ?? (c.operation.includes('/metrics/') ? 'metrics' : 'data'));

let emulator: Emulator;
let params: Params;

beforeAll(async () => {
  emulator = await startEmulator();
  params = await discoverParams(emulator.url);
});
afterAll(() => emulator?.close());

describe('every §4 endpoint answers as the OpenAPI document describes', () => {
  it.each(
    CASES.map(
      (c) =>
        [
          `${c.status} ${c.operation} ${c.url(PLACEHOLDERS)}${c.laterPage ? ' (later page)' : ''}`,
          c,
        ] as const,
    ),
  )('%s', async (_name, c) => {
    const res = await fetchCase(emulator.url, c, params);
    expect(res.status, `${c.url(params)} → ${JSON.stringify(res.body)?.slice(0, 300)}`).toBe(c.status);
    if (c.nonEmpty)
      expect((res.body as Record<string, unknown[]>)[c.nonEmpty]?.length ?? 0).toBeGreaterThan(0);
    if (c.status >= 400) expect(res.body).toMatchObject({ statusCode: c.status, error: expect.any(String) });
    expect(conformanceErrors(c, res.body)).toEqual([]);
  });
});

describe('the check bites', () => {
  it('a real answer with a required field removed or mistyped is rejected, naming the field', async () => {
    const res = await fetchJson(`${emulator.url}${N}/rewards?addresses=${params.rewardAddress}`);
    const validate = responseValidator(REWARDS, 200);
    expect(validate(res.body).errors).toEqual([]);
    const broken = structuredClone(res.body) as { historicalRewards: Rec[] };
    delete (broken.historicalRewards[0] as Rec).txHash;
    (broken.historicalRewards[0] as Rec).startTimestamp = '1700000000';
    const errors = validate(broken).errors;
    expect(errors).toContainEqual(
      expect.stringContaining('/historicalRewards/0: is missing required property "txHash"'),
    );
    expect(errors).toContainEqual(
      expect.stringMatching(/^\/historicalRewards\/0\/startTimestamp: must be number/),
    );
  });
});

describe('the table itself', () => {
  it('names real OpenAPI operations, and every URL is an instance of its template', () => {
    for (const c of CASES) {
      if (c.status === 404) continue;
      const template = c.operation.split(' ')[1] as string;
      expect(
        matchesTemplate(template, c.url(PLACEHOLDERS).split('?')[0] as string),
        c.url(PLACEHOLDERS),
      ).toBe(true);
      const doc = documentedIn(c);
      if (doc) expect(findOperation(c.operation, doc).statuses).toContain(String(c.status));
      if (doc && c.variant)
        expect(() => responseValidator(c.operation, c.status, doc, c.variant)).not.toThrow();
    }
  });

  it('covers every endpoint of §4.1–§4.19 and the metrics service with a success and an error', () => {
    const surfaces = [
      TX,
      STAKING,
      BALANCES,
      UTXOS,
      REWARDS,
      DELEGATORS,
      NODE_BLOCKS,
      VERTICES,
      ERC20,
      NATIVE_TXS,
    ];
    surfaces.push(ERC721, NATIVE_BALANCE, EVM_TXS, EVM_BLOCKS, NFT_TOKENS, ICM, CHAINS, METRIC, AGGREGATE);
    for (const op of surfaces) {
      const statuses = CASES.filter((c) => c.operation === op).map((c) => c.status);
      expect(
        statuses.some((s) => s < 300),
        `${op} has a success case`,
      ).toBe(true);
      if (op !== NFT_TOKENS && op !== NATIVE_TXS) expect(statuses, `${op} has a 400 case`).toContain(400);
    }
  });

  it('every deliberate difference names an operation of the table', () => {
    for (const d of DELIBERATE_DIFFERENCES) expect(CASES.map((c) => c.operation)).toContain(d.operation);
  });
});

describe('§7 statuses of the shared machinery match the OpenAPI error schemas', () => {
  it('429 from the rate limiter, on a data and on a metrics route', async () => {
    const limited = await startEmulator({ rateLimit: 'minute=60,day=600,perMinute=100,perDay=1000' });
    try {
      for (const [op, url] of [
        [REWARDS, `${N}/rewards?nodeIds=NodeID-x`],
        [METRIC, '/v2/chains/43114/metrics/txCount'],
      ] as const) {
        await fetchJson(`${limited.url}${url}`);
        const res = await fetchJson(`${limited.url}${url}`);
        expect(res.status).toBe(429);
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
        expect(responseValidator(op, 429)(res.body).errors).toEqual([]);
      }
    } finally {
      await limited.close();
    }
  });

  it('403 for a key barred from the route', async () => {
    const barred = await startEmulator({ keys: 'k1:free:deny=/v1/chains' });
    try {
      const res = await fetchJson(`${barred.url}/v1/chains`, { headers: { 'x-data-api-key': 'k1' } });
      expect(res.status).toBe(403);
      expect(responseValidator(CHAINS, 403)(res.body).errors).toEqual([]);
    } finally {
      await barred.close();
    }
  });

  it.each([500, 502, 503])('%i from an injected fault', async (status) => {
    const faulty = await startEmulator({ faults: `${status}=1` });
    try {
      for (const [op, url] of [
        [CHAINS, '/v1/chains'],
        [METRIC, '/v2/chains/43114/metrics/txCount'],
      ] as const) {
        const res = await fetchJson(`${faulty.url}${url}`);
        expect(res.status).toBe(status);
        expect(responseValidator(op, status)(res.body).errors).toEqual([]);
      }
    } finally {
      await faulty.close();
    }
  });
});

const PLACEHOLDERS: Params = {
  pAddress: '{pAddress}',
  xAddress: '{xAddress}',
  cAddress: '{cAddress}',
  nodeId: '{nodeId}',
  rewardAddress: '{rewardAddress}',
  evmChainId: '{evmChainId}',
  evmAddress: '{evmAddress}',
  erc20Address: '{erc20Address}',
  nftOwner: '{nftOwner}',
  nftContract: '{nftContract}',
  icmAddress: '{icmAddress}',
  warpMessageHex: '{warpMessageHex}',
};

async function fetchCase(base: string, c: Case, p: Params): Promise<JsonResponse> {
  const init = {
    ...(c.body ? { method: 'POST' as const, body: c.body(p) } : {}),
    ...(c.headers ? { headers: c.headers } : {}),
  };
  const first = await fetchJson(`${base}${c.url(p)}`, init);
  if (!c.laterPage) return first;
  const token = (first.body as { nextPageToken?: string } | undefined)?.nextPageToken;
  if (first.status !== 200 || !token)
    throw new Error(
      `${c.url(p)} gave no next page (status ${first.status}): the later page cannot be checked`,
    );
  const u = new URL(`${base}${c.url(p)}`);
  u.searchParams.set('pageToken', token);
  return fetchJson(u.toString(), init);
}

const avgTpsV1 = new Ajv2020({ allErrors: true }).compile(AVG_TPS_V1_SCHEMA);

/** Schema errors of one answer, less the ones a documented deliberate difference excuses. */
function conformanceErrors(c: Case, body: unknown): string[] {
  const doc = documentedIn(c);
  let errors: string[];
  if (doc) errors = responseValidator(c.operation, c.status, doc, c.variant)(body).errors;
  else if (c.status === 200)
    errors = avgTpsV1(body) ? [] : (avgTpsV1.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  else errors = responseValidator(CHAINS, c.status)(body).errors;
  return errors.filter(
    (line) =>
      !DELIBERATE_DIFFERENCES.some(
        (d) => d.operation === c.operation && d.status === c.status && d.error.test(line),
      ),
  );
}

type Rec = Record<string, unknown>;
const recs = (x: unknown): Rec[] => (Array.isArray(x) ? (x as Rec[]) : []);
const str = (x: unknown): string | undefined => (typeof x === 'string' && x !== '' ? x : undefined);

/**
 * Picks real parameters from the emulator's own answers (first pages of listings, then probes of a few
 * candidate addresses), so the table asks about addresses, nodes and contracts that exist in the seeded
 * world, whatever the world's internals look like.
 */
async function discoverParams(base: string): Promise<Params> {
  const get = async (path: string): Promise<Rec> => {
    const res = await fetchJson(`${base}${path}`);
    return res.status === 200 ? (res.body as Rec) : {};
  };
  const utxoAddress = (body: Rec): string | undefined => {
    for (const tx of recs(body.transactions))
      for (const u of [...recs(tx.emittedUtxos), ...recs(tx.consumedUtxos)]) {
        const a = str((u.addresses as unknown[] | undefined)?.[0]);
        if (a) return a;
      }
    return undefined;
  };
  const [p, x, c, delegators] = await Promise.all([
    get(`${N}/blockchains/p-chain/transactions?pageSize=50`),
    get(`${N}/blockchains/x-chain/transactions?pageSize=50`),
    get(`${N}/blockchains/c-chain/transactions?pageSize=50`),
    get(`${N}/delegators?pageSize=50`),
  ]);
  const delegator = recs(delegators.delegators)[0] ?? {};
  const evmChainId = PRIMARY_CHAINS.mainnet.cChainEvmId;
  const evmTxs = recs((await get(`/v1/chains/${evmChainId}/transactions?pageSize=100`)).transactions);
  const candidates = [
    ...new Set(
      evmTxs.flatMap((t) => [
        str((t.from as Rec | undefined)?.address),
        str((t.to as Rec | undefined)?.address),
      ]),
    ),
  ].filter((a): a is string => a !== undefined);
  /** The first candidate whose listing has records in `field`, and that first record. */
  const probe = async (path: (a: string) => string, field: string) => {
    for (const address of candidates.slice(0, 15)) {
      const first = recs((await get(path(address)))[field])[0];
      if (first) return { address, first };
    }
    return undefined;
  };
  const chain = `/v1/chains/${evmChainId}`;
  const erc20 = await probe(
    (a) => `${chain}/addresses/${a}/transactions:listErc20?pageSize=1`,
    'transactions',
  );
  const nft = await probe(
    (a) => `${chain}/addresses/${a}/balances:listErc721?pageSize=1`,
    'erc721TokenBalances',
  );
  const icm = await probe((a) => `/v1/icm/addresses/${a}/messages?pageSize=1`, 'messages');
  const missing = '0x000000000000000000000000000000000000dead';
  return {
    pAddress: utxoAddress(p) ?? 'avax1missing',
    xAddress: utxoAddress(x) ?? 'avax1missing',
    cAddress: utxoAddress(c) ?? 'avax1missing',
    nodeId: str(delegator.nodeId) ?? 'NodeID-missing',
    rewardAddress: str((delegator.rewardAddresses as unknown[] | undefined)?.[0]) ?? 'avax1missing',
    evmChainId,
    evmAddress: candidates[0] ?? missing,
    erc20Address: erc20?.address ?? missing,
    nftOwner: nft?.address ?? missing,
    nftContract: str(nft?.first.address) ?? missing,
    icmAddress: icm?.address ?? missing,
    warpMessageHex: warpMessageFromFujiCChain(),
  };
}

/** The OpenAPI example Warp message, re-addressed to come from the emulated Fuji C-Chain. */
function warpMessageFromFujiCChain(): string {
  const example = JSON.parse(
    readFileSync(new URL('../../../shared/reference/warp-example-decoded.json', import.meta.url), 'utf8'),
  ) as { unsignedMessageHex: string };
  const bytes = Buffer.from(example.unsignedMessageHex, 'hex');
  (cb58Decode(PRIMARY_CHAINS.fuji.c) as Buffer).copy(bytes, 6);
  return `0x${bytes.toString('hex')}`;
}
