import { spawn } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
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
