import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { openLake } from '../../../src/load/index.ts';
import { startEmulator } from '../../helpers/emulator.ts';
import { extractOnce } from '../../helpers/extract.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  lakeTotals,
  type StreamCase,
  streamNamed,
  type Totals,
  workspaceFor,
} from './harness.ts';

/**
 * A height walk costs one request per height. Walking the world's whole P-Chain (about 1,100 heights)
 * under the fault mix outlasts the test budget, so each test starts from a lake whose earlier run
 * committed every height below the tip minus DEPTH, as that run would have left it.
 */
const DEPTH = 120;
/** Under faults every retry waits its backoff: fewer heights keep the test within its budget. */
const FAULTED_DEPTH = 20;
const seededAt = new Map<string, number>();

async function seedHeights(
  stream: string,
  dataDir: string,
  emulator: Emulator,
  pipeline: Pipeline,
  depth = DEPTH,
) {
  const s = streamNamed(stream);
  const next = emulator.truth.primary(pipeline.network).blockCount(Math.floor(emulator.clock.now())) - depth;
  seededAt.set(stream, next);
  const lake = await openLake({ dataDir });
  try {
    for (const partition of s.partitions(pipeline)) {
      const flush = lake.begin({ stream: s.name, partition, schema: s.schema });
      await flush.append([]);
      await flush.commit({ next });
    }
  } finally {
    await lake.close();
  }
}

const blocksFrom = (stream: string, emulator: Emulator, pipeline: Pipeline) => {
  const from = seededAt.get(stream) ?? 0;
  return emulator.truth
    .primary(pipeline.network)
    .blocks(Math.floor(emulator.clock.now()))
    .filter((b) => b.height >= from);
};

/** The blocks: one row per height, so heights + 1 requests (the tip) is also ceil(rows / 1) + 1. */
const blocks: StreamCase = {
  stream: 'p_chain_blocks',
  prepare: (dataDir, emulator, pipeline) => seedHeights('p_chain_blocks', dataDir, emulator, pipeline),
  truth(emulator, pipeline) {
    const totals: Totals = {};
    for (const b of blocksFrom('p_chain_blocks', emulator, pipeline)) add(totals, 'all', b.txs.length);
    return totals;
  },
  lake: { partition: "'all'", key: 'height', amount: 'txCount' },
  pageSize: 1,
};

const blockTransactions: StreamCase = {
  stream: 'p_chain_block_transactions',
  prepare: (dataDir, emulator, pipeline) =>
    seedHeights('p_chain_block_transactions', dataDir, emulator, pipeline),
  truth(emulator, pipeline) {
    const totals: Totals = {};
    for (const b of blocksFrom('p_chain_block_transactions', emulator, pipeline))
      for (const _tx of b.txs) add(totals, 'all', b.height);
    return totals;
  },
  lake: { partition: "'all'", key: 'txID', amount: 'blockHeight' },
};

const faulted = (c: StreamCase): StreamCase => ({
  ...c,
  prepare: (dataDir, emulator, pipeline) => seedHeights(c.stream, dataDir, emulator, pipeline, FAULTED_DEPTH),
});

describe('p_chain_blocks', () => {
  it('walks from the committed height to the tip, then only the new heights', () =>
    expectMirrorsTruth(blocks, 2 * 86_400, ({ first }) => {
      expect(first.partitions[0]?.rows).toBe(DEPTH);
    }));
  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(faulted(blocks)));
});

describe('p_chain_block_transactions', () => {
  it('mirrors the transactions of every walked block, one request per height plus the tip', async () => {
    const emulator = await startEmulator();
    try {
      const w = workspaceFor(emulator, blockTransactions);
      await blockTransactions.prepare?.(w.dataDir, emulator, w.pipeline);
      const heights = () => emulator.truth.primary('fuji').blockCount(Math.floor(emulator.clock.now()));
      let committed = heights() - DEPTH;
      for (const advance of [0, 2 * 86_400]) {
        emulator.advance(advance);
        const run = await extractOnce(w.pipelinePath, w.dataDir);
        expect(run.status).toBe('ok');
        expect(run.partitions[0]?.requests).toBe(heights() - committed + 1);
        committed = heights();
        expect(await lakeTotals(w.dataDir, blockTransactions)).toEqual(
          await blockTransactions.truth(emulator, w.pipeline),
        );
      }
    } finally {
      await emulator.close();
    }
  });
  it('the fault mix of the core streams changes nothing', () =>
    expectFaultsChangeNothing(faulted(blockTransactions)));
});
