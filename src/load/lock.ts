import { randomBytes } from 'node:crypto';
import { readFileSync, utimesSync } from 'node:fs';
import { type FileHandle, link, open, readFile, readlink, rename, unlink, utimes } from 'node:fs/promises';
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
   * The holder's pid namespace (Linux, `pid:[…]`). Containers each count pids from 1: a pid of another
   * namespace names another process here, or none, so such a holder is judged by its heartbeat.
   */
  pidNamespace?: string;
  /**
   * How often the holder refreshes the lock file's modification time while it runs. Another pid
   * namespace on this machine (a container) cannot see the holder's process: such a holder is judged
   * by its heartbeat instead.
   */
  heartbeatSeconds?: number;
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
    /** The holder is another machine's, whose runs this one cannot check. */
    elsewhere = false,
  ) {
    super(
      `another avalake run holds ${lockFile}: pid ${holder.pid} on ${holder.hostname} since ${holder.since}` +
        ` (${holder.command || 'unknown command'}); let it finish, or pass --wait to queue behind it` +
        (elsewhere
          ? `; ${holder.hostname} is another machine, whose runs this one cannot check: if no avalake run is left there, remove ${lockFile}`
          : ''),
    );
  }
}

/**
 * The lock was taken over while this run held it: its heartbeat stopped for longer than a holder in
 * another pid namespace is given (the process or its container paused), or the lock file was removed.
 */
export class LockLostError extends Error {
  override name = 'LockLostError';
  readonly exitCode = 75;
  constructor(readonly lockFile: string) {
    super(
      `this run no longer holds ${lockFile}: its heartbeat stopped for longer than another run waits ` +
        '(the process or its container was paused), or the file was removed, and another run may have ' +
        'taken it over; this run writes nothing more there, and what it wrote before stays',
    );
  }
}

export interface DataDirLock {
  readonly path: string;
  readonly holder: LockHolder;
  /** Throws LockLostError once a heartbeat found the lock file gone or another run's. */
  assertHeld(): void;
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

/** How often a holder refreshes its lock file; `AVALAKE_LOCK_HEARTBEAT_SECONDS` overrides it (tests shorten it). */
export const DEFAULT_LOCK_HEARTBEAT_SECONDS = 30;
/**
 * Heartbeats a holder in another pid namespace may miss before its lock is stale: ten minutes at the
 * default, far past any stall of a running process, and a killed container's lock stops a cron job for
 * that long at most.
 */
const MISSED_HEARTBEATS = 20;

function heartbeatSeconds(): number {
  const set = Number(process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS);
  return set > 0 ? set : DEFAULT_LOCK_HEARTBEAT_SECONDS;
}

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
 * process is gone (same host: pid not alive, or the machine rebooted since; another container of this
 * machine: its heartbeat stopped) is stale and taken over.
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
    heartbeatSeconds: heartbeatSeconds(),
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
    if (!options.wait || timedOut) throw new LockHeldError(path, holder, await onAnotherMachine(holder));
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
  const current = await readHolder(path);
  const holder = current?.holder;
  return holder && { ...holder, live: await isAlive(holder, current.beatAt) };
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
      if (current.holder && (await isAlive(current.holder, current.beatAt))) return current.holder;
      await removeStale(path, current);
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/**
 * Moves the stale lock aside, then checks that what moved is what was judged stale: if a third run took
 * the lock in between, or its holder's heartbeat touched it since (a paused run that woke), the file is
 * put back instead of deleted.
 */
async function removeStale(path: string, stale: { text: string; beatAt?: number }): Promise<void> {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await readHolder(aside).catch(() => undefined);
  const same = moved?.text === stale.text && (stale.beatAt === undefined || moved.beatAt === stale.beatAt);
  if (!same) await link(aside, path).catch(() => undefined);
  await unlink(aside);
}

/** The lock file's text, its holder when it parses, and when its holder last refreshed it (ms). */
async function readHolder(
  path: string,
): Promise<{ text: string; holder?: LockHolder; beatAt?: number } | undefined> {
  let text: string;
  let beatAt: number;
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    // Note: the time and the text of one file, through one handle. Read by path, a lock another run put
    // in place of a stale one between the two reads lent the new holder the stale one's time, and a
    // third run took the live lock over (two containers' cron runs starting together after a killed one).
    beatAt = (await handle.stat()).mtimeMs;
    text = await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
  try {
    const holder = JSON.parse(text) as LockHolder;
    if (typeof holder.pid !== 'number') return { text };
    // A lock written before commands were masked may still name a key: never show it.
    return { text, beatAt, holder: { ...holder, command: withoutSecrets(String(holder.command ?? '')) } };
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

/** Whether the holder runs on another machine: another hostname, and not this boot of this kernel. */
async function onAnotherMachine(holder: LockHolder): Promise<boolean> {
  return (
    holder.hostname !== hostname() &&
    (holder.bootId === undefined || holder.bootId !== (await currentBootId()))
  );
}

/**
 * Whether the run that wrote the lock may still be running. `beatAt`: when the lock file was last
 * refreshed (its modification time, ms), for a holder whose process this one cannot see.
 */
export async function isAlive(holder: LockHolder, beatAt?: number): Promise<boolean> {
  // The same boot id is the same running kernel: this machine, whatever hostname a container was given.
  // A pid on another machine cannot be checked: such a lock is removed by hand.
  if (await onAnotherMachine(holder)) return true;
  const bootId = await currentBootId();
  const thisMachine = holder.bootId !== undefined && holder.bootId === bootId;
  if (holder.bootId && bootId && holder.bootId !== bootId) return false;
  const namespace = await currentPidNamespace();
  const otherNamespace =
    holder.pidNamespace !== undefined ? holder.pidNamespace !== namespace : holder.hostname !== hostname();
  if (thisMachine && otherNamespace) {
    // Another pid namespace (another container): its pids name other processes here, or none. Its
    // heartbeat tells; a lock of an avalake from before heartbeats cannot be judged, and stays.
    if (holder.heartbeatSeconds === undefined || beatAt === undefined) return true;
    return Date.now() - beatAt <= holder.heartbeatSeconds * MISSED_HEARTBEATS * 1000;
  }
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
    holder.pidNamespace === namespace;
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
  const beatMs = (me.heartbeatSeconds ?? heartbeatSeconds()) * 1000;
  let released = false;
  let lost = false;
  /**
   * When a beat last found the lock ours, by the wall clock: the one others judge the file's time by,
   * which also moves while the machine sleeps.
   */
  let confirmedAt = Date.now();
  const judge = (text: string | undefined) => {
    if (text === undefined || tokenOf(text) !== me.token) lost = true;
    else confirmedAt = Date.now();
  };
  // The heartbeat: the lock file's modification time, refreshed while it is still ours. A beat that
  // finds it gone or another run's marks the lock lost, and the next commit refuses (assertHeld).
  const beat = async () => {
    try {
      const current = await readHolder(path);
      if (current?.holder?.token === me.token) {
        const now = new Date();
        await utimes(path, now, now);
        // Note: looked at again after the touch. A run that took the lock over between the read and the
        // touch had its own lock touched, and this one must not count the beat as its own.
        judge((await readHolder(path))?.text);
      } else judge(current?.text);
    } catch {
      // A beat that cannot read or touch the file (a full or read-only disk) is skipped; the next tries again.
    }
    if (lost || released) clearInterval(heartbeat);
  };
  const heartbeat = setInterval(() => void beat(), beatMs);
  heartbeat.unref();
  return {
    path,
    holder: me,
    assertHeld() {
      // Beats overdue: this process was paused (or the machine slept), and another run may have taken
      // the lock meanwhile. Looked at now, before anything is committed, not at the next beat.
      if (!lost && Date.now() - confirmedAt > 2 * beatMs) {
        let text: string | undefined;
        try {
          text = readFileSync(path, 'utf8');
          const now = new Date();
          if (tokenOf(text) === me.token) {
            utimesSync(path, now, now);
            text = readFileSync(path, 'utf8'); // after the touch, as a beat looks
          }
        } catch {
          text = undefined;
        }
        judge(text);
      }
      if (lost) throw new LockLostError(path);
    },
    async release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      const current = await readHolder(path);
      if (current?.holder?.token === me.token) {
        await unlink(path);
        await fsyncDir(dirname(path));
      }
    },
  };
}

/** The token of a lock file's text; undefined when it is not a holder's. */
function tokenOf(text: string): string | undefined {
  try {
    return (JSON.parse(text) as Partial<LockHolder>).token;
  } catch {
    return undefined;
  }
}
