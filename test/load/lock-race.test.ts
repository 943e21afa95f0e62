import { existsSync, readFileSync } from 'node:fs';
import type * as fsp from 'node:fs/promises';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';

/**
 * A lock read while another run takes it over: its time and its text must be the same file's. Two
 * containers' cron runs start together after a killed one: the first replaces the stale lock, and the
 * second must not judge the first's fresh lock by the stale one's time.
 */
const hooks: {
  afterLook?: { path: string; run: () => Promise<void> };
  beforeRename?: { path: string; run: () => Promise<void> };
} = {};
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof fsp>();
  /** Runs the hook once, just after the first look at the lock file (its time, or the file opened). */
  const after =
    <A extends unknown[], R>(look: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await look(...args);
      const hook = hooks.afterLook;
      if (hook && String(args[0]) === hook.path) {
        hooks.afterLook = undefined;
        await hook.run();
      }
      return result;
    };
  const rename: typeof real.rename = async (from, to) => {
    const hook = hooks.beforeRename;
    if (hook && String(from) === hook.path) {
      hooks.beforeRename = undefined;
      await hook.run();
    }
    return real.rename(from, to);
  };
  return { ...real, stat: after(real.stat), open: after(real.open), rename };
});

const { acquireLock, LockHeldError, LockLostError } = await import('../../src/load/lock.ts');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'avalake-lock-race-'));
});
afterEach(async () => {
  hooks.afterLook = undefined;
  hooks.beforeRename = undefined;
  await rm(dir, { recursive: true, force: true });
});

const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id');

const container = (token: string) =>
  `${JSON.stringify({
    pid: 1,
    hostname: hostname(),
    since: new Date().toISOString(),
    command: 'avalake run',
    bootId: bootId().toString().trim(),
    pidNamespace: 'pid:[1]',
    heartbeatSeconds: 1,
    token,
  })}\n`;

it.runIf(existsSync('/proc/sys/kernel/random/boot_id'))(
  'does not take a live lock that replaced a stale one between the reads of its time and its text',
  async () => {
    const lockFile = join(dir, 'avalake.lock');
    // A killed container's lock, its heartbeat a minute old (stale after 20 s).
    await writeFile(lockFile, container('killed'));
    const old = new Date(Date.now() - 60_000);
    await utimes(lockFile, old, old);
    // Just after this run first looked at the stale lock, another container's run took it over.
    hooks.afterLook = {
      path: lockFile,
      run: async () => {
        await rm(lockFile);
        await writeFile(lockFile, container('live'));
      },
    };
    const taken = await acquireLock(lockFile).catch((e) => e);
    expect(hooks.afterLook).toBeUndefined(); // the takeover did happen mid-read
    expect(taken).toBeInstanceOf(LockHeldError);
    expect(JSON.parse(await readFile(lockFile, 'utf8')).token).toBe('live');
  },
);

it("knows its lock lost when another run took it over between a beat's read and its touch", async () => {
  process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS = '0.5';
  try {
    const lockFile = join(dir, 'avalake.lock');
    const lock = await acquireLock(lockFile);
    // The first beat has read its lock when another run, which judged it stale, takes it over.
    let fired = false;
    hooks.afterLook = {
      path: lockFile,
      run: async () => {
        await rm(lockFile);
        await writeFile(lockFile, container('another-run'));
        fired = true;
      },
    };
    while (!fired) await new Promise((resolve) => setTimeout(resolve, 10));
    // The beat done, well before the next: it touched the other run's lock, which is not this one's.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(() => lock.assertHeld()).toThrow(LockLostError);
    await lock.release();
    expect(JSON.parse(await readFile(lockFile, 'utf8')).token).toBe('another-run');
  } finally {
    delete process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS;
  }
});

it("does not take a lock whose holder's heartbeat touched it after it was judged stale", async () => {
  const lockFile = join(dir, 'avalake.lock');
  await writeFile(lockFile, container('paused'));
  const old = new Date(Date.now() - 60_000);
  await utimes(lockFile, old, old);
  // After this run judged the lock stale by its time, before it moved it aside, its holder woke and beat.
  hooks.beforeRename = {
    path: lockFile,
    run: async () => {
      const now = new Date();
      await utimes(lockFile, now, now);
    },
  };
  const taken = await acquireLock(lockFile).catch((e) => e);
  expect(hooks.beforeRename).toBeUndefined();
  expect(taken).toBeInstanceOf(LockHeldError);
  expect(JSON.parse(await readFile(lockFile, 'utf8')).token).toBe('paused');
});
