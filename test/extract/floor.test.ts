import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { historyStart } from '../../src/extract/pipeline.ts';
import { startEmulator, TEST_EPOCH } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { duplicateRows, queryLake, streamTable } from '../helpers/lake.ts';

const DAY = 86_400;
const day = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 10);

describe('where history starts', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(() => emulator.close());

  it('reads a date, or a number of days back from now', () => {
    expect(historyStart({ start: '2026-01-31' })).toBe(Date.UTC(2026, 0, 31) / 1000);
    expect(historyStart({ start: '30d' }, TEST_EPOCH + 3600)).toBe(TEST_EPOCH - 30 * DAY);
    expect(historyStart({})).toBeUndefined();
  });

  it('stops a newest-first walk of a whole chain at the start, then reads only what is new', async () => {
    const start = TEST_EPOCH - DAY;
    const workspace = demoWorkspace(emulator, (p) => {
      p.streams = ['evm_blocks'];
      p.start = day(start);
      (p.evm as { chains: string[] }).chains = ['770012'];
    });
    const chain = emulator.truth.evm.chain('770012');
    if (!chain) throw new Error('no chain 770012');
    const blocksSince = (from: number) => {
      const head = chain.head(Math.floor(emulator.clock.now()));
      let n = 0;
      for (let b = head; b >= 0 && chain.block(b).blockTimestamp >= from; b--) n++;
      return n;
    };
    const first = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(first.status).toBe('ok');
    const expected = blocksSince(start);
    expect(expected).toBeGreaterThan(1000);
    expect(first.partitions[0]?.rows).toBe(expected);
    expect(first.partitions[0]?.requests).toBeLessThanOrEqual(Math.ceil(expected / 100) + 1);

    emulator.advance(3600);
    const second = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    const [{ n, oldest }] = (await queryLake(
      `select count(*)::int as n, min(epoch(blockTimestamp))::bigint as oldest from ${streamTable(workspace.dataDir, 'evm_blocks')}`,
    )) as [{ n: number; oldest: string }];
    expect(n).toBe(blocksSince(start));
    expect(Number(oldest)).toBeGreaterThanOrEqual(start);
    expect(second.partitions[0]?.requests).toBeLessThanOrEqual(
      Math.ceil((second.partitions[0]?.rows ?? 0) / 100) + 1,
    );
    expect(await duplicateRows(workspace.dataDir, 'evm_blocks')).toBe(0);
  });
});
