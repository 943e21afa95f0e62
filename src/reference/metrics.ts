/**
 * The Metrics API's vocabulary (api-surfaces.md §2.16 and §4.18), read by both the emulator (to serve)
 * and the extractor (to ask): the seventeen metrics in the OpenAPI ChainMetric order, the intervals,
 * which metrics exist at the day interval only, and which are rates rather than whole numbers.
 */
export const CHAIN_METRICS = [
  'activeAddresses',
  'activeSenders',
  'cumulativeTxCount',
  'cumulativeAddresses',
  'cumulativeContracts',
  'cumulativeDeployers',
  'contracts',
  'deployers',
  'gasUsed',
  'txCount',
  'avgGps',
  'maxGps',
  'avgTps',
  'maxTps',
  'avgGasPrice',
  'maxGasPrice',
  'feesPaid',
] as const;
export type ChainMetric = (typeof CHAIN_METRICS)[number];

/**
 * The metrics whose values have a fraction: rates per second, averages and prices per gas. Every other
 * metric is a count or an amount, a whole number that the warehouse keeps exact.
 */
export const RATE_METRICS: ReadonlySet<ChainMetric> = new Set([
  'avgGps',
  'maxGps',
  'avgTps',
  'maxTps',
  'avgGasPrice',
  'maxGasPrice',
]);

export const METRIC_INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type MetricInterval = (typeof METRIC_INTERVALS)[number];

/** §2.16's table: every metric but these four is "Day only". */
const ANY_INTERVAL: readonly ChainMetric[] = ['activeAddresses', 'activeSenders', 'gasUsed', 'txCount'];
export const DAY_ONLY_METRICS: ReadonlySet<ChainMetric> = new Set(
  CHAIN_METRICS.filter((m) => !ANY_INTERVAL.includes(m)),
);

export const servesInterval = (metric: ChainMetric, interval: MetricInterval): boolean =>
  interval === 'day' || !DAY_ONLY_METRICS.has(metric);

/** The longest period of each interval, in seconds (a month: 31 days). */
export const INTERVAL_SECONDS: Readonly<Record<MetricInterval, number>> = {
  hour: 3_600,
  day: 86_400,
  week: 7 * 86_400,
  month: 31 * 86_400,
};

/**
 * How far behind the clock the Metrics API may publish its newest point beyond the period itself: it
 * recomputes its series in batches (the emulator every ten minutes), not with every block.
 */
export const METRICS_PUBLISH_LAG_SECONDS = 3_600;
