import { spawn } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { expect, vi } from 'vitest';
import type { RunReport } from '../../src/cli/run.ts';
import { committedRows } from './lake.ts';

/** Runs a command in-process and returns its exit code with what it wrote to stdout and stderr. */
export async function captureOutput(
  command: () => Promise<number>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await command();
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** What a command run as a process did: its exit code as the shell sees it, and its two streams. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The launcher npm links as `avalake` (package.json "bin"). */
export const LAUNCHER = fileURLToPath(new URL('../../bin/avalake', import.meta.url));

/** The environment of a process started through the launcher: `node` on the PATH is the one running the tests. */
export function launcherEnv(env: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
    ...env,
  };
}

/**
 * Runs `avalake ARGS` as a real process, as a user does (through the launcher; the environment plus `env`,
 * no colour), and collects its output. `fileSizeKiB` limits every file it writes (ulimit -f): a write past
 * it fails with EFBIG, as one on a full disk fails with ENOSPC, without a small file system to mount.
 * `openFiles` (ulimit -n) and `virtualMemoryKiB` (ulimit -v) limit the process likewise.
 * `cwd` is its working directory (default the tests'). `asNobody` runs it as the user nobody when the tests
 * run as root, for whom permissions refuse nothing (the files it reads and writes must be nobody's).
 */
export function runCli(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  {
    fileSizeKiB,
    openFiles,
    virtualMemoryKiB,
    cwd,
    asNobody,
  }: {
    fileSizeKiB?: number;
    openFiles?: number;
    virtualMemoryKiB?: number;
    cwd?: string;
    asNobody?: boolean;
  } = {},
): Promise<CliResult> {
  const limits = [
    fileSizeKiB !== undefined ? `ulimit -f ${fileSizeKiB}` : '',
    openFiles !== undefined ? `ulimit -n ${openFiles}` : '',
    virtualMemoryKiB !== undefined ? `ulimit -v ${virtualMemoryKiB}` : '',
  ].filter(Boolean);
  return new Promise((resolve) => {
    const [command, commandArgs] =
      limits.length > 0
        ? ['sh', ['-c', `${limits.join(' && ')} && exec "$0" "$@"`, LAUNCHER, ...args]]
        : asNobody && process.getuid?.() === 0
          ? ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', LAUNCHER, ...args]]
          : [LAUNCHER, args];
    const child = spawn(command, commandArgs, {
      env: launcherEnv({ NO_COLOR: '1', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(cwd !== undefined ? { cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** An emulator started as a process, once it has said where it listens and what world it serves. */
export interface EmulatorProcess {
  pid: number;
  /** Its start-up lines: `listening on URL`, then its world. */
  lines: string[];
  /** SIGTERM; resolves with its exit code, or `ended: false` (and it is killed) if it is still up 10 s on. */
  stop(): Promise<{ ended: boolean; code: number | null }>;
}

/** Runs `command emulator ARGS` (the launcher, or a link to it) with `env`, until it has printed both lines. */
export async function startEmulatorProcess(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<EmulatorProcess> {
  const child = spawn(command, ['emulator', '--port', '0', ...args], {
    env: launcherEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.split('\n').length > 2) resolve();
    });
    exited.then(() => reject(new Error(`the emulator ended before it printed two lines: ${stderr}`)));
  });
  return {
    pid: child.pid as number,
    lines: stdout.trim().split('\n'),
    async stop() {
      child.kill('SIGTERM');
      const ended = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
      if (!ended) child.kill('SIGKILL');
      return { ended, code: ended ? await exited : null };
    },
  };
}

/** The one JSON object `run --json` prints on stdout (exactly one line). */
export function runReportOf(stdout: string): RunReport {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string) as RunReport;
}

/**
 * Expects `run --json` to have stopped in its extract (a catalog, storage or device gone: exit 1, nothing
 * built) and to report what committed before: some rows, no more than the lake of `dataDir` holds (its
 * commit log in `catalog` when given). Returns the report.
 */
export async function expectExtractStopped(
  result: CliResult,
  dataDir: string,
  catalog?: string,
): Promise<RunReport> {
  expect(result.code, result.stderr).toBe(1);
  const report = runReportOf(result.stdout);
  expect(report).toMatchObject({
    status: 'failed',
    exitCode: 1,
    failedStep: 'extract',
    extract: { status: 'failed' },
    build: { status: 'not run', reason: 'the extract failed' },
  });
  const reported = Object.values(report.extract.streams).reduce((n, s) => n + s.rows, 0);
  expect(reported).toBeGreaterThan(0);
  expect(reported).toBeLessThanOrEqual(await committedRows(dataDir, catalog));
  expect(result.stderr).not.toMatch(/^\s+at\s/m);
  return report;
}
