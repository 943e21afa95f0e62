import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { readLakeState } from '../../src/load/lake.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { pipelineWorkspace, smallPipeline } from '../helpers/extract.ts';
import { LAUNCHER, launcherEnv } from '../helpers/output.ts';

const emulator = useEmulator();

it('a reader that goes away (| head -1) does not stop a run: it commits its work and exits 0', async () => {
  const w = pipelineWorkspace(smallPipeline(emulator));
  const child = spawn(
    LAUNCHER,
    [
      'extract',
      w.pipelinePath,
      '--data-dir',
      w.dataDir,
      '--streams',
      'rewards,delegators',
      '--log-format',
      'json',
    ],
    {
      env: launcherEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  // As `| head -1` does: the first line read, both pipes closed; every later write meets EPIPE.
  await new Promise((resolve) => child.stderr.once('data', resolve));
  child.stdout.destroy();
  child.stderr.destroy();
  expect(await closed).toBe(0);
  const streams = await readLakeState(w.dataDir);
  expect([...streams.keys()].sort()).toEqual(['delegators', 'rewards']);
  for (const state of streams.values()) expect(state.partitions.size).toBeGreaterThan(0);
}, 60_000);
