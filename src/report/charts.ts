import { avaxNumber, duration, groupDigits, navaxToAvax } from './format.ts';
import { AGGREGATE_COLOR, type Chart, PALETTE, type Series } from './svg.ts';

/** A query's rows: DECIMALs and BIGINTs as exact strings, DOUBLEs as numbers (queryRows). */
export type Row = Record<string, unknown>;

/**
 * One chart of the report: the marts it reads, its query (one row per mark it draws) and how the rows
 * become a chart. `sql` gets the network as a quoted SQL literal.
 */
export interface ChartDef {
  id: string;
  title: string;
  subtitle: string;
  sources: readonly string[];
  sql: (network: string) => string;
  draw: (rows: Row[], context: { nakamoto: number }) => Chart;
}

const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));
const avax = (navax: unknown): string => `${groupDigits(navaxToAvax(text(navax)))} AVAX`;

/** Chain ids the Metrics API aggregates under: drawn dashed and grey, as the sum of the others. */
const AGGREGATE_CHAINS = new Set(['total', 'mainnet', 'testnet']);
const CHAIN_NAMES: Record<string, string> = { '43114': 'C-Chain', '43113': 'C-Chain (Fuji)' };
const chainName = (id: string): string =>
  AGGREGATE_CHAINS.has(id) ? `all chains (${id})` : (CHAIN_NAMES[id] ?? `chain ${id}`);

/** Series in order of first appearance: aggregates grey and dashed, the rest from the palette. */
function seriesOf(rows: Row[], key: (row: Row) => string, name: (key: string) => string) {
  const index = new Map<string, number>();
  const series: Series[] = [];
  for (const row of rows) {
    const k = key(row);
    if (index.has(k)) continue;
    index.set(k, series.length);
    const aggregate = AGGREGATE_CHAINS.has(k);
    const color = aggregate
      ? AGGREGATE_COLOR
      : (PALETTE[series.filter((s) => !s.dashed).length % PALETTE.length] ?? AGGREGATE_COLOR);
    series.push({ name: name(k), color, ...(aggregate ? { dashed: true } : {}) });
  }
  return { series, of: (row: Row) => index.get(key(row)) ?? 0 };
}

/** A unit for durations so the axis reads in whole numbers: seconds, minutes or hours. */
function durationUnit(maxSeconds: number): { label: string; divisor: number } {
  if (maxSeconds >= 7200) return { label: 'hours', divisor: 3600 };
  if (maxSeconds >= 120) return { label: 'minutes', divisor: 60 };
  return { label: 'seconds', divisor: 1 };
}

const shortId = (id: string): string => (id.length > 10 ? `${id.slice(0, 6)}…` : id);

const metricChart = (column: 'tx_count' | 'active_addresses', label: string): ChartDef['draw'] => {
  return (rows) => {
    const { series, of } = seriesOf(rows, (r) => text(r.chain_id), chainName);
    return {
      kind: 'lines',
      yLabel: label,
      series,
      points: rows.map((r) => ({
        series: of(r),
        day: text(r.metric_day),
        value: num(r[column]),
        title: `${chainName(text(r.chain_id))}, ${text(r.metric_day)}: ${groupDigits(text(r[column]))}`,
      })),
    };
  };
};

const metricSql = (column: string) => (network: string) =>
  `
select chain_id, metric_day, ${column}
from chain_metrics_daily
where network = ${network} and ${column} is not null
order by chain_id, metric_day`;

/** Latency histogram bins: [lower, upper) seconds. */
const LATENCY_BINS: [label: string, lower: number, upper: number | null][] = [
  ['< 10 s', 0, 10],
  ['10–30 s', 10, 30],
  ['30 s–1 m', 30, 60],
  ['1–5 m', 60, 300],
  ['5–15 m', 300, 900],
  ['15 m–1 h', 900, 3600],
  ['1–4 h', 3600, 14_400],
  ['4–12 h', 14_400, 43_200],
  ['12–24 h', 43_200, 86_400],
  ['≥ 1 d', 86_400, null],
];

export const CHARTS: readonly ChartDef[] = [
  {
    id: 'stake',
    title: 'Stake by day',
    subtitle:
      "Validators' own stake and the stake delegated to them, as each day's last validators snapshot shows it.",
    sources: ['stake_distribution_daily'],
    sql: (network) => `
select snapshot_day, total_stake_navax, validator_stake_navax, delegator_stake_navax
from stake_distribution_daily
where network = ${network}
order by snapshot_day`,
    draw: (rows) => ({
      kind: 'bars',
      xAxis: 'day',
      yLabel: 'Stake (AVAX)',
      series: [
        { name: 'own stake', color: PALETTE[0] ?? '' },
        { name: 'delegated', color: '#93b4f5' },
      ],
      bars: rows.map((r) => ({
        x: text(r.snapshot_day),
        segments: [avaxNumber(r.validator_stake_navax), avaxNumber(r.delegator_stake_navax)],
        title: `${text(r.snapshot_day)}: ${avax(r.total_stake_navax)} (own ${avax(r.validator_stake_navax)}, delegated ${avax(r.delegator_stake_navax)})`,
      })),
    }),
  },
  {
    id: 'validators',
    title: 'Validators and delegations',
    subtitle: 'Primary-network validators and the delegations to them, per day.',
    sources: ['stake_distribution_daily'],
    sql: (network) => `
select snapshot_day, 'validators' as counted, count_validators as how_many
from stake_distribution_daily
where network = ${network}
union all
select snapshot_day, 'delegations' as counted, count_delegators as how_many
from stake_distribution_daily
where network = ${network}
order by counted desc, snapshot_day`,
    draw: (rows) => {
      const { series, of } = seriesOf(
        rows,
        (r) => text(r.counted),
        (k) => k,
      );
      return {
        kind: 'lines',
        yLabel: 'Count',
        series,
        points: rows.map((r) => ({
          series: of(r),
          day: text(r.snapshot_day),
          value: num(r.how_many),
          title: `${text(r.snapshot_day)}: ${text(r.how_many)} ${text(r.counted)}`,
        })),
      };
    },
  },
  {
    id: 'distribution',
    title: 'Stake per validator, latest snapshot',
    subtitle:
      'Own plus delegated stake of each current primary-network validator, largest first; the highlighted ones are the Nakamoto set.',
    sources: ['validators_history'],
    sql: (network) => `
select node_id, total_stake_navax, weight as own_stake_navax, delegator_weight_navax
from validators_history
where network = ${network} and subnet = 'primary' and is_current
order by total_stake_navax desc, node_id`,
    draw: (rows, { nakamoto }) => ({
      kind: 'bars',
      xAxis: { band: 'Validators by stake (rank, 1 = largest)' },
      yLabel: 'Stake (AVAX)',
      series: [
        { name: 'own stake', color: PALETTE[0] ?? '' },
        { name: 'delegated', color: '#93b4f5' },
      ],
      bars: rows.map((r, i) => ({
        x: String(i + 1),
        segments: [avaxNumber(r.own_stake_navax), avaxNumber(r.delegator_weight_navax)],
        highlight: i < nakamoto,
        title: `#${i + 1} ${text(r.node_id)}: ${avax(r.total_stake_navax)} (own ${avax(r.own_stake_navax)}, delegated ${avax(r.delegator_weight_navax)})`,
      })),
    }),
  },
  {
    id: 'rewards-avax',
    title: 'Rewards paid by day (AVAX)',
    subtitle: 'Staking rewards by the UTC day they were paid, by kind.',
    sources: ['rewards_daily'],
    sql: (network) => `
select
    reward_day,
    sum(reward_navax) as reward_navax,
    sum(validator_reward_navax) as validator_reward_navax,
    sum(delegator_reward_navax) as delegator_reward_navax,
    sum(fee_reward_navax) as fee_reward_navax,
    sum(count_rewards) as count_rewards
from rewards_daily
where network = ${network}
group by reward_day
order by reward_day`,
    draw: (rows) => ({
      kind: 'bars',
      xAxis: 'day',
      yLabel: 'Rewards (AVAX)',
      series: [
        { name: 'validation', color: PALETTE[0] ?? '' },
        { name: 'delegation', color: PALETTE[2] ?? '' },
        { name: 'validator fee', color: PALETTE[1] ?? '' },
      ],
      bars: rows.map((r) => ({
        x: text(r.reward_day),
        segments: [
          avaxNumber(r.validator_reward_navax),
          avaxNumber(r.delegator_reward_navax),
          avaxNumber(r.fee_reward_navax),
        ],
        title: `${text(r.reward_day)}: ${avax(r.reward_navax)} in ${text(r.count_rewards)} rewards (${groupDigits(text(r.reward_navax))} nAVAX)`,
      })),
    }),
  },
  {
    id: 'rewards-usd',
    title: 'Rewards paid by day (USD)',
    subtitle:
      "Each reward at the day's AVAX price as the API gives it; days with an unpriced reward are left out.",
    sources: ['rewards_daily'],
    sql: (network) => `
select
    reward_day,
    sum(reward_usd) as reward_usd,
    max(price_usd) as price_usd
from rewards_daily
where network = ${network}
group by reward_day
having bool_and(is_priced)
order by reward_day`,
    draw: (rows) => ({
      kind: 'bars',
      xAxis: 'day',
      yLabel: 'Rewards (USD)',
      series: [{ name: 'USD value', color: PALETTE[2] ?? '' }],
      bars: rows.map((r) => ({
        x: text(r.reward_day),
        segments: [num(r.reward_usd)],
        title: `${text(r.reward_day)}: $${groupDigits(text(r.reward_usd))} (AVAX at $${text(r.price_usd)})`,
      })),
    }),
  },
  {
    id: 'transactions',
    title: 'Transactions by chain',
    subtitle:
      'Transactions per UTC day from the Metrics API (the newest day is partial); the dashed line is its aggregate over all chains.',
    sources: ['chain_metrics_daily'],
    sql: metricSql('tx_count'),
    draw: metricChart('tx_count', 'Transactions per day'),
  },
  {
    id: 'active-addresses',
    title: 'Active addresses by chain',
    subtitle:
      'Distinct addresses sending or receiving per UTC day (the newest day is partial); the dashed line is the aggregate.',
    sources: ['chain_metrics_daily'],
    sql: metricSql('active_addresses'),
    draw: metricChart('active_addresses', 'Active addresses per day'),
  },
  {
    id: 'icm-latency',
    title: 'ICM delivery latency by day',
    subtitle:
      'Mean time from the sending transaction to the delivery, of the messages delivered each day, per route.',
    sources: ['icm_backlog_daily', 'icm_delivery'],
    sql: (network) => `
with chains as (
    select source_blockchain_id as blockchain_id, any_value(source_evm_chain_id) as evm_chain_id
    from icm_delivery
    group by all
    union
    select destination_blockchain_id, any_value(destination_evm_chain_id)
    from icm_delivery
    group by all
),

named as (
    select blockchain_id, any_value(evm_chain_id) as evm_chain_id
    from chains
    group by all
)

select
    backlog.activity_day,
    backlog.source_blockchain_id,
    backlog.destination_blockchain_id,
    source.evm_chain_id as source_evm_chain_id,
    destination.evm_chain_id as destination_evm_chain_id,
    backlog.count_delivered,
    backlog.avg_latency_seconds,
    backlog.max_latency_seconds
from icm_backlog_daily as backlog
left join named as source on backlog.source_blockchain_id = source.blockchain_id
left join named as destination on backlog.destination_blockchain_id = destination.blockchain_id
where backlog.network = ${network} and backlog.avg_latency_seconds is not null
order by backlog.source_blockchain_id, backlog.destination_blockchain_id, backlog.activity_day`,
    draw: (rows) => {
      const end = (id: unknown, evm: unknown) =>
        evm === null || evm === undefined ? shortId(text(id)) : chainName(text(evm));
      const route = (r: Row) =>
        `${end(r.source_blockchain_id, r.source_evm_chain_id)} → ${end(r.destination_blockchain_id, r.destination_evm_chain_id)}`;
      const { series, of } = seriesOf(
        rows,
        (r) => `${text(r.source_blockchain_id)} ${text(r.destination_blockchain_id)}`,
        () => '',
      );
      for (const r of rows) {
        const s = series[of(r)];
        if (s && s.name === '') s.name = route(r);
      }
      const unit = durationUnit(Math.max(0, ...rows.map((r) => num(r.avg_latency_seconds))));
      return {
        kind: 'lines',
        yLabel: `Mean latency (${unit.label})`,
        series,
        points: rows.map((r) => ({
          series: of(r),
          day: text(r.activity_day),
          value: num(r.avg_latency_seconds) / unit.divisor,
          title: `${route(r)}, ${text(r.activity_day)}: mean ${duration(num(r.avg_latency_seconds))} (${text(r.avg_latency_seconds)} s), longest ${text(r.max_latency_seconds)} s, ${text(r.count_delivered)} delivered`,
        })),
      };
    },
  },
  {
    id: 'icm-latency-histogram',
    title: 'ICM delivery latency, all messages',
    subtitle: 'How many delivered messages took how long, from sending to delivery (latency known).',
    sources: ['icm_delivery'],
    sql: (network) => `
with bins (bin, label, lower_seconds, upper_seconds) as (
    values
${LATENCY_BINS.map(([label, lower, upper], i) => `        (${i}, '${label}', ${lower}, ${upper ?? 'null'})`).join(',\n')}
),

latencies as (
    select delivery_latency_seconds as seconds
    from icm_delivery
    where network = ${network} and delivery_latency_seconds is not null
)

select
    bins.bin,
    bins.label,
    count(latencies.seconds) as count_messages
from bins
left join latencies
    on latencies.seconds >= bins.lower_seconds
    and (bins.upper_seconds is null or latencies.seconds < bins.upper_seconds)
where exists (select 1 from latencies)
group by bins.bin, bins.label
order by bins.bin`,
    draw: (rows) => ({
      kind: 'bars',
      xAxis: { band: 'Delivery latency' },
      yLabel: 'Messages',
      series: [{ name: 'messages', color: PALETTE[4] ?? '' }],
      bars: rows.map((r) => ({
        x: text(r.label),
        segments: [num(r.count_messages)],
        title: `${text(r.label)}: ${text(r.count_messages)} messages`,
      })),
    }),
  },
];
