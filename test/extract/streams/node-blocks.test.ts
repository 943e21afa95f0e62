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

const nodeBlocks: StreamCase = {
  stream: 'node_blocks',
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const totals: Totals = {};
    for (const b of emulator.truth.primary(pipeline.network).blocks(now))
      if (pipeline.primary.nodeIds.includes(b.proposer)) add(totals, b.proposer, b.height);
    return totals;
  },
  lake: { partition: 'nodeId', key: 'nodeId, blockHash', amount: 'blockNumber' },
};

describe('node_blocks', () => {
  it('mirrors the blocks each node proposed, then only the newer ones', () =>
    expectMirrorsTruth(nodeBlocks, 2 * 86_400));
  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(nodeBlocks));
  it("accepts the OpenAPI document's example", () => {
    const [block] = expectSchemaAccepts(
      'node_blocks',
      openApiExample('data', '/v1/networks/{network}/blockchains/{blockchainId}/nodes/{nodeId}/blocks'),
    );
    expect(block).toHaveProperty('blockNumber');
  });
});
