import { describe, expect, it } from 'vitest';
import { queryLake, streamTable } from '../../helpers/lake.ts';
import { responseExampleOf } from '../../helpers/openapi-examples.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  type StreamCase,
  type Totals,
} from './harness.ts';

const supply: StreamCase = {
  stream: 'current_supply',
  truth(emulator, pipeline) {
    const blocks = emulator.truth.primary(pipeline.network).blocks(Math.floor(emulator.clock.now()));
    // The primary network only: the pipeline's subnets are not permissionless, so the node has no
    // supply for them and their snapshots are empty.
    const totals: Totals = {};
    add(totals, 'primary', blocks.at(-1)?.supply ?? 0n);
    return totals;
  },
  lake: { partition: 'subnet', key: 'subnet, height', amount: 'supply' },
};

describe('current_supply', () => {
  it('adds one point per run: a time series of the primary network’s supply; a subnet without one is empty, not a failure', async () => {
    const { dataDir } = await expectMirrorsTruth(supply, 2 * 86_400);
    const points = await queryLake(
      `select subnet, count(distinct height)::int as n from ${streamTable(dataDir, 'current_supply')} group by all`,
    );
    for (const p of points) expect(p.n, String(p.subnet)).toBe(2);
  });
  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(supply));
  it("accepts the node document's example", () => {
    const body = responseExampleOf('rpc', 'POST', '/ext/bc/P#platform.getCurrentSupply') as {
      result: unknown;
    };
    expect(expectSchemaAccepts('current_supply', body.result)).toEqual([
      { supply: '1000000000', height: '1000000000' },
    ]);
  });
});
