import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  type StreamCase,
  type Totals,
} from './harness.ts';

/** Three blocks of the world at the start of the test clock. */
const pick = (emulator: Emulator) =>
  emulator.truth
    .primary('fuji')
    .blocks(Math.floor(emulator.clock.now()))
    .filter((_b, i, all) => i === 1 || i === Math.floor(all.length / 2) || i === all.length - 1);

const byId: StreamCase = {
  stream: 'p_chain_blocks_by_id',
  edit: (p, emulator) => {
    (p.primary as Record<string, unknown>).blockIds = pick(emulator).map((b) => b.hash);
  },
  truth(emulator, pipeline) {
    const totals: Totals = {};
    for (const id of pipeline.primary.blockIds) {
      const b = emulator.truth.primary(pipeline.network).blockByHash(id, Math.floor(emulator.clock.now()));
      if (b) add(totals, id, b.height);
    }
    return totals;
  },
  lake: { partition: 'blockId', key: 'blockId', amount: 'height' },
  changes: false,
};

describe('p_chain_blocks_by_id', () => {
  it('reads each listed block with one call per run', async () => {
    const { first } = await expectMirrorsTruth(byId, 86_400);
    expect(first.partitions).toHaveLength(3);
  });
  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(byId));
});
