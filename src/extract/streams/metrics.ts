import { z } from 'zod';
import {
  INTERVAL_SECONDS,
  METRICS_PUBLISH_LAG_SECONDS,
  type MetricInterval,
  servesInterval,
} from '../../reference/metrics.ts';
import { lake } from '../../schemas/lake.ts';
import { historyEnd, historyStart } from '../pipeline.ts';
import { defineStream, httpGet } from '../stream.ts';
import { listField, MAX_METRICS_PAGE_SIZE } from './fields.ts';

/**
 * §4.18 metrics v2, per chain × metric × interval, newest first from the newest committed point: that
 * point is re-read every run, since the latest period is still filling up.
 */
export const metrics = defineStream({
  name: 'metrics',
  description: 'Chain metrics time series (Metrics API v2)',
  inputs: 'metrics.chains',
  strategy: 'newest-first',
  schema: z.object({
    timestamp: lake.timestamp(),
    value: z.number(),
  }),
  primaryKey: ['timestamp'],
  sinceOf: (point) => Number(point.timestamp),
  timeOf: (point) => Number(point.timestamp),
  isFinal: (_point, { newest }) => !newest,
  partitions: (p) =>
    p.metrics.chains.flatMap((chain) =>
      p.metrics.metrics.flatMap((metric) =>
        p.metrics.intervals
          .filter((interval) => servesInterval(metric, interval))
          .map((interval) => ({ network: p.network, chain, metric, interval })),
      ),
    ),
  // The newest point is the period still filling up: it starts at most one period ago.
  cadence: (partition) =>
    INTERVAL_SECONDS[partition.interval as MetricInterval] + METRICS_PUBLISH_LAG_SECONDS,
  request: (p, partition, since) =>
    httpGet({
      service: 'metrics',
      route: '/v2/chains/{chainId}/metrics/{metric}',
      params: { chainId: partition.chain, metric: partition.metric },
      query: {
        timeInterval: partition.interval,
        startTimestamp: since ?? historyStart(p),
        endTimestamp: historyEnd(p),
      },
    }),
  records: listField('results'),
  maxPageSize: MAX_METRICS_PAGE_SIZE,
});
