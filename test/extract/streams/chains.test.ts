import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { fetchJson } from '../../helpers/emulator.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  openApiExample,
  type StreamCase,
  type Totals,
} from './harness.ts';

const FEATURES = ['all', 'nftIndexing', 'webhooks', 'teleporter'];

const chains: StreamCase = {
  stream: 'chains',
  changes: false,
  // The world has no accessor for the feature filter: a bare request per feature is the truth.
  async truth(_emulator: Emulator, pipeline: Pipeline) {
    const totals: Totals = {};
    for (const feature of FEATURES) {
      const query = feature === 'all' ? '' : `&feature=${feature}`;
      const res = await fetchJson(`${pipeline.urls.data}/v1/chains?network=${pipeline.network}${query}`);
      for (const chain of res.body.chains) add(totals, feature, chain.chainId);
    }
    return totals;
  },
  lake: { partition: 'feature', key: 'feature, chainId', amount: 'chainId::hugeint' },
};

describe('chains', () => {
  it('snapshots the supported chains per feature, one request each, every run', async () => {
    await expectMirrorsTruth(chains, 86_400, async ({ first, second }) => {
      for (const run of [first, second]) {
        expect(run.partitions.map((p) => p.partition.feature).sort()).toEqual([...FEATURES].sort());
        for (const p of run.partitions) expect(p.requests).toBe(1);
      }
    });
  });

  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(chains));

  it("accepts the OpenAPI document's example", () => {
    const [chain] = expectSchemaAccepts('chains', openApiExample('data', '/v1/chains'));
    expect(chain).toMatchObject({ status: 'OK', vmName: 'EVM', networkToken: { decimals: 18 } });
  });
});
