import { z } from 'zod';
import { INTERVAL_SECONDS, METRICS_PUBLISH_LAG_SECONDS } from '../../reference/metrics.ts';
import { lake } from '../../schemas/lake.ts';
import { defineStream, httpGet } from '../stream.ts';

/** Each point carries the answer's `lastRun`: when the service last updated the series. */
const pointsWithLastRun = (body: unknown): unknown[] => {
  const { results, lastRun } = (body ?? {}) as Record<string, unknown>;
  return Array.isArray(results) ? results.map((point) => ({ ...(point as object), lastRun })) : [];
};

/**
 * §4.18's earlier form, `GET /v1/avg_tps/{chainId}`: daily average transactions per second, newest
 * first, per chain of the pipeline's metrics. The newest point is still filling up, so it is re-read
 * every run and appended again when it (or `lastRun`) changed; a run costs ceil(new points / 100) + 1.
 *
 * Note: the endpoint takes only `pageToken` (no `pageSize`, no time bounds); its pages hold 100 points.
 */
export const avgTps = defineStream({
  name: 'avg_tps',
  description: 'Daily average transactions per second (Metrics API v1), with the time of its last update',
  inputs: 'metrics.chains',
  strategy: 'newest-first',
  schema: z.object({
    timestamp: lake.timestamp(),
    value: z.number(),
    lastRun: lake.timestamp(),
  }),
  primaryKey: ['timestamp'],
  isFinal: (_point, { newest }) => !newest,
  timeOf: (point) => Number(point.timestamp),
  // A point per day, the newest still filling up.
  cadence: () => INTERVAL_SECONDS.day + METRICS_PUBLISH_LAG_SECONDS,
  partitions: (p) => p.metrics.chains.map((chain) => ({ network: p.network, chain })),
  request: (_p, partition) =>
    httpGet({
      service: 'metrics',
      route: '/v1/avg_tps/{chainId}',
      params: { chainId: partition.chain },
      query: {},
    }),
  records: pointsWithLastRun,
});
