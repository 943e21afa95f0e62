/**
 * Data API primary-network routes (api-surfaces.md §4.1–§4.8), answered from world.primary(network).
 *
 * Deliberate choices where api-surfaces.md is silent or differs from the OpenAPI document (listed with
 * reasons in docs/emulator-vs-openapi.md, "Primary network"):
 * - Transaction shapes per chain follow the OpenAPI: P-Chain `PChainTransaction`, X-Chain
 *   `XChainNonLinearTransaction` (every X-Chain transaction sits in a vertex of §4.8), C-Chain
 *   `CChainExportTransaction` / `CChainImportTransaction`; UTXOs are `PChainUtxo` on the P-Chain and `Utxo`
 *   elsewhere. Balances follow `PChainBalance`, `XChainBalances` and `CChainAtomicBalances`.
 * - Delegators: completed ones carry grossReward/netReward; active and pending ones carry the OpenAPI's
 *   estimatedGrossReward/estimatedNetReward and also grossReward/netReward (§2.6 lists them for all).
 * - sortOrder defaults to `desc` (newest first) everywhere; node blocks and vertices are newest first.
 * - Timestamp filters are inclusive at both ends; startTimestamp > endTimestamp is a 400.
 * - listStaking lists every staking transaction (validations, delegations, subnet validations) of the
 *   addresses whatever its state, not only the active ones §4.2 names: a client that walks it by cursor
 *   would otherwise never see a pending delegation that becomes active later under an older timestamp.
 *   Without addresses it lists them all.
 * - Balances without addresses are empty; `blockTimestamp` after 'now' is answered as of 'now'.
 * - Blocks proposed by a node exist for the P-Chain only; the X- and C-Chain answer an empty list.
 * - A UTXO exported to a chain is listed (and counted as atomic memory) on the chain that imports it.
 * - C-Chain atomic transactions carry the height and hash of the EVM C-Chain block of their time.
 *
 * Every listing walks indexes the world keeps (posting lists by address, type, node; outputs by amount),
 * starting by binary search from the page token's position, so a page costs O(page + log n) whatever the
 * history; the one exception is `minUtxoAmount` with `sortBy=timestamp`, a filter over the walk.
 */
import { PRIMARY_NETWORK_TX_TYPES } from '../../schemas/primary.ts';
import { isEvmAddress, isNodeId, normalizePrimaryAddress } from '../encoding.ts';
import { badRequest } from '../http/errors.ts';
import type { FetchSlice, Position } from '../http/paging.ts';
import type { Query } from '../http/query.ts';
import { defineRoutes, type RequestContext } from '../http/route.ts';
import {
  type Network,
  PRIMARY_CHAINS,
  type PrimaryChain,
  parseNetwork,
  parsePrimaryChain,
} from '../world/networks.ts';
import { CURRENCIES } from '../world/prices.ts';
import {
  type Bucket,
  byAmount,
  bySeq,
  delegationWindow,
  mergeWalks,
  type PBlock,
  type PrimaryNetwork,
  postingKey,
  shapes,
  spentAfter,
  type TxRec,
  type UtxoRec,
  utxoState,
} from '../world/primary/index.ts';

const STAKING_TYPES = new Set([
  'AddValidatorTx',
  'AddPermissionlessValidatorTx',
  'AddDelegatorTx',
  'AddPermissionlessDelegatorTx',
  'AddSubnetValidatorTx',
]);
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

/** Ascending positions of a listing's records: a posting list, or every position below a count. */
interface Run {
  size: number;
  at(i: number): number;
}
const everyPosition = (count: number): Run => ({ size: count, at: (i) => i });
const postingRun = (list: readonly number[]): Run => ({ size: list.length, at: (i) => list[i] as number });

/** The first i in [lo, hi) where `holds(run.at(i))` is false; `holds` is true then false along the run. */
function firstNot(run: Run, lo: number, hi: number, holds: (position: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (holds(run.at(mid))) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The positions of `run` whose record time is in [start, end], strictly after `after` in direction
 * `dir`. Records are in time order, so both bounds are binary searches.
 */
function* walkRun(
  run: Run,
  timeOf: (position: number) => number,
  start: number,
  end: number,
  after: number | undefined,
  dir: 1 | -1,
): Generator<number> {
  let lo = firstNot(run, 0, run.size, (p) => timeOf(p) < start);
  let hi = firstNot(run, lo, run.size, (p) => timeOf(p) <= end);
  if (after !== undefined) {
    if (dir === 1) lo = firstNot(run, lo, hi, (p) => p <= after);
    else hi = firstNot(run, lo, hi, (p) => p < after);
  }
  if (dir === 1) for (let i = lo; i < hi; i++) yield run.at(i);
  else for (let i = hi - 1; i >= lo; i--) yield run.at(i);
}

/** The union of several runs' walks, each position once, in direction `dir`. */
function walkRuns(
  runs: readonly Run[],
  timeOf: (position: number) => number,
  window: { start: number; end: number },
  after: Position | undefined,
  dir: 1 | -1,
): Iterator<number> {
  const from = typeof after === 'number' ? after : undefined;
  const walks = runs.map((run) => walkRun(run, timeOf, window.start, window.end, from, dir));
  return walks.length === 1 ? (walks[0] as Iterator<number>) : mergeWalks(walks, (a, b) => a - b, dir);
}

/**
 * One page from a walk that resumes after a position: up to `limit` items that `keep` accepts, and the
 * last one's key as the next position when another accepted item follows. The position is the key of
 * the last item served, so items the world adds while a walk is under way neither repeat nor shift it.
 */
function sliceOf<T>(
  walkFrom: (after: Position | undefined) => Iterator<T>,
  keyOf: (item: T) => Position,
  keep: (item: T) => boolean = () => true,
): FetchSlice<T> {
  return (position, limit) => {
    const walk = walkFrom(position);
    const items: T[] = [];
    for (let r = walk.next(); !r.done; r = walk.next()) {
      if (!keep(r.value)) continue;
      if (items.length === limit) return { items, next: keyOf(items.at(-1) as T) };
      items.push(r.value);
    }
    return { items };
  };
}

function* mapWalk<A, B>(walk: Iterator<A>, f: (a: A) => B): Generator<B> {
  for (let r = walk.next(); !r.done; r = walk.next()) yield f(r.value);
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
    if (!(PRIMARY_NETWORK_TX_TYPES as readonly string[]).includes(t))
      throw badRequest(
        `txTypes must be a list of the following values: ${PRIMARY_NETWORK_TX_TYPES.join(', ')}; got "${t}"`,
      );
  const l1ValidationId = staking ? undefined : q.string('l1ValidationId');
  if (l1ValidationId !== undefined && chain !== 'p')
    throw badRequest(
      `l1ValidationId applies to the P-Chain only; got blockchainId "${ctx.params.blockchainId}"`,
    );
  // §4.1 rule 1; the OpenAPI document adds that an L1 validation's transactions take these filters too.
  if (!staking && addresses.length === 0 && l1ValidationId === undefined)
    for (const name of ['txTypes', 'startTimestamp', 'endTimestamp'])
      if (q.has(name))
        throw badRequest(
          `${name} is only supported together with addresses or l1ValidationId; send one of them or drop ${name}`,
        );
  const { start, end } = timeRange(q);
  const pageSize = q.pageSize();
  const dir = direction(q);
  const now = ctx.now;
  const count = primary.txCount(chain, now);
  // Staking lists only staking types: the requested ones among them, or all of them.
  const types = staking
    ? (txTypes.length > 0 ? txTypes : [...STAKING_TYPES]).filter((t) => STAKING_TYPES.has(t))
    : txTypes;
  const parties = addresses.length > 0 ? addresses : ['*'];
  const runs: Run[] =
    l1ValidationId !== undefined
      ? [postingRun(primary.postings(postingKey.validation(l1ValidationId), now))]
      : staking && types.length === 0
        ? []
        : addresses.length === 0 && types.length === 0
          ? [everyPosition(count)]
          : parties.flatMap((party) =>
              (types.length > 0 ? types : ['*']).map((type) =>
                postingRun(primary.postings(postingKey.tx(chain, party, type), now)),
              ),
            );
  // Only the validation id's own (short) list needs filtering; every other run is exact.
  const wanted = new Set(types);
  const keep = (tx: TxRec) =>
    l1ValidationId === undefined ||
    ((addresses.length === 0 || addresses.some((a) => tx.parties.includes(a))) &&
      (wanted.size === 0 || wanted.has(tx.type)));
  const timeOf = (i: number) => primary.tx(chain, i).time;
  const page = ctx.page(
    pageSize,
    sliceOf(
      (after) =>
        mapWalk(walkRuns(runs, timeOf, { start, end: Math.min(end, now) }, after, dir), (i) =>
          primary.tx(chain, i),
        ),
      (tx) => tx.index,
      keep,
    ),
  );
  return {
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    transactions: page.items.map((tx) => shapes.txShape(network, tx, now)),
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

/** Items of an array sorted by `cmp`, after `probe` (strictly unless told) in direction `dir`. */
function* walkArray<T>(
  items: readonly T[],
  cmp: (a: T, b: T) => number,
  probe: T | undefined,
  dir: 1 | -1,
  strict = true,
): Generator<T> {
  // The first index whose item is > probe (>= when not strict), or < (<=) going down.
  const bound = (inclusive: boolean) => {
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = cmp(items[mid] as T, probe as T);
      if (c < 0 || (inclusive && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  if (dir === 1)
    for (let i = probe === undefined ? 0 : bound(strict); i < items.length; i++) yield items[i] as T;
  else
    for (let i = probe === undefined ? items.length - 1 : bound(!strict) - 1; i >= 0; i--)
      yield items[i] as T;
}

function* takeWhile<T>(walk: Iterator<T>, holds: (item: T) => boolean): Generator<T> {
  for (let r = walk.next(); !r.done && holds(r.value); r = walk.next()) yield r.value;
}

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
  const otherAsset = assetId !== undefined && assetId !== PRIMARY_CHAINS[network].avaxAssetId;
  const byTime = sortBy === 'timestamp';
  const order = byTime ? bySeq : byAmount;
  const keyOf = (u: UtxoRec): Position =>
    byTime ? u.seq : [u.amount.toString().padStart(AMOUNT_DIGITS, '0'), u.seq];
  /** The position as a record the orders compare (only `seq` and `amount` are read). */
  const probeOf = (position: Position | undefined): UtxoRec | undefined => {
    if (position === undefined) return undefined;
    if (typeof position === 'number') return { seq: position, amount: 0n } as UtxoRec;
    const [amount, seq] = position as readonly [string, number];
    return { seq, amount: BigInt(amount) } as UtxoRec;
  };
  // Walks start at minAmount when sorted by amount, and stop there going down.
  const floor = { seq: -1, amount: minAmount } as UtxoRec;
  const walkOne = (address: string | undefined, after: UtxoRec | undefined): Iterator<UtxoRec> => {
    const index = primary.utxoIndex(chain, address, now);
    const start = !byTime && dir === 1 && (after === undefined || byAmount(after, floor) < 0) ? floor : after;
    if (includeSpent)
      return byTime
        ? walkArray(index.all, order, start, dir)
        : index.allByAmount.walk(start, dir, start !== floor);
    // Unspent at now: unspent at the end of the simulated day, or spent after now.
    const later = spentAfter(index, now).sort(order);
    const unspent = (byTime ? index.unspentBySeq : index.unspentByAmount).walk(start, dir, start !== floor);
    return later.length === 0
      ? unspent
      : mergeWalks([unspent, walkArray(later, order, start, dir, start !== floor)], order, dir);
  };
  const walkFrom = (position: Position | undefined): Iterator<UtxoRec> => {
    if (otherAsset) return [][Symbol.iterator]();
    const after = probeOf(position);
    const lists = addresses.length > 0 ? addresses : [undefined];
    const walk =
      lists.length === 1
        ? walkOne(lists[0], after)
        : mergeWalks(
            lists.map((a) => walkOne(a, after)),
            order,
            dir,
          );
    return byTime || dir === 1 ? walk : takeWhile(walk, (u) => u.amount >= minAmount);
  };
  const keep = (u: UtxoRec) => {
    const state = utxoState(u, now);
    return state !== 'unborn' && (includeSpent || state !== 'spent') && u.amount >= minAmount;
  };
  const fetch = sliceOf(walkFrom, keyOf, keep);
  const page = ctx.page(pageSize, fetch);
  return {
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    utxos: page.items.map((u) => shapes.utxoShape(network, chain, u, now)),
    chainInfo: chainInfo(chain, label),
  };
}

/** The (address, node) posting keys of a filter on either or both; `*` for the side not filtered. */
function pairsOf(addresses: ReadonlySet<string>, nodeIds: ReadonlySet<string>): [string, string][] {
  const as = addresses.size > 0 ? [...addresses] : ['*'];
  const ns = nodeIds.size > 0 ? [...nodeIds] : ['*'];
  return as.flatMap((a) => ns.map((n): [string, string] => [a, n]));
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
  const now = ctx.now;
  const runs = pairsOf(addresses, nodeIds).map(([a, n]) =>
    postingRun(primary.postings(postingKey.reward(a, n), now)),
  );
  const page = ctx.page(
    pageSize,
    sliceOf(
      (after) =>
        mapWalk(
          walkRuns(runs, (i) => primary.reward(i).utxo.createdAt, { start: 0, end: now }, after, dir),
          (i) => ({ position: i, ...primary.reward(i) }),
        ),
      (r) => r.position,
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
  const count = primary.delegationCount(now);
  const runs =
    rewardAddresses.size === 0 && nodeIds.size === 0
      ? [everyPosition(count)]
      : pairsOf(rewardAddresses, nodeIds).map(([a, n]) =>
          postingRun(primary.postings(postingKey.delegation(a, n), now)),
        );
  // Pending and active delegations were accepted recently: only that window is walked for them.
  const { lead, reach } = delegationWindow(network);
  const since = status === 'pending' ? now - lead : status === 'active' ? now - reach : 0;
  const page = ctx.page(
    pageSize,
    sliceOf(
      (after) =>
        mapWalk(
          walkRuns(runs, (i) => primary.delegation(i).tx.time, { start: since, end: now }, after, dir),
          (i) => ({ position: i, stake: primary.delegation(i) }),
        ),
      (d) => d.position,
      (d) => status === undefined || shapes.delegationStatus(d.stake, now) === status,
    ),
  );
  return {
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    delegators: page.items.map((d) => shapes.delegatorShape(d.stake, now)),
  };
}

function listNodeBlocks(ctx: RequestContext) {
  const { network, primary, label } = networkOf(ctx);
  const chain = parsePrimaryChain(network, ctx.params.blockchainId as string);
  const nodeId = ctx.params.nodeId as string;
  if (!isNodeId(nodeId)) throw badRequest(`nodeId must be a node id of the form NodeID-…; got "${nodeId}"`);
  const { start, end } = timeRange(ctx.query);
  const pageSize = ctx.query.pageSize();
  const now = ctx.now;
  const runs = chain === 'p' ? [postingRun(primary.postings(postingKey.proposer(nodeId), now))] : [];
  // Every height walked is of a block accepted by now (the window ends at now).
  const blockAt = (height: number) => primary.block(height, now) as PBlock;
  const page = ctx.page(
    pageSize,
    sliceOf(
      (after) =>
        mapWalk(
          walkRuns(
            runs,
            (h) => primary.block(h, now)?.time ?? Number.POSITIVE_INFINITY,
            { start, end: Math.min(end, now) },
            after,
            -1,
          ),
          blockAt,
        ),
      (b) => b.height,
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
  const count = primary.vertexCount(ctx.now);
  const page = ctx.page(
    pageSize,
    sliceOf(
      (after) =>
        mapWalk(
          walkRuns([everyPosition(count)], () => 0, { start: 0, end: 0 }, after, -1),
          primary.vertex,
        ),
      (v) => v.index,
    ),
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
