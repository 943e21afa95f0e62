import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { createFetcher } from '../../src/extract/fetcher.ts';
import { createHttpClient } from '../../src/extract/http.ts';
import { PipelineSchema } from '../../src/extract/pipeline.ts';
import { runExtract } from '../../src/extract/run.ts';
import { STREAMS } from '../../src/extract/streams/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce } from '../helpers/extract.ts';
import { duplicateRows, queryLake, streamTable } from '../helpers/lake.ts';
import { CORE_STREAMS, lakeTotals, sorted, truthOf } from '../helpers/truth.ts';

let emulator: Emulator | undefined;
afterEach(() => emulator?.close());

describe('a run stopped by a signal', () => {
  it('exits 130 with a consistent lake, and the next run completes the work', async () => {
    // Every answer is slow, so the signal surely lands mid-run.
    emulator = await startEmulator({ faults: 'slow=1:150' });
    const workspace = coreWorkspace(emulator, (p) => {
      p.flush = { rows: 100 };
    });
    const child = spawn(
      process.execPath,
      ['bin/avalake.js', 'extract', workspace.pipelinePath, '--data-dir', workspace.dataDir, '--quiet'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    setTimeout(() => child.kill('SIGINT'), 3_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, stderr).toBe(130);
    expect(stderr).not.toMatch(/\n\s+at /);

    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
    const again = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(again.status).toBe('ok');
    const truth = await truthOf(emulator, pipeline);
    expect(sorted(await lakeTotals(workspace.dataDir))).toEqual(sorted(truth));
    for (const stream of CORE_STREAMS.filter((s) => s !== 'validators'))
      expect(await duplicateRows(workspace.dataDir, stream), stream).toBe(0);
  }, 120_000);
});

describe('records that fail their schema', () => {
  it('go to the rejects table with the raw JSON and the reason, and the run goes on', async () => {
    emulator = await startEmulator();
    const workspace = coreWorkspace(emulator);
    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
    const http = createHttpClient({ userAgent: 'avalake/test' });
    const real = createFetcher({ http });
    // Spoil the second delegator of every delegators page: an amount that is not a number.
    const fetcher: typeof real = async (request) => {
      const body = (await real(request)) as { delegators?: Record<string, unknown>[] };
      const second = body?.delegators?.[1];
      if (second) second.amountDelegated = 'lots';
      return body;
    };
    const summary = await runExtract({
      pipeline,
      streams: STREAMS.filter((s) => s.name === 'delegators'),
      dataDir: workspace.dataDir,
      http,
      fetcher,
    });
    await http.close();
    expect(summary.status).toBe('ok');
    const rejected = summary.partitions.reduce((n, p) => n + p.rejects, 0);
    const pages = summary.partitions.reduce((n, p) => n + p.requests, 0);
    expect(rejected).toBe(pages);
    const rejects = await queryLake(
      `select stream, partition, raw, reason from read_parquet('${workspace.dataDir}/lake/_rejects/**/*.parquet', hive_partitioning = true)`,
    );
    expect(rejects).toHaveLength(rejected);
    for (const r of rejects) {
      expect(r.stream).toBe('delegators');
      expect(JSON.parse(r.raw as string).amountDelegated).toBe('lots');
      expect(r.reason).toMatch(/^amountDelegated: /);
      expect(JSON.parse(r.partition as string)).toHaveProperty('subject');
    }
    // Every other delegator is in the lake.
    const [{ n }] = (await queryLake(
      `select count(*)::int as n from ${streamTable(workspace.dataDir, 'delegators')}`,
    )) as [{ n: number }];
    const truth = await truthOf(emulator, pipeline);
    const expected = Object.values(truth.delegators ?? {}).reduce((s, t) => s + t.rows, 0);
    expect(n).toBe(expected - rejected);
  });
});
