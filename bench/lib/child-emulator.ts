import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** How long a child may take to print its `listening on` line before the bench gives up. */
const STARTUP_TIMEOUT_MS = 60_000;
/** How long a child may take to exit after SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 5_000;

const BIN = fileURLToPath(new URL('../../bin/avalake.js', import.meta.url));

/** An emulator running as a child process, so its memory is measured apart from the client's. */
export interface ChildEmulator {
  readonly url: string;
  readonly pid: number;
  /** Milliseconds from spawn to the `listening on` line. */
  readonly startupMs: number;
  stop(): Promise<void>;
}

export interface ChildEmulatorOptions {
  scale: string;
  seed: number;
  /** `fixed:<unix seconds>`: the bench and the child must see the same world. */
  clock: string;
  /** `--faults`, e.g. `slow=1:50` for a service 50 ms away. */
  faults?: string;
}

const running = new Set<ChildProcess>();
// Note: a bench that throws must not leave emulators behind; only the children spawned here are killed.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `avalake emulator` on 127.0.0.1, any free port, rate limit off. */
export function startChildEmulator(options: ChildEmulatorOptions): Promise<ChildEmulator> {
  const args = [
    BIN,
    'emulator',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--scale',
    options.scale,
    '--seed',
    String(options.seed),
    '--clock',
    options.clock,
    '--rate-limit',
    'off',
    ...(options.faults ? ['--faults', options.faults] : []),
  ];
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000);
  });

  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
    running.delete(child);
  };

  return new Promise((resolve, reject) => {
    let stdout = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      void stop();
      reject(new Error(`emulator (--scale ${options.scale}) ${why}; stderr: ${stderr.trim() || '(empty)'}`));
    };
    const timer = setTimeout(
      () => fail(`printed no "listening on" line within ${STARTUP_TIMEOUT_MS} ms`),
      STARTUP_TIMEOUT_MS,
    );
    const onEarlyExit = (code: number | null, signal: string | null) =>
      fail(`exited before listening (code ${code}, signal ${signal})`);
    child.once('exit', onEarlyExit);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (!match || child.pid === undefined) return;
      clearTimeout(timer);
      child.off('exit', onEarlyExit);
      child.stdout.removeAllListeners('data');
      child.stdout.resume();
      resolve({ url: match[1] as string, pid: child.pid, startupMs: performance.now() - started, stop });
    });
  });
}
