/**
 * Data API routes of the EVM chains (api-surfaces.md §4.9–§4.17), answered from `world.evm`.
 *
 * Deliberate differences from the real service (the OpenAPI response schemas still validate):
 * - Addresses are returned lower-case, not EIP-55 mixed-case (Node has no keccak-256); any case is accepted.
 * - An unknown `{chainId}` (neither a listed EVM chain id nor a blockchain id) is a 404 naming it.
 * - `startBlock` >= `endBlock` is a 400; `blockNumber` above the head is a 400.
 * - The NFT tokens of an address that is not a collection on the chain are an empty list.
 * - ICM messages without `network` are mainnet's. Each is sent and delivered by transactions its
 *   chains list (calls of the ICM contract); the deliverer (relayer) is the wallet sending the delivery.
 * - Listings are newest first (blocks by number, transactions by (block, index), ERC-20 transfers by
 *   (block, logIndex), ICM messages by send time, or by delivery time for one whose source was not
 *   indexed); NFT tokens and ERC-721 balances by token id.
 */

import { isEvmAddress } from '../encoding.ts';
import { badRequest, notFound } from '../http/errors.ts';
import { type Position, withNextToken } from '../http/paging.ts';
import type { Query } from '../http/query.ts';
import { defineRoutes, type RequestContext, type Route } from '../http/route.ts';
import { nativeLogoUri } from '../world/evm/addresses.ts';
import type { EvmChain } from '../world/evm/index.ts';
import { NETWORKS, type Network, parseNetwork } from '../world/networks.ts';
import { CURRENCIES, type Currency, type PricedAsset, priceOn, worthOf } from '../world/prices.ts';

const chainOf = (ctx: RequestContext): EvmChain => {
  const id = ctx.params.chainId as string;
  const chain = ctx.world.evm.chain(id);
  if (!chain)
    throw notFound(
      `chainId "${id}" is not a supported EVM chain id or blockchain id; GET /v1/chains lists them`,
    );
  return chain;
};

const evmAddress = (value: string | undefined, name: string): string => {
  if (value === undefined || !isEvmAddress(value))
    throw badRequest(`${name} must be an EVM address (0x followed by 40 hex digits), got "${value ?? ''}"`);
  return value.toLowerCase();
};

const blockRange = (query: Query) => {
  const startBlock = query.int('startBlock', { min: 0 });
  const endBlock = query.int('endBlock', { min: 0 });
  if (startBlock !== undefined && endBlock !== undefined && startBlock >= endBlock)
    throw badRequest(
      `startBlock must be less than endBlock (endBlock is exclusive), got ${startBlock} and ${endBlock}`,
    );
  return { startBlock, endBlock };
};

const pair = (position: Position | undefined) => position as [number, number] | undefined;

/** §2.9 at `block`, priced on that block's day: a past balance is valued at its day's price. */
function nativeTokenBalance(
  ctx: RequestContext,
  chain: EvmChain,
  address: string,
  block: number,
  currency: Currency,
) {
  const { token, evmChainId } = chain.info;
  const time = chain.core.clock.timestampOf(block);
  const price = priceOn(ctx.world.seed, token.symbol as PricedAsset, time, currency);
  const balance = chain.nativeBalance(address, block);
  return {
    name: token.name,
    symbol: token.symbol,
    decimals: token.decimals,
    logoUri: nativeLogoUri(token.symbol),
    chainId: evmChainId,
    price,
    balance: String(balance),
    balanceValue: worthOf(balance, token.decimals, price),
  };
}

const FEATURES = ['nftIndexing', 'webhooks', 'teleporter'] as const;
const FEATURES_BY_KIND = {
  primary: ['nftIndexing', 'webhooks', 'teleporter'],
  l1: ['webhooks', 'teleporter'],
  permissioned: ['teleporter'],
} as const;

function chainInfo(chain: EvmChain) {
  const { info } = chain;
  const testnet = info.network === 'fuji';
  const slug = info.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const rpcHost = testnet ? 'api.avax-test.network' : 'api.avax.network';
  return {
    chainId: info.evmChainId,
    status: 'OK',
    chainName: info.name,
    description: `${info.name}: an EVM chain of the Avalanche ${testnet ? 'Fuji test network' : 'mainnet'}.`,
    platformChainId: info.blockchainId,
    subnetId: info.subnetId,
    vmId: info.vmId,
    vmName: info.vmName,
    explorerUrl: `https://explorer.avalake.invalid/${slug}`,
    rpcUrl: `https://${rpcHost}/ext/bc/${info.validatorSet === 'primary' ? 'C' : info.blockchainId}/rpc`,
    wsUrl: `wss://${rpcHost}/ext/bc/${info.validatorSet === 'primary' ? 'C' : info.blockchainId}/ws`,
    isTestnet: testnet,
    utilityAddresses: { multicall: chain.core.contracts.find((c) => c.kind === 'dapp')?.address ?? '' },
    networkToken: {
      name: info.token.name,
      symbol: info.token.symbol,
      decimals: info.token.decimals,
      logoUri: nativeLogoUri(info.token.symbol),
      description: `The native token of ${info.name}.`,
    },
    chainLogoUri: `https://images.avalake.invalid/chains/${slug}.svg`,
    private: false,
    enabledFeatures: [...FEATURES_BY_KIND[info.validatorSet]],
  };
}

/** §4.9 and §4.10: an address's transfers or transactions on a chain, newest first, in a block range. */
const addressTransactions = (listing: 'listErc20' | 'listNative'): Route => ({
  service: 'data',
  method: 'GET',
  path: `/v1/chains/{chainId}/addresses/{address}/transactions:${listing}`,
  handle(ctx) {
    const chain = chainOf(ctx);
    const address = evmAddress(ctx.params.address, 'address');
    const range = blockRange(ctx.query);
    const page = ctx.page<unknown>(ctx.query.pageSize(100), (position, limit) =>
      chain[listing](address, range, ctx.now, pair(position), limit),
    );
    return { transactions: page.items, ...withNextToken(page) };
  },
});

export const evmRoutes = defineRoutes([
  addressTransactions('listErc20'),
  addressTransactions('listNative'),
  {
    service: 'data',
    method: 'GET',
    path: '/v1/chains/{chainId}/addresses/{address}/balances:listErc721',
    handle(ctx) {
      const chain = chainOf(ctx);
      const address = evmAddress(ctx.params.address, 'address');
      const contract = ctx.query.has('contractAddress')
        ? evmAddress(ctx.query.string('contractAddress'), 'contractAddress')
        : undefined;
      const page = ctx.page(ctx.query.pageSize(500), (position, limit) =>
        chain.listErc721Balances(address, contract, ctx.now, pair(position), limit),
      );
      return {
        nativeTokenBalance: nativeTokenBalance(ctx, chain, address, chain.head(ctx.now), 'usd'),
        erc721TokenBalances: page.items.map((t) => ({ ...t, chainId: chain.info.evmChainId })),
        ...withNextToken(page),
      };
    },
  },
  {
    service: 'data',
    method: 'GET',
    path: '/v1/chains/{chainId}/addresses/{address}/balances:getNative',
    handle(ctx) {
      const chain = chainOf(ctx);
      const address = evmAddress(ctx.params.address, 'address');
      const currency = ctx.query.oneOf('currency', CURRENCIES, 'usd');
      const head = chain.head(ctx.now);
      const raw = ctx.query.string('blockNumber');
      let block = head;
      if (raw !== undefined) {
        if (!/^\d+$/.test(raw)) throw badRequest(`blockNumber must be a non-negative integer, got "${raw}"`);
        block = Number(raw);
        if (block > head)
          throw badRequest(`blockNumber must not be greater than the latest block ${head}, got ${raw}`);
      }
      return { nativeTokenBalance: nativeTokenBalance(ctx, chain, address, block, currency) };
    },
  },
  {
    service: 'data',
    method: 'GET',
    path: '/v1/chains/{chainId}/transactions',
    handle(ctx) {
      const chain = chainOf(ctx);
      const status = ctx.query.oneOf('status', ['failed', 'success'] as const);
      const page = ctx.page(ctx.query.pageSize(100), (position, limit) =>
        chain.listLatestTransactions(status, ctx.now, pair(position), limit),
      );
      return {
        transactions: page.items,
        ...withNextToken(page),
      };
    },
  },
  {
    service: 'data',
    method: 'GET',
    path: '/v1/chains/{chainId}/blocks',
    handle(ctx) {
      const chain = chainOf(ctx);
      const page = ctx.page(ctx.query.pageSize(100), (position, limit) =>
        chain.listBlocks(ctx.now, position as number | undefined, limit),
      );
      return { blocks: page.items, ...withNextToken(page) };
    },
  },
  {
    service: 'data',
    method: 'GET',
    path: '/v1/chains/{chainId}/nfts/collections/{address}/tokens',
    handle(ctx) {
      const chain = chainOf(ctx);
      const address = evmAddress(ctx.params.address, 'address');
      const page = ctx.page(
        ctx.query.pageSize(100),
        (position, limit) =>
          chain.listCollectionTokens(address, ctx.now, position as number | undefined, limit) ?? {
            items: [],
          },
      );
      return { tokens: page.items, ...withNextToken(page) };
    },
  },
  {
    service: 'data',
    method: 'GET',
    path: '/v1/icm/addresses/{address}/messages',
    handle(ctx) {
      const address = evmAddress(ctx.params.address, 'address');
      const raw = ctx.query.string('network');
      const network: Network = raw === undefined ? 'mainnet' : parseNetwork(raw);
      const ledger = ctx.world.evm.icm(network);
      const page = ctx.page(ctx.query.pageSize(100), (position, limit) => {
        const indexes: number[] = [];
        for (const k of ledger.indexesDesc(address, ctx.now, pair(position))) {
          indexes.push(k);
          if (indexes.length > limit) break;
        }
        const items = indexes.slice(0, limit).map((k) => ledger.message(k, ctx.now));
        const last = indexes[limit - 1];
        return indexes.length > limit && last !== undefined
          ? { items, next: [ledger.listedAt(last), last] }
          : { items };
      });
      return { messages: page.items, ...withNextToken(page) };
    },
  },
  {
    service: 'data',
    method: 'GET',
    path: '/v1/chains',
    handle(ctx) {
      const raw = ctx.query.string('network');
      const networks = raw === undefined ? NETWORKS : [parseNetwork(raw)];
      const feature = ctx.query.oneOf('feature', FEATURES);
      const chains = networks
        .flatMap((n) => ctx.world.evm.chains(n))
        .map(chainInfo)
        .filter((c) => feature === undefined || (c.enabledFeatures as readonly string[]).includes(feature));
      return { chains };
    },
  },
]);
