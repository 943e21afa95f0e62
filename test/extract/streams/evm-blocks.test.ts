import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { keyOf } from '../../../src/extract/stream.ts';
import { openLake } from '../../../src/load/index.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  openApiExample,
  type StreamCase,
  streamNamed,
  type Totals,
} from './harness.ts';

/** Blocks the seeded lake lacks at the start: a few pages' worth below each chain's head. */
const DEPTH = 250;
const seededAt = new Map<string, number>();

/**
 * Note: the listing has no lower bound and the engine's newest-first walk no horizon, so a first run
 * reads every chain back to genesis (2.4 million blocks in this world). The test starts instead from a
 * lake whose earlier run committed the block DEPTH below each head, as that run would have left it.
 */
async function seedLake(dataDir: string, emulator: Emulator, pipeline: Pipeline) {
  const stream = streamNamed('evm_blocks');
  const now = Math.floor(emulator.clock.now());
  const lake = await openLake({ dataDir });
  try {
    for (const partition of stream.partitions(pipeline)) {
      const chain = emulator.truth.evm.chain(partition.chain as string);
      if (!chain) throw new Error(`no EVM chain ${partition.chain}`);
      const from = chain.head(now) - DEPTH;
      seededAt.set(partition.chain as string, from);
      const block = stream.schema.parse(chain.block(from));
      const flush = lake.begin({ stream: stream.name, partition, schema: stream.schema });
      await flush.append([block]);
      await flush.commit({ head: keyOf(stream.primaryKey, block), open: {} });
    }
  } finally {
    await lake.close();
  }
}

const evmBlocks: StreamCase = {
  stream: 'evm_blocks',
  prepare: seedLake,
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const totals: Totals = {};
    for (const chainId of pipeline.evm.chains) {
      const chain = emulator.truth.evm.chain(chainId);
      const from = seededAt.get(chainId);
      if (!chain || from === undefined) throw new Error(`no EVM chain ${chainId}, or not seeded`);
      for (let n = from; n <= chain.head(now); n++) add(totals, chainId, chain.block(n).txCount);
    }
    return totals;
  },
  lake: { partition: 'chain', key: 'chain, blockNumber', amount: 'txCount' },
};

describe('evm_blocks', () => {
  it('reads the blocks above the newest committed one, then only the new ones after the clock moves', async () => {
    await expectMirrorsTruth(evmBlocks, 3_600, async ({ first }) => {
      for (const p of first.partitions) expect(p.rows).toBe(DEPTH);
    });
  });

  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(evmBlocks));

  it("accepts the OpenAPI document's example", () => {
    const body = openApiExample('data', '/v1/chains/{chainId}/blocks');
    const [block] = expectSchemaAccepts('evm_blocks', body);
    expect(block).toMatchObject({
      chainId: '43114',
      blockNumber: '339',
      blockTimestampMilliseconds: 1648672486000,
    });
  });
});
