import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { type Pipeline, PipelineSchema } from '../../src/extract/pipeline.ts';
import { MAX_METRICS_PAGE_SIZE, MAX_PAGE_SIZE } from '../../src/extract/streams/fields.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce, requestsOf } from '../helpers/extract.ts';
import { duplicateRows } from '../helpers/lake.ts';
import { CORE_STREAMS, lakeTotals, sorted, truthOf } from '../helpers/truth.ts';

describe('extract of the core streams against the emulator', () => {
  let emulator: Emulator;
  let workspace: ReturnType<typeof coreWorkspace>;
  let pipeline: Pipeline;

  beforeAll(async () => {
    emulator = await startEmulator();
    workspace = coreWorkspace(emulator);
    pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
  });
  afterAll(() => emulator.close());

  it('mirrors every record of the truth, then only what is new after the clock moves', async () => {
    const first = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(first.status).toBe('ok');
    expect(sorted(await lakeTotals(workspace.dataDir))).toEqual(sorted(await truthOf(emulator, pipeline)));
    // A second run at the same time fetches one page per partition and appends nothing but snapshots.
    const idle = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(requestsOf(idle)).toBe(idle.partitions.length);
    // Nothing new, nothing committed: no commit record for a partition whose checkpoint did not move.
    for (const p of idle.partitions.filter((x) => !x.stream.startsWith('validator')))
      expect(p.commits, `${p.stream} ${JSON.stringify(p.partition)}`).toBe(0);
    expect(
      idle.partitions
        .filter((p) => !['validators', 'validator_delegators'].includes(p.stream))
        .every((p) => p.rows === 0),
    ).toBe(true);

    emulator.advance(2 * 86_400);
    const second = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(second.status).toBe('ok');
    expect(sorted(await lakeTotals(workspace.dataDir))).toEqual(sorted(await truthOf(emulator, pipeline)));
    expect(requestsOf(second)).toBeLessThan(requestsOf(first));
    // Only what is new or changed: each partition asks for the pages its new rows fill, plus one.
    for (const p of second.partitions) {
      const pageSize = p.stream === 'metrics' ? MAX_METRICS_PAGE_SIZE : MAX_PAGE_SIZE;
      expect(p.requests, `${p.stream} ${JSON.stringify(p.partition)}`).toBeLessThanOrEqual(
        Math.ceil(p.rows / pageSize) + 1,
      );
    }
    for (const stream of CORE_STREAMS) expect(await duplicateRows(workspace.dataDir, stream)).toBe(0);
  });
});
