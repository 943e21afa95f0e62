import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { demoPipelineOf } from '../../src/emulator/demo-pipeline.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { LAUNCHER, launcherEnv } from '../helpers/output.ts';
import { SLOW_LOAD_MARK } from '../helpers/slow-run-load-hooks.mjs';

/**
 * A signal while the CLI is still starting (yargs, then the command's modules) used to end node by its
 * default action: exit 143 and no report, where cron and systemd expect 130 and `run --json` its one
 * object. The CLI now holds such a signal and hands it to the command once the command has its handlers.
 * To hit that moment every time, the test slows the loading of the `run` command's module by a second
 * (test/helpers/slow-run-load.mjs) and signals when it begins.
 */

const SLOW_LOAD = fileURLToPath(new URL('../helpers/slow-run-load.mjs', import.meta.url));

const emulator = useEmulator();

describe('a signal while the CLI starts', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: run --json ends as interrupted, exit 130 with its report, nothing written',
    async (signal) => {
      const dir = mkdtempSync(join(tmpdir(), 'avalake-start-signal-'));
      const demo = demoPipelineOf(emulator.truth, 'fuji', emulator.url);
      const pipeline = join(dir, 'pipeline.json');
      writeFileSync(
        pipeline,
        JSON.stringify({ network: 'fuji', urls: demo.urls, primary: { nodeIds: demo.primary.nodeIds } }),
      );
      const dataDir = join(dir, 'data');
      const child = spawn(LAUNCHER, ['run', pipeline, '--data-dir', dataDir, '--json', '--quiet'], {
        env: launcherEnv({ NODE_OPTIONS: `--import ${SLOW_LOAD}` }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (d) => {
          stderr += d;
          if (stderr.includes(SLOW_LOAD_MARK)) resolve();
        });
        exited.then(() => reject(new Error(`the CLI ended before it loaded the run command: ${stderr}`)));
      });
      child.kill(signal);

      expect(await exited, stderr).toBe(130);
      const report = JSON.parse(stdout) as { status: string; exitCode: number; extract: { status: string } };
      expect([report.status, report.exitCode, report.extract.status]).toEqual([
        'interrupted',
        130,
        'interrupted',
      ]);
      expect(stderr).not.toMatch(/\n\s+at /);
      // At most the data directory, empty: no lock, checkpoint or file left.
      expect(existsSync(dataDir) ? readdirSync(dataDir) : []).toEqual([]);
    },
  );
});
