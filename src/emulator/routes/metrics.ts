/**
 * The metrics service (api-surfaces.md §4.18): chain metric time series computed from the same
 * blocks and transactions the Data API serves, as of the last refresh (every METRICS_REFRESH_SECONDS).
 *
 * Deliberate choices where the documents are silent (the OpenAPI response schemas still validate):
 * - Points are newest first; a page resumes at the timestamp of the next point.
 * - `timeInterval` defaults to `day`. The day-only metrics are those §2.16's table marks "Day only"
 *   (every cumulative*, max*, avg* metric, contracts, deployers and feesPaid); another interval is a 400.
 * - An unknown `{chainId}` is a 404; `total`, `mainnet` and `testnet` sum their chains' values
 *   (distinct-address counts are per chain, then summed; max* take the maximum; avgGasPrice is
 *   weighted by transactions).
 * - `/v1/avg_tps/{chainId}` serves daily avgTps, 100 points a page, newest first.
 */
import { badRequest, notFound } from '../http/errors.ts';
import { withNextToken } from '../http/paging.ts';
import { defineRoutes, type RequestContext } from '../http/route.ts';
import { type EvmChain, metricsAsOf } from '../world/evm/index.ts';
import { alignDown, step, TIME_INTERVALS, type TimeInterval } from '../world/evm/intervals.ts';
import { CHAIN_METRICS, type ChainMetric, DAY_ONLY_METRICS } from '../world/evm/stats.ts';

const AVG_TPS_PAGE_SIZE = 100;

const chainsOf = (ctx: RequestContext): EvmChain[] => {
  const id = ctx.params.chainId as string;
  const chains = ctx.world.evm.metricChains(id);
  if (!chains)
    throw notFound(
      `chainId "${id}" is not a supported EVM chain id; use one of GET /v1/chains or total, mainnet, testnet`,
    );
  return chains;
};

/** One page of a metric's points, newest first, within [startTimestamp, endTimestamp]. */
function series(
  ctx: RequestContext,
  chains: readonly EvmChain[],
  metric: ChainMetric,
  interval: TimeInterval,
  pageSize: number,
) {
  const start = ctx.query.int('startTimestamp', { min: 0 });
  const end = ctx.query.int('endTimestamp', { min: 0 });
  if (start !== undefined && end !== undefined && start > end)
    throw badRequest(`startTimestamp must not be greater than endTimestamp, got ${start} and ${end}`);
  const asOf = metricsAsOf(ctx.now);
  const first = alignDown(ctx.world.genesis, interval);
  const startAligned = start === undefined ? first : alignDown(start, interval);
  const lo = Math.max(
    first,
    start === undefined || startAligned === start ? startAligned : step(startAligned, interval),
  );
  const hi = Math.min(
    alignDown(asOf, interval),
    end === undefined ? Number.POSITIVE_INFINITY : alignDown(end, interval),
  );
  const page = ctx.page(pageSize, (position, limit) => {
    const results: { value: number; timestamp: number }[] = [];
    let t = position === undefined ? hi : (position as number);
    while (t >= lo && results.length < limit) {
      results.push({ value: ctx.world.evm.metric(chains, metric, interval, t, asOf), timestamp: t });
      t = step(t, interval, -1);
    }
    return t >= lo ? { items: results, next: t } : { items: results };
  });
  return { page, asOf };
}

export const metricsRoutes = defineRoutes([
  {
    service: 'metrics',
    method: 'GET',
    path: '/v2/chains/{chainId}/metrics/{metric}',
    handle(ctx) {
      const metric = ctx.params.metric as ChainMetric;
      if (!CHAIN_METRICS.includes(metric))
        throw badRequest(
          `metric must be one of the following values: ${CHAIN_METRICS.join(', ')}; got "${metric}"`,
        );
      const chains = chainsOf(ctx);
      const interval = ctx.query.oneOf('timeInterval', TIME_INTERVALS, 'day');
      if (interval !== 'day' && DAY_ONLY_METRICS.has(metric))
        throw badRequest(
          `timeInterval must be day for metric ${metric} (it is computed per day only), got "${interval}"`,
        );
      const { page } = series(ctx, chains, metric, interval, ctx.query.pageSize(2160, 100));
      return { results: page.items, ...withNextToken(page) };
    },
  },
  {
    service: 'metrics',
    method: 'GET',
    path: '/v1/avg_tps/{chainId}',
    handle(ctx) {
      const chains = chainsOf(ctx);
      const { page, asOf } = series(ctx, chains, 'avgTps', 'day', AVG_TPS_PAGE_SIZE);
      return {
        results: page.items,
        status: 200,
        lastRun: asOf,
        ...withNextToken(page),
      };
    },
  },
]);
