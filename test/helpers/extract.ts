import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { extract } from '../../src/cli/extract.ts';
import { demoPipelineOf } from '../../src/emulator/demo-pipeline.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { resolveExtractConfig } from '../../src/extract/config.ts';
import { createHttpClient, type HttpClient } from '../../src/extract/http.ts';
import { type RunSummary, runExtract } from '../../src/extract/run.ts';
import { captureOutput } from './output.ts';
import { CORE_STREAMS } from './truth.ts';

/** A fresh temporary data directory and the demo pipeline of the emulator's Fuji world, as a file in it. */
export function demoWorkspace(emulator: Emulator, edit: (p: Record<string, unknown>) => void = () => {}) {
  const dir = mkdtempSync(join(tmpdir(), 'avalake-'));
  const pipeline = demoPipelineOf(emulator.truth, 'fuji', emulator.url) as Record<string, unknown>;
  edit(pipeline);
  const pipelinePath = join(dir, 'pipeline.json');
  writeFileSync(pipelinePath, JSON.stringify(pipeline));
  return { dir, dataDir: join(dir, 'data'), pipelinePath };
}

/** A pipeline small enough to extract in well under a second: one address, one node, the primary network. */
export function smallPipeline(emulator: Emulator): Record<string, unknown> {
  const demo = demoPipelineOf(emulator.truth, 'fuji', emulator.url);
  return {
    network: 'fuji',
    urls: demo.urls,
    primary: { addresses: demo.primary.addresses.slice(0, 1), nodeIds: demo.primary.nodeIds.slice(0, 1) },
  };
}

/** A fresh temporary directory with `pipeline` (an object, or text as it is) as its pipeline.json. */
export function pipelineWorkspace(pipeline: unknown, prefix = 'avalake-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const pipelinePath = join(dir, 'pipeline.json');
  writeFileSync(pipelinePath, typeof pipeline === 'string' ? pipeline : JSON.stringify(pipeline));
  return { dir, dataDir: join(dir, 'data'), pipelinePath };
}

/** Runs the `extract` command in-process, with JSON logs, capturing what it and its logger write. */
export const extractCaptured = (args: Parameters<typeof extract>[0], env: Record<string, string> = {}) =>
  captureOutput(() => extract({ logFormat: 'json', ...args }, env));

/** The demo workspace restricted to the core streams (issue 3's eight), which the truth helpers cover. */
export const coreWorkspace = (emulator: Emulator, edit: (p: Record<string, unknown>) => void = () => {}) =>
  demoWorkspace(emulator, (p) => {
    p.streams = [...CORE_STREAMS];
    edit(p);
  });

/** One extract run of a pipeline file into a data directory, in-process. */
export async function extractOnce(
  pipelinePath: string,
  dataDir: string,
  flags: { streams?: string; fullRefresh?: boolean } = {},
  /** Wraps the HTTP client (to change what the source seems to answer). */
  through: (http: HttpClient) => HttpClient = (http) => http,
): Promise<RunSummary> {
  const config = await resolveExtractConfig({ pipeline: pipelinePath, dataDir, ...flags }, {});
  const http = through(createHttpClient({ userAgent: 'avalake/test' }));
  try {
    return await runExtract({
      pipeline: config.pipeline,
      streams: config.streams,
      dataDir,
      http,
      fullRefresh: config.fullRefresh,
    });
  } finally {
    await http.close();
  }
}

/** Requests a run made, summed over its partitions. */
export const requestsOf = (summary: RunSummary) => summary.partitions.reduce((n, p) => n + p.requests, 0);

/** Metrics are many one-page partitions: one chain's daily series keeps a test of the whole pipeline short. */
export function fewMetrics(pipeline: Record<string, unknown>): void {
  const metrics = pipeline.metrics as { chains: string[]; intervals: string[] };
  metrics.chains = metrics.chains.slice(0, 1);
  metrics.intervals = ['day'];
}

/** The core pipeline in small commits (100 rows) and two partitions at a time: work several workers can split. */
export const workersWorkspace = (emulator: Emulator) =>
  coreWorkspace(emulator, (p) => {
    p.flush = { rows: 100 };
    p.concurrency = 2;
    fewMetrics(p);
  });

/**
 * A core workspace extracted twice, a day of the emulator's clock apart (and the same into `reference`,
 * when given): streams with several small files, to damage, compact or repair.
 */
export async function extractedTwoDays(emulator: Emulator, reference?: string) {
  const w = coreWorkspace(emulator);
  for (const day of [0, 1]) {
    if (day > 0) emulator.advance(86_400);
    expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
    if (reference) expect((await extractOnce(w.pipelinePath, reference)).status).toBe('ok');
  }
  return w;
}
