import { readFileSync } from 'node:fs';
import { vi } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { type Pipeline, PipelineSchema } from '../../src/extract/pipeline.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { startEmulator, TEST_EPOCH } from './emulator.ts';
import { demoWorkspace, extractOnce } from './extract.ts';
import { MART_STREAMS } from './truth.ts';
import { queryWarehouse } from './warehouse.ts';

const DAY = 86_400;

/** The lake the marts are checked on: extract runs of the demo pipeline's mart streams, built into a warehouse. */
export interface MartsWorkspace {
  emulator: Emulator;
  workspace: ReturnType<typeof demoWorkspace>;
  pipeline: Pipeline;
  /** The world time of each run, oldest first: each run's validators snapshot was taken then. */
  snapshotTimes: number[];
  /** The last run's world time (the newest extract). */
  now: number;
  /** Runs a query on the built warehouse. */
  query(sql: string): Promise<Record<string, unknown>[]>;
}

/**
 * An emulator at TEST_EPOCH and `runs` extract runs of the mart streams a day apart (three validators
 * snapshots, and the world growing in between), then one warehouse build in which every mart builds.
 * The caller closes `emulator`.
 */
export async function martsWorkspace(options: { runs?: number } = {}): Promise<MartsWorkspace> {
  const runs = options.runs ?? 3;
  const emulator = await startEmulator();
  const workspace = demoWorkspace(emulator);
  const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
  const snapshotTimes: number[] = [];
  // Note: a snapshot is stamped with the extractor's wall clock; pinning Date to the emulator's clock
  // makes each snapshot's time the world time it shows.
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    for (let run = 0; run < runs; run++) {
      if (run > 0) emulator.advance(DAY);
      const now = Math.floor(emulator.clock.now());
      vi.setSystemTime(now * 1000);
      const summary = await extractOnce(workspace.pipelinePath, workspace.dataDir, {
        streams: MART_STREAMS.join(','),
      });
      if (summary.status !== 'ok') throw new Error(`extract run ${run + 1} ended ${summary.status}`);
      snapshotTimes.push(now);
    }
  } finally {
    vi.useRealTimers();
  }
  if (snapshotTimes[0] !== TEST_EPOCH) throw new Error(`the first run was at ${snapshotTimes[0]}`);
  const built = await buildWarehouse({ dataDir: workspace.dataDir });
  // Staging models of streams this lake does not hold are skipped; every mart builds.
  const skippedMarts = built.skipped.filter((s) => !s.name.startsWith('stg_'));
  if (skippedMarts.length > 0) throw new Error(`marts not built: ${JSON.stringify(skippedMarts)}`);
  return {
    emulator,
    workspace,
    pipeline,
    snapshotTimes,
    now: snapshotTimes[snapshotTimes.length - 1] as number,
    query: (sql) => queryWarehouse(workspace.dataDir, sql),
  };
}
