import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace } from '../helpers/extract.ts';
import { runCli } from '../helpers/output.ts';

const emulator = useEmulator();

describe('a run at the highest concurrency a pipeline takes (32)', () => {
  it('prints no MaxListenersExceededWarning: its requests each listen to the run-wide signal', async () => {
    const w = demoWorkspace(emulator, (p) => {
      p.concurrency = 32;
    });
    try {
      const result = await runCli(['extract', w.pipelinePath, '--data-dir', w.dataDir, '--quiet']);
      expect(result.code, result.stderr).toBe(0);
      // Before, at 11 requests in flight: "(node:…) MaxListenersExceededWarning: Possible EventTarget
      // memory leak detected. 11 abort listeners added to [AbortSignal]".
      expect(result.stderr).not.toMatch(/MaxListenersExceededWarning|memory leak/);
    } finally {
      await rm(w.dir, { recursive: true, force: true });
    }
  }, 120_000);
});
