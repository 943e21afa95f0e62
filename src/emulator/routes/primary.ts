/**
 * Data API primary-network routes (api-surfaces.md §4.1–§4.8), answered from world.primary(network).
 *
 * Deliberate choices where api-surfaces.md is silent or differs from the OpenAPI document:
 * - Transaction shapes per chain follow the OpenAPI: P-Chain `PChainTransaction`, X-Chain
 *   `XChainNonLinearTransaction` (every X-Chain transaction sits in a vertex of §4.8), C-Chain
 *   `CChainExportTransaction` / `CChainImportTransaction`; UTXOs are `PChainUtxo` on the P-Chain and `Utxo`
 *   elsewhere. Balances follow `PChainBalance`, `XChainBalances` and `CChainAtomicBalances`.
 * - Delegators: completed ones carry grossReward/netReward; active and pending ones carry the OpenAPI's
 *   estimatedGrossReward/estimatedNetReward and also grossReward/netReward (§2.6 lists them for all).
 * - sortOrder defaults to `desc` (newest first) everywhere; node blocks and vertices are newest first.
 * - Timestamp filters are inclusive at both ends; startTimestamp > endTimestamp is a 400.
 * - listStaking lists every staking transaction (validations, delegations, subnet validations) of the
 *   addresses, whatever its state; without addresses it lists them all.
 * - Balances without addresses are empty; `blockTimestamp` after 'now' is answered as of 'now'.
 * - Blocks proposed by a node exist for the P-Chain only; the X- and C-Chain answer an empty list.
 * - A UTXO exported to a chain is listed (and counted as atomic memory) on the chain that imports it.
 */
import { isEvmAddress, isNodeId, normalizePrimaryAddress } from '../encoding.ts';
import { badRequest } from '../http/errors.ts';
import { compareTuples, type FetchSlice, type Position } from '../http/paging.ts';
import type { Query } from '../http/query.ts';
import { defineRoutes, type RequestContext } from '../http/route.ts';
import {
  type Network,
  PRIMARY_CHAINS,
  type PrimaryChain,
  parseNetwork,
  parsePrimaryChain,
} from '../world/networks.ts';
import {
  type Bucket,
  type PrimaryNetwork,
  shapes,
  type TxRec,
  type UtxoRec,
} from '../world/primary/index.ts';

const TX_TYPES = [
  'AddValidatorTx',
  'AddSubnetValidatorTx',
  'AddDelegatorTx',
  'CreateChainTx',
  'CreateSubnetTx',
  'ImportTx',
  'ExportTx',
  'AdvanceTimeTx',
  'RewardValidatorTx',
  'RemoveSubnetValidatorTx',
  'TransformSubnetTx',
  'AddPermissionlessValidatorTx',
  'AddPermissionlessDelegatorTx',
  'BaseTx',
  'TransferSubnetOwnershipTx',
  'ConvertSubnetToL1Tx',
  'RegisterL1ValidatorTx',
  'SetL1ValidatorWeightTx',
  'DisableL1ValidatorTx',
  'IncreaseL1ValidatorBalanceTx',
  'UNKNOWN',
  'CreateAssetTx',
  'OperationTx',
] as const;
const STAKING_TYPES = new Set([
  'AddValidatorTx',
  'AddPermissionlessValidatorTx',
  'AddDelegatorTx',
  'AddPermissionlessDelegatorTx',
  'AddSubnetValidatorTx',
]);
const CURRENCIES = [
  'usd',
  'eur',
  'aud',
  'cad',
  'chf',
  'clp',
  'cny',
  'czk',
  'dkk',
  'gbp',
  'hkd',
  'huf',
  'jpy',
  'nzd',
] as const;
const CHAIN_NAMES = { p: 'p-chain', x: 'x-chain', c: 'c-chain' } as const;

/** What every primary route starts from: the network (its path spelling kept for chainInfo) and its world. */
function networkOf(ctx: RequestContext): { network: Network; primary: PrimaryNetwork; label: string } {
  const network = parseNetwork(ctx.params.network as string);
  const label = ctx.params.network === 'testnet' ? 'testnet' : network;
  return { network, primary: ctx.world.primary(network), label };
}

const chainInfo = (chain: PrimaryChain, label: string) => ({ chainName: CHAIN_NAMES[chain], network: label });

/** `addresses`, each a bech32 address of the network (optionally `P-`/`X-`/`C-`), or 0x where allowed. */
function parseAddresses(q: Query, network: Network, name: string, allowEvm = false): string[] {
  return [
    ...new Set(
      q.list(name).map((raw) => {
        if (allowEvm && isEvmAddress(raw)) return raw.toLowerCase();
        const address = normalizePrimaryAddress(raw, network);
        if (!address)
          throw badRequest(
            `${name} must be a comma-separated list of ${network} addresses starting with "${network === 'mainnet' ? 'avax' : 'fuji'}1"${allowEvm ? ' (or 0x EVM addresses for the C-Chain)' : ''}; got "${raw}"`,
          );
        return address;
      }),
    ),
  ];
}

function parseNodeIds(q: Query, name: string): string[] {
  const ids = q.list(name);
  for (const id of ids)
    if (!isNodeId(id))
      throw badRequest(`${name} must be a comma-separated list of NodeID-… node ids; got "${id}"`);
  return ids;
}

function timeRange(q: Query): { start: number; end: number } {
  const start = q.int('startTimestamp', { min: 0 });
  const end = q.int('endTimestamp', { min: 0 });
  if (start !== undefined && end !== undefined && start > end)
    throw badRequest(`startTimestamp must be less than or equal to endTimestamp, got ${start} > ${end}`);
  return { start: start ?? 0, end: end ?? Number.MAX_SAFE_INTEGER };
}

const direction = (q: Query): 1 | -1 =>
  q.oneOf('sortOrder', ['asc', 'desc'] as const, 'desc') === 'asc' ? 1 : -1;

/**
 * A listing over `items` (sorted ascending by `keyOf`), read in `dir`, keeping what `keep` accepts. The
 * position is the key of the last item served, so items the world adds while a walk is under way neither
 * repeat nor shift it; a next position is given only when another matching item exists.
 */
function scan<T>(
  items: readonly T[],
  keyOf: (t: T) => Position,
  dir: 1 | -1,
  keep: (t: T) => boolean = () => true,
): FetchSlice<T> {
  const cmp = compareTuples(1);
  const firstAbove = (position: Position, strict: boolean) => {
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = cmp(keyOf(items[mid] as T), position);
      if (c < 0 || (strict && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return (position, limit) => {
    let i =
      position === undefined
        ? dir === 1
          ? 0
          : items.length - 1
        : dir === 1
          ? firstAbove(position, true)
          : firstAbove(position, false) - 1;
    const page: T[] = [];
    for (; i >= 0 && i < items.length; i += dir) {
      const item = items[i] as T;
      if (!keep(item)) continue;
      if (page.length === limit) return { items: page, next: keyOf(page.at(-1) as T) };
      page.push(item);
    }
    return { items: page };
  };
}

/** Items of several ascending per-address lists, merged ascending by `order`, each once. */
function union<T>(lists: readonly (readonly T[])[], order: (t: T) => number): T[] {
  if (lists.length === 1) return lists[0] as T[];
  const seen = new Set<number>();
  return lists
    .flat()
    .filter((t) => !seen.has(order(t)) && seen.add(order(t)) !== undefined)
    .sort((a, b) => order(a) - order(b));
}

function listTransactions(ctx: RequestContext, staking: boolean) {
  const { network, primary, label } = networkOf(ctx);
  const chain = parsePrimaryChain(
    network,
    ctx.params.blockchainId as string,
    staking ? ['p'] : ['p', 'x', 'c'],
  );
  const q = ctx.query;
  const addresses = parseAddresses(q, network, 'addresses', chain === 'c');
  const txTypes = q.list('txTypes');
  for (const t of txTypes)
    if (!(TX_TYPES as readonly string[]).includes(t))
      throw badRequest(`txTypes must be a list of the following values: ${TX_TYPES.join(', ')}; got "${t}"`);
  if (!staking && addresses.length === 0)
    for (const name of ['txTypes', 'startTimestamp', 'endTimestamp'])
      if (q.has(name))
        throw badRequest(`${name} is only supported together with addresses; send addresses or drop ${name}`);
  const { start, end } = timeRange(q);
  const l1ValidationId = staking ? undefined : q.string('l1ValidationId');
  if (l1ValidationId !== undefined && chain !== 'p')
    throw badRequest(
      `l1ValidationId applies to the P-Chain only; got blockchainId "${ctx.params.blockchainId}"`,
    );
  const pageSize = q.pageSize();
  const dir = direction(q);
  const all = primary.transactions(chain, ctx.now);
  const items: readonly TxRec[] =
    addresses.length > 0
      ? union(
          addresses.map((a) => primary.txIndexesOf(a, chain, ctx.now)),
          (i) => i,
        )
          .filter((i) => i < all.length)
          .map((i) => all[i] as TxRec)
      : all;
  const types = new Set(txTypes);
  const keep = (tx: TxRec) =>
    (!staking || STAKING_TYPES.has(tx.type)) &&
    (types.size === 0 || types.has(tx.type)) &&
    tx.time >= start &&
    tx.time <= end &&
    (l1ValidationId === undefined || !!tx.l1?.validators.some((v) => v.validationId === l1ValidationId));
  const page = ctx.page(
    pageSize,
    scan(items, (tx) => tx.index, dir, keep),
  );
  return {
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    transactions: page.items.map((tx) => shapes.txShape(network, tx, ctx.now)),
    chainInfo: chainInfo(chain, label),
  };
}

const aggregated = (network: Network, b: Bucket) =>
  b.utxos.length > 0 ? [{ ...shapes.avaxAmount(network, b.amount), utxoCount: b.utxos.length }] : [];

function getBalances(ctx: RequestContext) {
  const { network, primary, label } = networkOf(ctx);
  const chain = parsePrimaryChain(network, ctx.params.blockchainId as string);
  const addresses = parseAddresses(ctx.query, network, 'addresses', chain === 'c');
  const at = Math.min(ctx.query.int('blockTimestamp', { min: 0 }) ?? ctx.now, ctx.now);
  const b = primary.balances(chain, addresses, at);
  const atomic = [...b.atomic].map(([from, bucket]) => ({
    ...shapes.avaxAmount(network, bucket.amount),
    utxoCount: bucket.utxos.length,
    sharedWithChainId: PRIMARY_CHAINS[network][from],
    ...(chain === 'p' ? { status: 'pendingImport' } : {}),
  }));
  const balances =
    chain === 'p'
      ? {
          unlockedUnstaked: aggregated(network, b.unlockedUnstaked),
          unlockedStaked: aggregated(network, b.unlockedStaked),
          lockedPlatform: [],
          lockedStakeable: [],
          lockedStaked: [],
          pendingStaked: aggregated(network, b.pendingStaked),
          atomicMemoryUnlocked: atomic,
          atomicMemoryLocked: [],
        }
      : chain === 'x'
        ? {
            locked: [],
            unlocked: aggregated(network, b.unlockedUnstaked),
            atomicMemoryUnlocked: atomic,
            atomicMemoryLocked: [],
          }
        : { atomicMemoryUnlocked: atomic, atomicMemoryLocked: [] };
  return { balances, chainInfo: chainInfo(chain, label) };
}

const AMOUNT_DIGITS = 24;

function listUtxos(ctx: RequestContext) {
  const { network, primary, label } = networkOf(ctx);
  const chain = parsePrimaryChain(network, ctx.params.blockchainId as string);
  const q = ctx.query;
  const addresses = parseAddresses(q, network, 'addresses', chain === 'c');
  const pageSize = q.pageSize();
  const rawMin = q.string('minUtxoAmount');
  if (rawMin !== undefined && !/^\d+(\.\d+)?$/.test(rawMin))
    throw badRequest(`minUtxoAmount must be a number not less than 0, got "${rawMin}"`);
  const minAmount =
    rawMin === undefined
      ? 0n
      : BigInt(rawMin.split('.')[0] as string) +
        (rawMin.includes('.') && /[1-9]/.test(rawMin.split('.')[1] as string) ? 1n : 0n);
  const includeSpent = q.bool('includeSpent', false);
  const sortBy = q.oneOf('sortBy', ['timestamp', 'amount'] as const, 'timestamp');
  const dir = direction(q);
  const assetId = chain === 'x' ? q.string('assetId') : undefined;
  const now = ctx.now;
  const candidates =
    addresses.length > 0
      ? union(
          addresses.map((a) => primary.utxosOf(a, chain, now)),
          (u) => u.seq,
        )
      : primary.utxos(chain, now);
  const keep = (u: UtxoRec) =>
    u.createdAt <= now &&
    (includeSpent || !u.spent || u.spent.at > now) &&
    u.amount >= minAmount &&
    (assetId === undefined || assetId === PRIMARY_CHAINS[network].avaxAssetId);
  const fetch =
    sortBy === 'timestamp'
      ? scan(candidates, (u) => u.seq, dir, keep)
      : (() => {
          const key = (u: UtxoRec): Position => [u.amount.toString().padStart(AMOUNT_DIGITS, '0'), u.seq];
          const cmp = compareTuples(1);
          const sorted = candidates.filter(keep).sort((a, b) => cmp(key(a), key(b)));
          return scan(sorted, key, dir);
        })();
  const page = ctx.page(pageSize, fetch);
  return {
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    utxos: page.items.map((u) => shapes.utxoShape(network, chain, u, now)),
    chainInfo: chainInfo(chain, label),
  };
}

function listRewards(ctx: RequestContext) {
  const { network, primary } = networkOf(ctx);
  const q = ctx.query;
  const addresses = new Set(parseAddresses(q, network, 'addresses'));
  const nodeIds = new Set(parseNodeIds(q, 'nodeIds'));
  if (addresses.size === 0 && nodeIds.size === 0)
    throw badRequest('At least one of addresses or nodeIds is required: send addresses, nodeIds or both');
  const pageSize = q.pageSize();
  const dir = direction(q);
  const currency = q.oneOf('currency', CURRENCIES, 'usd');
  const page = ctx.page(
    pageSize,
    scan(
      primary.rewards(ctx.now),
      (r) => r.utxo.seq,
      dir,
      (r) =>
        (addresses.size === 0 || r.utxo.addresses.some((a) => addresses.has(a))) &&
        (nodeIds.size === 0 || nodeIds.has(r.stake.nodeId)),
    ),
  );
  return {
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    historicalRewards: page.items.map((r) =>
      shapes.historicalReward(network, r.utxo, r.stake, {
        currencyCode: currency,
        value: primary.priceAt(r.utxo.createdAt, currency),
      }),
    ),
  };
}

function listDelegators(ctx: RequestContext) {
  const { network, primary } = networkOf(ctx);
  const q = ctx.query;
  const rewardAddresses = new Set(parseAddresses(q, network, 'rewardAddresses'));
  const nodeIds = new Set(parseNodeIds(q, 'nodeIds'));
  const status = q.oneOf('delegationStatus', ['completed', 'active', 'pending'] as const);
  const pageSize = q.pageSize();
  const dir = direction(q);
  const now = ctx.now;
  const page = ctx.page(
    pageSize,
    scan(
      primary.delegations(now),
      (s) => s.tx.index,
      dir,
      (s) =>
        (rewardAddresses.size === 0 || s.rewardAddresses.some((a) => rewardAddresses.has(a))) &&
        (nodeIds.size === 0 || nodeIds.has(s.nodeId)) &&
        (status === undefined || shapes.delegationStatus(s, now) === status),
    ),
  );
  return {
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    delegators: page.items.map((s) => shapes.delegatorShape(s, now)),
  };
}

function listNodeBlocks(ctx: RequestContext) {
  const { network, primary, label } = networkOf(ctx);
  const chain = parsePrimaryChain(network, ctx.params.blockchainId as string);
  const nodeId = ctx.params.nodeId as string;
  if (!isNodeId(nodeId)) throw badRequest(`nodeId must be a node id of the form NodeID-…; got "${nodeId}"`);
  const { start, end } = timeRange(ctx.query);
  const pageSize = ctx.query.pageSize();
  const blocks = chain === 'p' ? primary.blocks(ctx.now) : [];
  const page = ctx.page(
    pageSize,
    scan(
      blocks,
      (b) => b.height,
      -1,
      (b) => b.proposer === nodeId && b.time >= start && b.time <= end,
    ),
  );
  return {
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    blocks: page.items.map((b) => ({
      blockNumber: String(b.height),
      blockHash: b.hash,
      parentHash: b.parent,
      blockTimestamp: b.time,
      blockType: b.type,
      txCount: b.txs.length,
      transactions: b.txs.map((tx) => tx.hash),
      blockSizeBytes: b.size,
      l1ValidatorsAccruedFees: b.l1AccruedFees,
      activeL1Validators: b.activeL1Validators,
      currentSupply: b.supply.toString(),
      proposerDetails: {
        proposerId: shapes.proposerIdOf(b),
        proposerParentId: b.parent,
        proposerNodeId: b.proposer,
        proposerPChainHeight: Math.max(0, b.height - 1),
        proposerTimestamp: b.time,
      },
    })),
    chainInfo: chainInfo(chain, label),
  };
}

function listVertices(ctx: RequestContext) {
  const { network, primary, label } = networkOf(ctx);
  const chain = parsePrimaryChain(network, ctx.params.blockchainId as string, ['x']);
  const pageSize = ctx.query.pageSize();
  const page = ctx.page(
    pageSize,
    scan(primary.vertices(ctx.now), (v) => v.index, -1),
  );
  return {
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    vertices: page.items.map((v) => ({
      vertexHash: v.hash,
      parentHashes: v.parents,
      vertexHeight: v.height,
      vertexIndex: v.index,
      vertexTimestamp: v.time,
      txCount: v.txs.length,
      transactions: v.txs.map((tx) => tx.hash),
      vertexSizeBytes: 64 + 32 * v.parents.length + 180 * v.txs.length,
    })),
    chainInfo: chainInfo(chain, label),
  };
}

const base = '/v1/networks/{network}';
const chainBase = `${base}/blockchains/{blockchainId}`;

export const primaryRoutes = defineRoutes([
  {
    service: 'data',
    method: 'GET',
    path: `${chainBase}/transactions`,
    handle: (ctx) => listTransactions(ctx, false),
  },
  {
    service: 'data',
    method: 'GET',
    path: `${chainBase}/transactions:listStaking`,
    handle: (ctx) => listTransactions(ctx, true),
  },
  { service: 'data', method: 'GET', path: `${chainBase}/balances`, handle: getBalances },
  { service: 'data', method: 'GET', path: `${chainBase}/utxos`, handle: listUtxos },
  { service: 'data', method: 'GET', path: `${base}/rewards`, handle: listRewards },
  { service: 'data', method: 'GET', path: `${base}/delegators`, handle: listDelegators },
  { service: 'data', method: 'GET', path: `${chainBase}/nodes/{nodeId}/blocks`, handle: listNodeBlocks },
  { service: 'data', method: 'GET', path: `${chainBase}/vertices`, handle: listVertices },
]);
