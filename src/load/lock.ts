import { randomBytes } from 'node:crypto';
import { link, readFile, readlink, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { redactCatalogUrl } from './catalog-url.ts';
import { fsyncDir, writeDurable } from './durable.ts';

/** Who holds a data directory: written into the lock file, shown when another run finds it taken. */
export interface LockHolder {
  pid: number;
  hostname: string;
  /** ISO time the lock was taken. */
  since: string;
  command: string;
  /** Linux boot id: a lock from before a reboot is stale whatever its pid now names. */
  bootId?: string;
  /**
   * When the holder's process started, in clock ticks after boot (Linux): with the boot id and the pid
   * namespace, it tells that process from a later one given the same pid, whatever the wall clock did.
   */
  startTicks?: number;
  /**
   * The holder's pid namespace (Linux, `pid:[…]`). Containers that share a hostname each count pids
   * from 1: a pid of another namespace names another process here, and only the time test applies.
   */
  pidNamespace?: string;
  /** Tells our own lock from a later one with a reused pid. */
  token: string;
}

/** Another live run holds the data directory. The CLI exits with `exitCode` (75, EX_TEMPFAIL). */
export class LockHeldError extends Error {
  override name = 'LockHeldError';
  readonly exitCode = 75;
  constructor(
    readonly lockFile: string,
    readonly holder: LockHolder,
  ) {
    super(
      `another avalake run holds ${lockFile}: pid ${holder.pid} on ${holder.hostname} since ${holder.since}` +
        ` (${holder.command || 'unknown command'}); let it finish, or pass --wait to queue behind it`,
    );
  }
}

export interface DataDirLock {
  readonly path: string;
  readonly holder: LockHolder;
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>;
}

export interface LockOptions {
  /** Poll until the lock is free instead of failing with LockHeldError. */
  wait?: boolean;
  pollMs?: number;
  /** With `wait`: give up after this long with LockHeldError. Default: wait for ever. */
  timeoutMs?: number;
  /** Shown to a run that finds the lock taken, e.g. "avalake run pipelines/demo.json". */
  command?: string;
  /** Called once when `wait` starts waiting, e.g. to log who is ahead. */
  onWait?: (holder: LockHolder) => void;
  /** Ends a wait at once (Ctrl-C): the lock is not taken, and the wait rejects with the signal's reason. */
  signal?: AbortSignal;
}

const DEFAULT_POLL_MS = 1000;

/**
 * Flags whose value is a secret: the next word, or what follows `=`. Every spelling the command line
 * takes: yargs reads `--apiKey` (and `--api_key`) as `--api-key`.
 */
const SECRET_FLAG = /^--?api[-_]?key$/i;
/** Flags whose value is a catalog URL, shown with its password masked (redactCatalogUrl). */
const URL_FLAGS = ['--catalog'];

/**
 * A command line as a lock file keeps it, to show who holds the lock: the value of --api-key replaced by
 * `***`, and every URL in it (a catalog's `postgres://user:secret@host/db?password=secret`) without its
 * password. The lock file lives in the data directory, and its holder is shown by other runs and by
 * `status`. Given as words (process.argv), an argument with a space in it is masked whole.
 */
export function withoutSecrets(command: string | readonly string[]): string {
  const words = typeof command === 'string' ? command.split(' ') : command;
  return words
    .map((word, i) => {
      const [flag] = word.split('=', 1);
      if (flag !== undefined && flag !== word && SECRET_FLAG.test(flag)) return `${flag}=***`;
      const previous = words[i - 1] ?? '';
      if (SECRET_FLAG.test(previous)) return '***';
      const urlFlag = URL_FLAGS.find((f) => word.startsWith(`${f}=`));
      if (urlFlag) return `${urlFlag}=${redactCatalogUrl(word.slice(urlFlag.length + 1))}`;
      if (URL_FLAGS.includes(previous)) return redactCatalogUrl(word);
      return withoutUrlPassword(word);
    })
    .join(' ');
}

/** `--node-url=http://op:secret@node` → `--node-url=http://op:***@node`: any URL, after any `=`. */
function withoutUrlPassword(word: string): string {
  const at = word.indexOf('://');
  if (at < 0) return word;
  const prefix = word.slice(0, at).replace(/[^=]*$/, '');
  return `${prefix}${redactCatalogUrl(word.slice(prefix.length))}`;
}

/**
 * Takes the lock file `path`. The file appears complete or not at all (written aside, then hard-linked
 * into place, which fails if it exists), so a reader never sees a half-written holder. A holder whose
 * process is gone (same host: pid not alive, or the machine rebooted since) is stale and taken over.
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<DataDirLock> {
  const me: LockHolder = {
    pid: process.pid,
    hostname: hostname(),
    since: new Date().toISOString(),
    command: withoutSecrets(options.command ?? process.argv.slice(1)),
    bootId: await currentBootId(),
    ...startTicksField(await processStartTicks(process.pid)),
    ...pidNamespaceField(await currentPidNamespace()),
    token: randomBytes(8).toString('hex'),
  };
  // The wait is measured on the monotonic clock: NTP stepping the wall clock forward an hour must not end
  // a 30-minute --build-wait at once, nor a step back stretch it by an hour.
  const started = performance.now();
  let waiting = false;
  for (;;) {
    options.signal?.throwIfAborted();
    const holder = await tryLock(path, me);
    if (!holder) return lockHandle(path, me);
    const timedOut = options.timeoutMs !== undefined && performance.now() - started >= options.timeoutMs;
    if (!options.wait || timedOut) throw new LockHeldError(path, holder);
    if (!waiting) options.onWait?.(holder);
    waiting = true;
    await sleep(options.pollMs ?? DEFAULT_POLL_MS, undefined, { signal: options.signal });
  }
}

/** The current holder of `path` if any (stale or not), for status commands. */
export async function readLockHolder(path: string): Promise<LockHolder | undefined> {
  return (await readHolder(path))?.holder;
}

/** The lock's holder and whether it is still running (else the next run takes the lock over). */
export type LockStanding = LockHolder & { live: boolean };

export async function readLockStanding(path: string): Promise<LockStanding | undefined> {
  const holder = await readLockHolder(path);
  return holder && { ...holder, live: await isAlive(holder) };
}

/** undefined when we now hold the lock, else the live holder. */
async function tryLock(path: string, me: LockHolder): Promise<LockHolder | undefined> {
  const tmp = `${path}.${me.pid}.${me.token}`;
  await writeDurable(tmp, Buffer.from(`${JSON.stringify(me)}\n`));
  try {
    for (;;) {
      try {
        await link(tmp, path);
        await fsyncDir(dirname(path));
        return undefined;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const current = await readHolder(path);
      if (!current) continue; // released between our link and read: try again
      if (current.holder && (await isAlive(current.holder))) return current.holder;
      await removeStale(path, current.text);
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/**
 * Moves the stale lock aside, then checks that what moved is what was judged stale: if a third run took
 * the lock in between, its file is put back instead of deleted.
 */
async function removeStale(path: string, staleText: string): Promise<void> {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await readFile(aside, 'utf8').catch(() => '');
  if (moved !== staleText) await link(aside, path).catch(() => undefined);
  await unlink(aside);
}

async function readHolder(path: string): Promise<{ text: string; holder?: LockHolder } | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const holder = JSON.parse(text) as LockHolder;
    if (typeof holder.pid !== 'number') return { text };
    // A lock written before commands were masked may still name a key: never show it.
    return { text, holder: { ...holder, command: withoutSecrets(String(holder.command ?? '')) } };
  } catch {
    // Not written by acquireLock (which links complete files only): treat as stale.
    return { text };
  }
}

/**
 * A process that started this long after the lock was taken is not the run that took it: its pid was
 * given again (after a kill -9 or an OOM kill of the holder; a container counts pids from 1 at each
 * start). The slack covers the wall clock stepping forward while a run holds the lock. Only for locks
 * that cannot be told apart exactly: an older avalake's, or one of another pid namespace.
 */
const REUSED_PID_SLACK_MS = 5 * 60_000;

/** Whether the run that wrote the lock may still be running (a lock of another host always may). */
export async function isAlive(holder: LockHolder): Promise<boolean> {
  // Note: a pid on another host cannot be checked; such a lock must be removed by hand.
  if (holder.hostname !== hostname()) return true;
  const bootId = await currentBootId();
  if (holder.bootId && bootId && holder.bootId !== bootId) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const startTicks = await processStartTicks(holder.pid);
  if (startTicks === undefined) return true;
  // The same boot (checked above) and pid namespace: the same pid started at the same tick is the same process.
  const exact =
    holder.startTicks !== undefined &&
    holder.bootId === bootId &&
    holder.pidNamespace !== undefined &&
    holder.pidNamespace === (await currentPidNamespace());
  if (exact) return startTicks === holder.startTicks;
  const started = await startedAt(startTicks);
  return started === undefined || !(started > Date.parse(holder.since) + REUSED_PID_SLACK_MS);
}

/** When process `pid` started, in clock ticks after boot; undefined where /proc cannot tell (not Linux). */
async function processStartTicks(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Field 22, starttime; the fields are counted after the command's ")".
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isInteger(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

const startTicksField = (startTicks: number | undefined) => (startTicks !== undefined ? { startTicks } : {});

const pidNamespaceField = (pidNamespace: string | undefined) => (pidNamespace ? { pidNamespace } : {});

async function currentPidNamespace(): Promise<string | undefined> {
  try {
    return await readlink('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/** A start in clock ticks after boot as ms since the epoch, by the wall clock now. */
async function startedAt(startTicks: number): Promise<number | undefined> {
  try {
    const uptime = Number((await readFile('/proc/uptime', 'utf8')).split(' ')[0]);
    // Ticks are USER_HZ, 100 a second on every Linux.
    return Number.isFinite(uptime) ? Date.now() - (uptime - startTicks / 100) * 1000 : undefined;
  } catch {
    return undefined;
  }
}

async function currentBootId(): Promise<string | undefined> {
  try {
    return (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  } catch {
    return undefined;
  }
}

function lockHandle(path: string, me: LockHolder): DataDirLock {
  let released = false;
  return {
    path,
    holder: me,
    async release() {
      if (released) return;
      released = true;
      const current = await readHolder(path);
      if (current?.holder?.token === me.token) {
        await unlink(path);
        await fsyncDir(dirname(path));
      }
    },
  };
}
