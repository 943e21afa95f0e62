import type { Emulator } from '../../src/emulator/index.ts';
import type { Pipeline } from '../../src/extract/pipeline.ts';
import { fetchJson, walk } from './emulator.ts';
import { currentSnapshot, newestVersions, queryLake } from './lake.ts';

/** Per stream, per partition (its identifying value): how many records, and the sum of their amount. */
export type Totals = Record<string, Record<string, { rows: number; sum: string }>>;

const add = (totals: Totals, stream: string, partition: string, amount: bigint | number | string) => {
  const byPartition = totals[stream] ?? {};
  totals[stream] = byPartition;
  const t = byPartition[partition] ?? { rows: 0, sum: '0' };
  byPartition[partition] = t;
  t.rows++;
  t.sum = String(BigInt(t.sum) + BigInt(amount));
};

/**
 * What the emulator's world holds at its current time for the core streams of a pipeline, computed from
 * the world itself (and, for the listings whose filter the world does not expose, from a bare walk of
 * the listing in one go, without checkpoints).
 */
export async function truthOf(
  emulator: Emulator,
  pipeline: Pipeline,
  streams: readonly string[] = CORE_STREAMS,
): Promise<Totals> {
  const wanted = (stream: string) => streams.includes(stream);
  const now = Math.floor(emulator.clock.now());
  const world = emulator.truth;
  const primary = world.primary(pipeline.network);
  const totals: Totals = {};
  for (const subject of [...pipeline.primary.addresses, ...pipeline.primary.nodeIds]) {
    const isNode = subject.startsWith('NodeID-');
    for (const r of primary.rewards(now))
      if (isNode ? r.stake.nodeId === subject : r.utxo.addresses.includes(subject))
        add(totals, 'rewards', subject, r.utxo.amount);
    for (const d of primary.delegations(now))
      if (isNode ? d.nodeId === subject : d.rewardAddresses.includes(subject))
        add(totals, 'delegators', subject, d.amount);
  }
  for (const address of pipeline.primary.addresses) {
    for (const chain of ['p', 'x'] as const)
      for (const u of primary.utxosOf(address, chain, now))
        if (u.createdAt <= now) add(totals, 'utxos', `${chain}-chain ${address}`, u.amount);
    if (!wanted('staking_transactions')) continue;
    const staking = await walk(
      `${pipeline.urls.data}/v1/networks/${pipeline.network}/blockchains/p-chain/transactions:listStaking?addresses=${address}&pageSize=100`,
      'transactions',
    );
    for (const tx of staking.items)
      add(totals, 'staking_transactions', address, tx.amountStaked?.[0]?.amount ?? 0);
  }
  for (const chainId of pipeline.evm.chains) {
    const chain = world.evm.chain(chainId);
    if (!chain) throw new Error(`the emulator has no EVM chain ${chainId}`);
    for (const address of pipeline.evm.addresses)
      for (const t of chain.listErc20(address, {}, now, undefined, Number.MAX_SAFE_INTEGER).items)
        add(totals, 'erc20_transfers', `${chainId} ${address}`, t.value);
  }
  const icm = world.evm.icm(pipeline.network);
  for (const address of pipeline.icm.addresses)
    for (const k of icm.indexesDesc(address, now))
      add(totals, 'icm_messages', address, icm.message(k, now).messageNonce);
  for (const subnet of wanted('validators') ? ['primary', ...pipeline.primary.subnets] : []) {
    const res = await fetchJson(`${pipeline.urls.node}/ext/bc/P`, {
      method: 'POST',
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'platform.getCurrentValidators',
        params: subnet === 'primary' ? {} : { subnetID: subnet },
      },
    });
    for (const v of res.body.result.validators) add(totals, 'validators', subnet, v.weight);
  }
  for (const nodeId of wanted('validator_delegators') ? pipeline.primary.nodeIds : []) {
    const res = await fetchJson(`${pipeline.urls.node}/ext/bc/P`, {
      method: 'POST',
      body: { jsonrpc: '2.0', id: 1, method: 'platform.getCurrentValidators', params: { nodeIDs: [nodeId] } },
    });
    for (const v of res.body.result.validators)
      for (const d of v.delegators ?? []) add(totals, 'validator_delegators', nodeId, d.weight);
  }
  // Metric values are doubles: compare how many points there are and the sum of their timestamps.
  for (const chain of wanted('metrics') ? pipeline.metrics.chains : [])
    for (const metric of pipeline.metrics.metrics)
      for (const interval of pipeline.metrics.intervals) {
        const url = `${pipeline.urls.metrics}/v2/chains/${chain}/metrics/${metric}?timeInterval=${interval}&pageSize=2160`;
        const res = await fetchJson(url);
        if (res.status === 400) continue; // a day-only metric at another interval
        for (const point of (await walk(url, 'results')).items)
          add(totals, 'metrics', `${chain} ${metric} ${interval}`, point.timestamp);
      }
  return totals;
}

/** The same totals as `truthOf`, read back from the lake with DuckDB (newest version per key). */
export async function lakeTotals(
  dataDir: string,
  streams: readonly string[] = CORE_STREAMS,
): Promise<Totals> {
  const specs: [stream: string, key: string, partition: string, amount: string][] = [
    ['rewards', 'subject, utxoId', 'subject', 'reward.amount'],
    ['delegators', 'subject, txHash', 'subject', 'amountDelegated'],
    ['utxos', 'chain, address, utxoId', "chain || ' ' || address", 'coalesce(amount, asset.amount)'],
    ['staking_transactions', 'address, txHash', 'address', 'coalesce(amountStaked[1].amount, 0)'],
    ['erc20_transfers', 'chain, address, txHash, logIndex', "chain || ' ' || address", 'valueExact::hugeint'],
    ['icm_messages', 'address, messageId', 'address', 'messageNonceExact::hugeint'],
    ['validators', 'subnet, nodeID', 'subnet', 'weight'],
    ['validator_delegators', 'nodeId, txID', 'nodeId', 'weight'],
    [
      'metrics',
      'chain, metric, interval, timestamp',
      "chain || ' ' || metric || ' ' || interval",
      'epoch(timestamp)::bigint',
    ],
  ];
  const totals: Totals = {};
  for (const [stream, key, partition, amount] of specs.filter(([s]) => streams.includes(s))) {
    // Snapshots: each partition's current answer (a partition whose newest answer is empty must not
    // show an older one).
    const isSnapshot = stream === 'validators' || stream === 'validator_delegators';
    const from = isSnapshot ? await currentSnapshot(dataDir, stream) : newestVersions(dataDir, stream, key);
    const rows = await queryLake(
      `select ${partition} as p, count(*)::int as n, sum(${amount})::varchar as s from ${from} group by all`,
    );
    totals[stream] = Object.fromEntries(
      rows.map((r) => [r.p as string, { rows: r.n as number, sum: (r.s as string).replace(/\.0+$/, '') }]),
    );
  }
  return totals;
}

export const CORE_STREAMS = [
  'metrics',
  'validator_delegators',
  'rewards',
  'delegators',
  'staking_transactions',
  'utxos',
  'erc20_transfers',
  'icm_messages',
  'validators',
];
/**
 * What every mart reads: the core streams, current_supply for the staking ratio, and primary_balances
 * for the balances' openings (zero over a lake that holds the whole history).
 */
export const MART_STREAMS = [...CORE_STREAMS, 'current_supply', 'primary_balances'];
/** Totals in a stable order, for deep equality. */
export const sorted = (t: Totals) =>
  Object.fromEntries(
    CORE_STREAMS.map((s) => [
      s,
      Object.fromEntries(Object.entries(t[s] ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))),
    ]),
  );
