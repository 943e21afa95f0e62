import { spawn } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';

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
 * no colour), and collects its output.
 */
export function runCli(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(LAUNCHER, args, {
      env: launcherEnv({ NO_COLOR: '1', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
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
