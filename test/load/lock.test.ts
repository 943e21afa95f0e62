import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readLakeState } from '../../src/load/index.ts';
import { openLake } from '../../src/load/lake.ts';
import {
  acquireLock,
  LockHeldError,
  LockLostError,
  readLockHolder,
  readLockStanding,
  withoutSecrets,
} from '../../src/load/lock.ts';
import { repairLake } from '../../src/load/repair.ts';
import { lake } from '../../src/schemas/lake.ts';

let dir: string;
let lockFile: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'avalake-lock-'));
  lockFile = join(dir, 'avalake.lock');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A pid that is certainly not running: a child that has exited and been reaped. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

/** What a lock this process takes says of it (taken and released). */
async function ownLock() {
  const lock = await acquireLock(lockFile);
  await lock.release();
  return lock.holder;
}

const holderFile = (fields: Record<string, unknown>) =>
  `${JSON.stringify({ hostname: hostname(), since: '2024-01-01T00:00:00.000Z', command: 'old run', token: 't', ...fields })}\n`;

describe('data directory lock', () => {
  it('records who holds it and removes the file on release', async () => {
    const lock = await acquireLock(lockFile, { command: 'avalake run demo' });
    expect(await readLockHolder(lockFile)).toMatchObject({
      pid: process.pid,
      hostname: hostname(),
      command: 'avalake run demo',
    });
    await lock.release();
    expect(existsSync(lockFile)).toBe(false);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a second holder while the first is alive, naming it', async () => {
    const lock = await acquireLock(lockFile, { command: 'first' });
    const error = await acquireLock(lockFile).catch((e) => e);
    expect(error).toBeInstanceOf(LockHeldError);
    expect(error.exitCode).toBe(75);
    expect(error.holder).toMatchObject({ pid: process.pid, command: 'first', since: lock.holder.since });
    expect(error.message).toContain(`pid ${process.pid} on ${hostname()} since ${lock.holder.since} (first)`);
    await lock.release();
  });

  it('lets exactly one of several racing acquirers win', async () => {
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => acquireLock(lockFile)));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(
      results.filter((r) => r.status === 'rejected').every((r) => r.reason instanceof LockHeldError),
    ).toBe(true);
    await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof acquireLock>>>).value.release();
  });

  it('keeps no secret of the command it shows: the API key and URL passwords are masked', async () => {
    const command =
      'bin/avalake.js extract p.json --api-key SeCrEt-1 --catalog postgres://avalake:pw-2@db:5432/lake ' +
      '--data-dir s3://bucket/lake --api-key=SeCrEt-3 --node-url=http://op:pw-4@node:9650';
    const lock = await acquireLock(lockFile, { command });
    const written = await readFile(lockFile, 'utf8');
    const error = (await acquireLock(lockFile).catch((e: unknown) => e)) as LockHeldError;
    for (const shown of [written, error.message, (await readLockHolder(lockFile))?.command])
      for (const secret of ['SeCrEt-1', 'pw-2', 'SeCrEt-3', 'pw-4']) expect(shown).not.toContain(secret);
    expect(lock.holder.command).toBe(
      'bin/avalake.js extract p.json --api-key *** --catalog postgres://avalake:***@db:5432/lake ' +
        '--data-dir s3://bucket/lake --api-key=*** --node-url=http://op:***@node:9650',
    );
    await lock.release();
  });

  it('masks a catalog password given as a query parameter, or in a URL that does not parse', async () => {
    const command =
      'bin/avalake.js build --catalog postgres://postgres@127.0.0.1:55433/db?sslmode=require&password=S3cr3tPw ' +
      '--catalog=postgres://u@h/db?PASSWORD=pw-5 --node-url postgress://postgres:Sec/pw-6@127.0.0.1/x ' +
      '--catalog pg://postgres:Sec:pw-7@127.0.0.1/x --local-dir D';
    const lock = await acquireLock(lockFile, { command });
    const written = await readFile(lockFile, 'utf8');
    const error = (await acquireLock(lockFile).catch((e: unknown) => e)) as LockHeldError;
    for (const shown of [written, error.message, (await readLockHolder(lockFile))?.command])
      for (const secret of ['S3cr3tPw', 'pw-5', 'pw-6', 'pw-7']) expect(shown).not.toContain(secret);
    expect(lock.holder.command).toBe(
      'bin/avalake.js build --catalog postgres://postgres@127.0.0.1:55433/db?sslmode=require&password=*** ' +
        '--catalog=postgres://u@h/db?PASSWORD=*** --node-url postgress://postgres:***@127.0.0.1/x ' +
        '--catalog pg://postgres:***@127.0.0.1/x --local-dir D',
    );
    await lock.release();
  });

  it('masks each argument of a command line whole, a password with a space in it too', () => {
    expect(
      withoutSecrets(['build', '--catalog', 'postgres://u:with space-pw@h/db', '--api-key', 'a key']),
    ).toBe('build --catalog postgres://u:***@h/db --api-key ***');
  });

  it('masks the key under every spelling the command line takes: --api-key and --apiKey, spaced or with =', async () => {
    const command = [
      'run',
      '--apiKey',
      'sk-canary-1',
      '--apiKey=sk-canary-2',
      '--api-key',
      'sk-canary-3',
      '--api-key=sk-canary-4',
      '--base-url',
      'http://h',
    ];
    expect(withoutSecrets(command)).toBe(
      'run --apiKey *** --apiKey=*** --api-key *** --api-key=*** --base-url http://h',
    );
    const lock = await acquireLock(lockFile, { command: command.join(' ') });
    const error = (await acquireLock(lockFile).catch((e: unknown) => e)) as LockHeldError;
    for (const shown of [await readFile(lockFile, 'utf8'), error.message])
      expect(shown).not.toContain('canary');
    await lock.release();
  });

  it('masks a key in a lock file written before commands were masked', async () => {
    await writeFile(
      lockFile,
      holderFile({ pid: process.pid, hostname: 'elsewhere', command: 'avalake run --api-key OldKey-5' }),
    );
    expect((await readLockHolder(lockFile))?.command).toBe('avalake run --api-key ***');
    const error = (await acquireLock(lockFile).catch((e: unknown) => e)) as LockHeldError;
    expect(error.message).toContain('(avalake run --api-key ***)');
    expect(error.message).not.toContain('OldKey-5');
  });

  it('takes over a lock whose process is gone', async () => {
    await writeFile(lockFile, holderFile({ pid: deadPid() }));
    const lock = await acquireLock(lockFile);
    expect((await readLockHolder(lockFile))?.pid).toBe(process.pid);
    await lock.release();
  });

  it('takes over a lock from before a reboot even if its pid is alive now', async () => {
    if (!existsSync('/proc/sys/kernel/random/boot_id')) return;
    await writeFile(lockFile, holderFile({ pid: process.pid, bootId: 'a-previous-boot' }));
    const lock = await acquireLock(lockFile);
    await lock.release();
  });

  it('takes over a lock whose pid was given to a process started after it was taken', async () => {
    if (!existsSync('/proc/self/stat')) return;
    // A run killed an hour ago; its pid now names a process that started a moment ago (this one, as far
    // as the lock can tell: it started after the lock was taken).
    const anHourAgo = new Date(Date.now() - process.uptime() * 1000 - 3_600_000).toISOString();
    await writeFile(lockFile, holderFile({ pid: process.pid, since: anHourAgo }));
    const lock = await acquireLock(lockFile);
    expect((await readLockHolder(lockFile))?.token).toBe(lock.holder.token);
    await lock.release();
    // The same pid, the lock taken after the process started: its holder, alive.
    const justNow = new Date(Date.now() - process.uptime() * 1000 + 1000).toISOString();
    await writeFile(lockFile, holderFile({ pid: process.pid, since: justNow }));
    await expect(acquireLock(lockFile)).rejects.toBeInstanceOf(LockHeldError);
  });

  it('tells its holder from a later process with the same pid by their start, whatever the clock did', async () => {
    if (!existsSync('/proc/self/stat')) return;
    const { bootId, startTicks, pidNamespace } = await ownLock();
    expect(startTicks).toBeGreaterThan(0);
    // Taken while the clock ran six hours ahead by a run since killed; its pid now names this process,
    // which started at another tick. By the time alone it looks like its holder (started before it).
    const sixHoursAhead = new Date(Date.now() + 6 * 3_600_000).toISOString();
    const other = {
      pid: process.pid,
      bootId,
      pidNamespace,
      since: sixHoursAhead,
      startTicks: Number(startTicks) - 1,
    };
    await writeFile(lockFile, holderFile(other));
    await (await acquireLock(lockFile)).release();
    // This process's own lock, though the clock stepped forward a day since it was taken: held.
    const aDayAgo = new Date(Date.now() - 86_400_000).toISOString();
    await writeFile(
      lockFile,
      holderFile({ pid: process.pid, bootId, pidNamespace, since: aDayAgo, startTicks }),
    );
    await expect(acquireLock(lockFile)).rejects.toBeInstanceOf(LockHeldError);
  });

  it('keeps a lock of another pid namespace from an avalake before heartbeats: it cannot be judged', async () => {
    if (!existsSync('/proc/self/ns/pid')) return;
    const { bootId, startTicks, pidNamespace } = await ownLock();
    expect(pidNamespace).toMatch(/^pid:\[\d+\]$/);
    // Taken a moment ago by a pid 1 (or any pid) of another container: this process, as its pid reads
    // here, started before that, so it may be the holder.
    const other = {
      pid: process.pid,
      bootId,
      since: new Date().toISOString(),
      startTicks: Number(startTicks) - 1,
      pidNamespace: 'pid:[1]',
    };
    await writeFile(lockFile, holderFile(other));
    await expect(acquireLock(lockFile)).rejects.toBeInstanceOf(LockHeldError);
  });

  it('takes over an unreadable lock file', async () => {
    await writeFile(lockFile, 'garbage');
    await (await acquireLock(lockFile)).release();
  });

  it('treats a holder on another host as alive, and says how to let go of it', async () => {
    await writeFile(lockFile, holderFile({ pid: deadPid(), hostname: 'elsewhere', bootId: 'its-boot' }));
    const error = await acquireLock(lockFile).catch((e) => e);
    expect(error).toBeInstanceOf(LockHeldError);
    expect(error.message).toMatch(/pid \d+ on elsewhere/);
    expect(error.message).toContain(
      `elsewhere is another machine, whose runs this one cannot check: if no avalake run is left there, remove ${lockFile}`,
    );
  });

  it('waits for the holder with `wait`, and gives up after timeoutMs', async () => {
    const first = await acquireLock(lockFile);
    await expect(acquireLock(lockFile, { wait: true, pollMs: 10, timeoutMs: 50 })).rejects.toThrow(
      LockHeldError,
    );

    const waitedFor: number[] = [];
    const second = acquireLock(lockFile, { wait: true, pollMs: 10, onWait: (h) => waitedFor.push(h.pid) });
    await new Promise((resolve) => setTimeout(resolve, 80));
    await first.release();
    const lock = await second;
    expect(waitedFor).toEqual([process.pid]);
    expect((await readLockHolder(lockFile))?.token).toBe(lock.holder.token);
    await lock.release();
  });

  it('does not remove a lock it no longer holds', async () => {
    const lock = await acquireLock(lockFile);
    await writeFile(lockFile, holderFile({ pid: process.pid, token: 'someone-else' }));
    await lock.release();
    expect(JSON.parse(await readFile(lockFile, 'utf8')).token).toBe('someone-else');
  });

  it('guards openLake: one writer per data directory', async () => {
    const lake = await openLake({ dataDir: dir });
    await expect(openLake({ dataDir: dir })).rejects.toThrow(LockHeldError);
    await lake.close();
    await (await openLake({ dataDir: dir })).close();
  });
});

/** A lock file of a holder in another pid namespace of this machine (a container), last refreshed `beatAgoMs` ago. */
async function containerLock(fields: Record<string, unknown>, beatAgoMs: number) {
  const { bootId } = await ownLock();
  await writeFile(
    lockFile,
    holderFile({ pid: deadPid(), bootId, pidNamespace: 'pid:[1]', heartbeatSeconds: 1, ...fields }),
  );
  const beat = new Date(Date.now() - beatAgoMs);
  await utimes(lockFile, beat, beat);
}

describe('a holder this process cannot see: another pid namespace on this machine', () => {
  const linux = existsSync('/proc/self/ns/pid') && existsSync('/proc/sys/kernel/random/boot_id');

  it.runIf(linux)(
    'keeps a live one whose pid names no process here, while its heartbeat is recent',
    async () => {
      // A run in a container of the same hostname (docker --network host): its pid means nothing here.
      // Before heartbeats the pid was checked anyway, found gone, and the lock taken from a live run.
      await containerLock({}, 5_000);
      const error = await acquireLock(lockFile).catch((e) => e);
      expect(error).toBeInstanceOf(LockHeldError);
      expect((await readLockStanding(lockFile))?.live).toBe(true);
    },
  );

  it.runIf(linux)('takes it over once twenty heartbeats were missed (a killed container)', async () => {
    await containerLock({}, 21_000);
    expect((await readLockStanding(lockFile))?.live).toBe(false);
    const lock = await acquireLock(lockFile);
    expect((await readLockHolder(lockFile))?.token).toBe(lock.holder.token);
    await lock.release();
  });

  it.runIf(linux)(
    'judges a container of another hostname on this machine by its heartbeat, not as another host',
    async () => {
      // Each `docker run` has a hostname of its own: before, such a lock was another host's, kept for ever,
      // and every cron run after a killed one exited 75 until the file was removed by hand.
      await containerLock({ hostname: 'a1b2c3d4e5f6' }, 21_000);
      await (await acquireLock(lockFile)).release();
      await containerLock({ hostname: 'a1b2c3d4e5f6' }, 2_000);
      await expect(acquireLock(lockFile)).rejects.toThrow(/pid \d+ on a1b2c3d4e5f6/);
    },
  );

  it('refreshes its own lock file while held, and stops the commits once another run took it over', async () => {
    process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS = '0.05';
    try {
      const held = await openLake({ dataDir: dir });
      const old = new Date(Date.now() - 60_000);
      await utimes(join(dir, 'avalake.lock'), old, old);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(Date.now() - (await stat(join(dir, 'avalake.lock'))).mtimeMs).toBeLessThan(5_000);

      // Paused past its heartbeats, this run's lock was taken over by another.
      await writeFile(join(dir, 'avalake.lock'), holderFile({ pid: process.pid, token: 'another-run' }));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const schema = z.object({ id: lake.int64() });
      const flush = held.begin({ stream: 'transfers', partition: { network: 'fuji' }, schema });
      await flush.append([{ id: 1 }]);
      const refused = await flush.commit({ nextId: 2 }).catch((e) => e);
      expect(refused).toBeInstanceOf(LockLostError);
      expect(refused.exitCode).toBe(75);
      expect(refused.message).toContain(`this run no longer holds ${join(dir, 'avalake.lock')}`);
      // Nothing of the flush in the commit log, and the other run's lock left as it is.
      expect(existsSync(join(dir, 'lake', '_commits', 'transfers'))).toBe(false);
      await held.close().catch(() => undefined);
      expect(JSON.parse(await readFile(join(dir, 'avalake.lock'), 'utf8')).token).toBe('another-run');
    } finally {
      delete process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS;
    }
  });
});

const HOLDER = fileURLToPath(new URL('./fixtures/lock-holder.ts', import.meta.url));
/** Whether this machine lets the tests start a process in a pid namespace of its own (root, Linux). */
const canUnshare =
  spawnSync('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', 'true']).status === 0;

/** The lock holder fixture, in this pid namespace or (`container`) a new one, and its output lines as they come. */
function lockProcess(mode: 'hold' | 'take', file: string, { container = false } = {}) {
  const node = [process.execPath, '--import', 'tsx', HOLDER, mode, file];
  const child: ChildProcess = container
    ? spawn('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', ...node], { env: process.env })
    : spawn(node[0] as string, node.slice(1), { env: process.env });
  const lines: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const said = async (line: string | RegExp, ms = 20_000) => {
    const end = Date.now() + ms;
    const match = (l: string) => (typeof line === 'string' ? l === line : line.test(l));
    while (!lines.some(match)) {
      if (Date.now() > end) throw new Error(`${mode} never said ${line}; it said ${JSON.stringify(lines)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, lines, said, stop: () => child.kill('SIGKILL') };
}

describe('a run that wakes from a pause', () => {
  it('looks at its lock before the first commit after its beats fell behind, not at the next beat', async () => {
    process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS = '0.05';
    try {
      const lock = await acquireLock(lockFile);
      // Paused: no timer runs for 300 ms (six beats), and meanwhile another run took the lock over.
      const until = Date.now() + 300;
      while (Date.now() < until) {}
      writeFileSync(lockFile, holderFile({ pid: process.pid, token: 'another-run' }));
      expect(() => lock.assertHeld()).toThrow(LockLostError);
      await lock.release();
      expect(JSON.parse(await readFile(lockFile, 'utf8')).token).toBe('another-run');
    } finally {
      delete process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS;
    }
  });
});

describe.runIf(canUnshare)('runs in two pid namespaces of one machine, as processes (unshare)', () => {
  it('refuses the lock to a container while a run holds it, whatever its pid means there', async () => {
    const holder = lockProcess('hold', lockFile);
    try {
      await holder.said(/^held /);
      const taker = lockProcess('take', lockFile, { container: true });
      await taker.said('refused');
      expect(taker.lines).toEqual(['refused']);
    } finally {
      holder.stop();
    }
  });

  it("hands a paused run's lock to a container after its missed heartbeats, and the run knows it lost it when it wakes", async () => {
    process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS = '0.1';
    const holder = lockProcess('hold', lockFile);
    let taker: ReturnType<typeof lockProcess> | undefined;
    try {
      await holder.said(/^held /);
      holder.child.kill('SIGSTOP');
      // Twenty missed beats of a tenth of a second: stale two seconds after its last touch. Waited for by
      // the file's time, not by a start-up's, which a busy machine stretches past any window.
      for (;;) {
        const age = Date.now() - (await stat(lockFile)).mtimeMs;
        if (age > 2_500) break;
        await new Promise((resolve) => setTimeout(resolve, 2_600 - age));
      }
      taker = lockProcess('take', lockFile, { container: true });
      await taker.said('took');
      holder.child.kill('SIGCONT');
      await holder.said('lost');
    } finally {
      delete process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS;
      holder.child.kill('SIGCONT');
      holder.stop();
      taker?.stop();
    }
  });
});

describe('a run that lost its lock, and the run that took it over', () => {
  it('writes no staged file once its lock is lost: the next open is not left with a staged file that contradicts a commit', async () => {
    process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS = '0.05';
    try {
      const schema = z.object({ id: lake.int64() });
      const partition = { network: 'fuji' };
      const paused = await openLake({ dataDir: dir });
      const pending = paused.begin({ stream: 'transfers', partition, schema });
      await pending.append([{ id: 1 }]);
      // Paused past its heartbeats: another run took the lock over and committed the same stream.
      await rm(join(dir, 'avalake.lock'));
      const other = await openLake({ dataDir: dir });
      const flush = other.begin({ stream: 'transfers', partition, schema });
      await flush.append([{ id: 2 }]);
      await flush.commit({ nextId: 3 });
      await other.close();
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The paused run wakes: its commit is refused, and it leaves nothing behind in the data directory.
      const refused = await pending.commit({ nextId: 2 }).catch((e) => e);
      expect(refused).toBeInstanceOf(LockLostError);
      await paused.close().catch(() => undefined);
      // Its staged file would stand under the name of the other run's commit 1, with another sha256:
      // every open after it stopped on "staged file of commit 1 has sha256 …" (LakeCorruptError).
      expect(await readdir(join(dir, 'lake', '_staging', 'transfers')).catch(() => [])).toEqual([]);
      await (await openLake({ dataDir: dir })).close();
    } finally {
      delete process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS;
    }
  });
});

describe('a repair that lost its lock', () => {
  it('does not rewind the partitions of the run that took the lock over', async () => {
    process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS = '0.05';
    try {
      const schema = z.object({ id: lake.int64() });
      const partition = { network: 'fuji' };
      const writer = await openLake({ dataDir: dir });
      const flush = writer.begin({ stream: 'transfers', partition, schema });
      await flush.append([{ id: 1 }]);
      const record = await flush.commit({ nextId: 2 });
      await writer.close();
      await rm(join(dir, 'lake', record.files[0]?.path as string));
      const repaired = await repairLake({
        dataDir: dir,
        onStep: (_stream, step) => {
          if (step !== 'commit') return;
          // Paused past its heartbeats, meanwhile another run took the lock over.
          const until = Date.now() + 300;
          while (Date.now() < until) {}
          writeFileSync(lockFile, holderFile({ pid: process.pid, token: 'another-run' }));
        },
      }).catch((e) => e);
      expect(repaired).toBeInstanceOf(LockLostError);
      const state = (await readLakeState(dir)).get('transfers');
      expect([...(state?.partitions.values() ?? [])].map((p) => p.checkpoint)).toEqual([{ nextId: 2 }]);
    } finally {
      delete process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS;
    }
  });
});
