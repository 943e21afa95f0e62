import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { rng } from '../../src/emulator/rng.ts';
import { PipelineSchema } from '../../src/extract/pipeline.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace } from '../helpers/extract.ts';
import { duplicateRows } from '../helpers/lake.ts';
import { CORE_STREAMS, lakeTotals, sorted, truthOf } from '../helpers/truth.ts';

const KILLS = 20;

/** Runs `avalake extract` as its own process; kills it with SIGKILL after `killAfterMs` if given. */
function extractProcess(pipeline: string, dataDir: string, killAfterMs?: number) {
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      ['bin/avalake.js', 'extract', pipeline, '--data-dir', dataDir, '--quiet', '--log-format', 'json'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer =
      killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

describe('crash safety', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
  });
  afterAll(() => emulator.close());

  it(`killed with SIGKILL ${KILLS} times and resumed, the lake equals a clean run's, with no row twice`, async () => {
    // Small flushes, so kills land between many commits as well as inside them.
    const workspace = coreWorkspace(emulator, (p) => {
      p.flush = { rows: 200 };
      p.concurrency = 2;
    });
    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
    const draws = rng(2026, 'sigkill');
    let killed = 0;
    for (let i = 0; i < KILLS; i++) {
      // Half a day passes between runs, so every run has new pages to fetch when the kill comes.
      if (i > 0) emulator.advance(12 * 3600);
      const result = await extractProcess(workspace.pipelinePath, workspace.dataDir, draws.int(300, 2500));
      if (result.signal === 'SIGKILL') killed++;
      else expect(result.code, result.stderr).toBe(0);
    }
    expect(killed).toBeGreaterThanOrEqual(KILLS / 4);
    const last = await extractProcess(workspace.pipelinePath, workspace.dataDir);
    expect(last.code, last.stderr).toBe(0);

    // The workspace is kept: a failure names it, to diff its lake and commit log against the truth.
    expect(sorted(await lakeTotals(workspace.dataDir)), workspace.dataDir).toEqual(
      sorted(await truthOf(emulator, pipeline)),
    );
    for (const stream of CORE_STREAMS.filter((s) => s !== 'validators'))
      expect(await duplicateRows(workspace.dataDir, stream), `${stream} in ${workspace.dataDir}`).toBe(0);
  }, 300_000);
});
