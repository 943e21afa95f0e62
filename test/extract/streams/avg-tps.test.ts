import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { walk } from '../../helpers/emulator.ts';
import { newestVersions, queryLake } from '../../helpers/lake.ts';
import {
  add,
  componentExample,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  type StreamCase,
  type Totals,
} from './harness.ts';

/** The v1 listing's fixed page (it takes no pageSize). */
const AVG_TPS_PAGE = 100;

const pointsOf = async (pipeline: Pipeline, chain: string) =>
  (
    await walk<{ timestamp: number; value: number }>(
      `${pipeline.urls.metrics}/v1/avg_tps/${chain}`,
      'results',
    )
  ).items;

const avgTps: StreamCase = {
  stream: 'avg_tps',
  pageSize: AVG_TPS_PAGE,
  // Values are doubles: the totals compare the count of points and the sum of their timestamps.
  async truth(_emulator: Emulator, pipeline: Pipeline) {
    const totals: Totals = {};
    for (const chain of pipeline.metrics.chains)
      for (const point of await pointsOf(pipeline, chain)) add(totals, chain, point.timestamp);
    return totals;
  },
  lake: { partition: 'chain', key: 'chain, timestamp', amount: 'epoch(timestamp)::bigint' },
};

describe('avg_tps', () => {
  it('mirrors every point, re-reads the newest, and reads only new points after the clock moves', async () => {
    await expectMirrorsTruth(avgTps, 2 * 86_400, async ({ dataDir, pipeline }) => {
      // Every point's newest version has the service's current value and lastRun.
      const chain = pipeline.metrics.chains[0] as string;
      const truth = await walk(`${pipeline.urls.metrics}/v1/avg_tps/${chain}`, 'results', { maxPages: 1 });
      const rows = await queryLake(
        `select epoch(timestamp)::bigint as t, value, epoch(lastRun)::bigint as lastRun
         from ${newestVersions(dataDir, 'avg_tps', 'chain, timestamp')} where chain = '${chain}' order by t desc`,
      );
      expect(rows.map((r) => [Number(r.t), r.value])).toEqual(
        truth.items.map((p: { timestamp: number; value: number }) => [p.timestamp, p.value]),
      );
    });
  });

  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(avgTps));

  it("accepts the OpenAPI document's point example (the document has no v1 path)", () => {
    // §4.18: the v1 answer is v2's MetricsApiResponse plus `status` and `lastRun`.
    const body = {
      ...componentExample('metrics', 'MetricsApiResponse'),
      status: 200,
      lastRun: 1_793_577_000,
    };
    const [point] = expectSchemaAccepts('avg_tps', body);
    expect(point).toMatchObject({ timestamp: 0, value: 0, lastRun: 1_793_577_000 });
  });
});
