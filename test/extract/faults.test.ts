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
import { duplicateRows } from '../helpers/lake.ts';
import { lakeTotals, sorted, truthOf } from '../helpers/truth.ts';

let emulator: Emulator | undefined;
afterEach(() => emulator?.close());

describe('extract under faults', () => {
  it('with 429s, 500s, dropped connections and cut bodies, the lake equals the fault-free truth', async () => {
    emulator = await startEmulator({ faults: '429=0.2,500=0.05,reset=0.02,truncate=0.01' });
    const workspace = coreWorkspace(emulator);
    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
    const summary = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(summary.status).toBe('ok');
    const faulted = emulator.requests.byStatus;
    // The faults really happened, and were retried.
    expect((faulted.get(429) ?? 0) + (faulted.get(500) ?? 0)).toBeGreaterThan(10);
    expect(summary.partitions.reduce((n, p) => n + p.retries, 0)).toBeGreaterThan(10);
    // The truth is read from a fault-free twin: the same seed and clock give the same world.
    const twin = await startEmulator();
    const truth = await truthOf(twin, {
      ...pipeline,
      urls: { data: twin.url, metrics: twin.url, node: `${twin.url}/fuji` },
    });
    await twin.close();
    expect(sorted(await lakeTotals(workspace.dataDir))).toEqual(sorted(truth));
  });

  it('restarts a walk whose page token expired, without losing or repeating a record', async () => {
    emulator = await startEmulator();
    const e = emulator;
    const workspace = coreWorkspace(e, (p) => {
      p.pageSize = { erc20_transfers: 25, utxos: 10, icm_messages: 25, staking_transactions: 10 };
    });
    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
    const http = createHttpClient({ userAgent: 'avalake/test' });
    const real = createFetcher({ http });
    let requests = 0;
    let rejectedTokens = 0;
    // Three times during the run a day and more passes on the emulator's clock: every token issued before expires.
    const fetcher: typeof real = async (request) => {
      if ([10, 25, 40].includes(++requests)) e.advance(25 * 3600);
      try {
        return await real(request);
      } catch (error) {
        if (/pageToken/.test(String(error))) rejectedTokens++;
        throw error;
      }
    };
    const names = ['staking_transactions', 'utxos', 'erc20_transfers', 'icm_messages'];
    const summary = await runExtract({
      pipeline,
      streams: STREAMS.filter((s) => names.includes(s.name)),
      dataDir: workspace.dataDir,
      http,
      fetcher,
    });
    await http.close();
    expect(summary.status).toBe('ok');
    expect(rejectedTokens).toBeGreaterThanOrEqual(2);
    // Partitions that finished before the last jump of the clock catch up in a second run.
    await extractOnce(workspace.pipelinePath, workspace.dataDir, { streams: names.join(',') });
    for (const name of names) expect(await duplicateRows(workspace.dataDir, name)).toBe(0);
    const lake = await lakeTotals(workspace.dataDir, names);
    const truth = await truthOf(e, pipeline, names);
    for (const name of names) expect(lake[name]).toEqual(truth[name]);
  });
});
