import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  openApiExample,
  type StreamCase,
  type Totals,
} from './harness.ts';

const vertices: StreamCase = {
  stream: 'x_chain_vertices',
  // Small pages, so that a run takes enough requests to meet the faults.
  edit: (p) => {
    p.pageSize = { x_chain_vertices: 10 };
  },
  pageSize: 10,
  truth(emulator: Emulator, pipeline: Pipeline) {
    const totals: Totals = {};
    for (const v of emulator.truth.primary(pipeline.network).vertices(Math.floor(emulator.clock.now())))
      add(totals, 'all', v.height);
    return totals;
  },
  lake: { partition: "'all'", key: 'vertexHash', amount: 'vertexHeight' },
};

describe('x_chain_vertices', () => {
  it('mirrors the vertices, then walks down only to the last run', () =>
    expectMirrorsTruth(vertices, 2 * 86_400));
  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(vertices));
  it("accepts the OpenAPI document's example", () => {
    const [vertex] = expectSchemaAccepts(
      'x_chain_vertices',
      openApiExample('data', '/v1/networks/{network}/blockchains/{blockchainId}/vertices'),
    );
    expect(vertex).toHaveProperty('vertexHash');
  });
});
