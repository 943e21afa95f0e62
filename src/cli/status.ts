import { stat } from 'node:fs/promises';
import { KNOWN_REJECTS } from '../extract/known-rejects.ts';
import {
  caughtUpAtOf,
  committedFileSize,
  damagedFileRemedy,
  diskStorage,
  isObjectStorage,
  LakeCorruptError,
  type LakeStorage,
  type LockStanding,
  lakePaths,
  newestStampOf,
  openLakeStorage,
  readLakeState,
  readLockStanding,
  readWorkers,
  StorageUnavailableError,
  type StreamState,
  type WorkerStanding,
  withListedSizes,
} from '../load/index.ts';
import { durationText } from '../warehouse/duration.ts';
import { buildLockOf, warehouseIn } from '../warehouse/paths.ts';
import { lakeOption } from './catalog.ts';
import { EXIT } from './exit.js';
import { lakeFailureExit } from './lake-failure.ts';

interface StatusArgs {
  dataDir?: string;
  catalog?: string;
  json?: boolean;
}

/** Where one partition stands, from its commit log alone. */
export interface PartitionStanding {
  stream: string;
  partition: Readonly<Record<string, string>>;
  commits: number;
  lastSeq: number;
  /** The newest commit: new rows, or a run that checked and found nothing new (or an unchanged snapshot). */
  lastCommitAt: string;
  /** Seconds since the last commit (0 for one dated later than now). */
  ageSeconds: number;
  /**
   * Set when the last commit is dated more than a minute later than now: by how much. The clock of the
   * host that committed it is ahead of this one's (or this one's behind); ages and freshness are off.
   */
  aheadSeconds?: number;
  /**
   * Set when the partition's rows are stamped more than a minute later than now, its last commit not:
   * by how much. A run whose clock was ahead stamped them, and new rows are stamped after them (the
   * stamps order a record's versions) until this clock catches up.
   */
  stampedAheadSeconds?: number;
  lastRunId: string;
  /**
   * When a walk of it last reached the source's head; null: none has yet. Older than the last commit:
   * its walks since stopped early (a spent quota, an interrupt), and it is still catching up.
   */
  caughtUpAt: string | null;
  /** The newest commit's checkpoint (null: none yet, e.g. rejects only). */
  checkpoint: Readonly<Record<string, unknown>> | null;
  /** Data rows committed in total, every version of every record. */
  rows: number;
  rejects: number;
}

export interface LakeStatus {
  dataDir: string;
  /** False when nothing was ever committed here (no data directory, or no commit yet). */
  extracted: boolean;
  /** The lock file's holder: a run in progress, or (`live` false) a stale lock the next run takes over. */
  lockedBy: LockStanding | null;
  /**
   * The holder of the warehouse's build lock, for a warehouse in the data directory: a build in
   * progress, or a lock left by a machine that died (see the README's several workers).
   */
  buildingBy: LockStanding | null;
  partitions: PartitionStanding[];
  /**
   * Committed files missing from the lake, or of another size than the commit log records (deleted or cut
   * short by hand, expired by a bucket's lifecycle rule, a restore gone wrong): their rows are not in the
   * lake. A bucket is listed one folder at a time, not asked about each file.
   */
  damaged: DamagedFile[];
  /**
   * Set when the bucket could not be read (no credentials here, say): why. The partitions come from the
   * catalog alone, and no file was checked.
   */
  damageUnchecked?: string;
  /** With a catalog: its workers, live or gone, and the partitions each holds. */
  workers?: WorkerStanding[];
}

export interface DamagedFile {
  stream: string;
  /** Lake-relative, as the commit log names it. */
  path: string;
  bytes: number;
  /** Its size on disk; null when it is missing. */
  foundBytes: number | null;
}

/** How far a commit may be dated ahead of this host's clock before status says the clocks disagree. */
const CLOCK_SLACK_SECONDS = 60;

/**
 * Reads where every partition stands, without the writer lock: commit records appear whole (by rename),
 * so this is safe while an extract runs; it only ever reads.
 */
export async function readStatus(dataDir: string, now = Date.now(), catalog?: string): Promise<LakeStatus> {
  const lake = await openStatusStorage(dataDir);
  try {
    return await readStatusWith(lake, dataDir, now, catalog);
  } finally {
    if (lake.storage) lake.storage.close();
  }
}

/**
 * Where status looks for the lake's files. A bucket that cannot be read leaves status with the catalog's
 * view alone (`unreadable`), as before it checked files there: its partitions need no bucket credentials.
 */
async function openStatusStorage(dataDir: string): Promise<{ storage?: LakeStorage; unreadable?: string }> {
  if (!isObjectStorage(dataDir)) return { storage: diskStorage(lakePaths(dataDir).lakeDir) };
  try {
    return { storage: await openLakeStorage(dataDir) };
  } catch (error) {
    if (!(error instanceof StorageUnavailableError)) throw error;
    return { unreadable: error.message };
  }
}

async function readStatusWith(
  lake: { storage?: LakeStorage; unreadable?: string },
  dataDir: string,
  now: number,
  catalog: string | undefined,
): Promise<LakeStatus> {
  const partitions: PartitionStanding[] = [];
  let { storage, unreadable } = lake;
  // With the bucket's storage given, a catalog of another lake is refused (as build does), before its
  // files would all be taken for missing here.
  const readStates = () => readLakeState(dataDir, catalog, storage?.remote ? { storage } : {});
  const states = await readStates().catch((error: unknown) => {
    if (!bucketUnreadable(error, storage)) throw error;
    unreadable = (error as Error).message;
    storage = undefined;
    return readStates();
  });
  for (const [stream, state] of states) {
    for (const p of state.partitions.values()) {
      const age = Math.round((now - Date.parse(p.committedAt)) / 1000);
      // Rounded on its own: -Math.round(x) is not Math.round(-x) at half a second (it rounds toward +∞).
      const ahead = Math.round((Date.parse(p.committedAt) - now) / 1000);
      const stampedAhead = Math.round(((newestStampOf(p) ?? now) - now) / 1000);
      partitions.push({
        stream,
        partition: p.partition,
        commits: p.commits,
        lastSeq: p.seq,
        lastCommitAt: p.committedAt,
        ageSeconds: Math.max(0, age),
        ...(ahead > CLOCK_SLACK_SECONDS ? { aheadSeconds: ahead } : {}),
        ...(ahead <= CLOCK_SLACK_SECONDS && stampedAhead > CLOCK_SLACK_SECONDS
          ? { stampedAheadSeconds: stampedAhead }
          : {}),
        lastRunId: p.runId,
        caughtUpAt: caughtUpAtOf(p),
        checkpoint: p.checkpoint,
        rows: p.rows,
        rejects: p.rejects,
      });
    }
  }
  partitions.sort((a, b) =>
    a.stream !== b.stream
      ? a.stream < b.stream
        ? -1
        : 1
      : partitionText(a.partition) < partitionText(b.partition)
        ? -1
        : 1,
  );
  return {
    dataDir,
    extracted: partitions.length > 0,
    // A lake on object storage has no lock file: its writers are the catalog's workers.
    lockedBy: isObjectStorage(dataDir)
      ? null
      : ((await readLockStanding(lakePaths(dataDir).lockFile)) ?? null),
    buildingBy: isObjectStorage(dataDir)
      ? null
      : ((await readLockStanding(buildLockOf(warehouseIn(dataDir)))) ?? null),
    partitions,
    ...(await damageAmong(storage, states, readStates, unreadable)),
    ...(catalog ? { workers: await readWorkers(catalog) } : {}),
  };
}

/** A bucket that failed to answer (down, throttling past the retries, no credentials): not a status error. */
const bucketUnreadable = (error: unknown, storage: LakeStorage | undefined) =>
  storage?.remote === true && error instanceof StorageUnavailableError;

/** The damaged files, or why none were looked for: a bucket failing mid-look leaves the catalog's view. */
async function damageAmong(
  storage: LakeStorage | undefined,
  states: Map<string, StreamState>,
  readStates: () => Promise<Map<string, StreamState>>,
  unreadable: string | undefined,
): Promise<Pick<LakeStatus, 'damaged' | 'damageUnchecked'>> {
  if (!storage) return { damaged: [], ...(unreadable ? { damageUnchecked: unreadable } : {}) };
  try {
    return { damaged: await damagedFiles(storage, states, readStates) };
  } catch (error) {
    if (!bucketUnreadable(error, storage)) throw error;
    return { damaged: [], damageUnchecked: (error as Error).message };
  }
}

/**
 * Every committed file checked against the commit log's size for it, by the rule compaction and repair
 * judge by: a stat a file on disk, a LIST a folder in a bucket. Status reads without the lock, so a
 * compaction may delete files it merged between the state's read and the look: a file found wanting
 * counts only if the state read again still names it and a second look finds it wanting still.
 */
async function damagedFiles(
  storage: LakeStorage,
  states: Map<string, StreamState>,
  readStates: () => Promise<Map<string, StreamState>>,
): Promise<DamagedFile[]> {
  const first = await damagedAmong(storage, states, () => true);
  if (first.length === 0) return first;
  const suspects = new Set(first.map((d) => `${d.stream}/${d.path}`));
  return damagedAmong(storage, await readStates(), (stream, path) => suspects.has(`${stream}/${path}`));
}

/** The files of these states that `judged` picks and committedFileSize finds missing or of another size. */
async function damagedAmong(
  storage: LakeStorage,
  states: Map<string, StreamState>,
  judged: (stream: string, path: string) => boolean,
): Promise<DamagedFile[]> {
  // A fresh view each time: its listings are as old as this look.
  const look = storage.remote ? withListedSizes(storage) : storage;
  const damaged: DamagedFile[] = [];
  for (const [stream, state] of states)
    for (const file of state.files) {
      if (!judged(stream, file.path)) continue;
      // A bucket has no generations of folders to look in.
      const size = storage.remote
        ? await committedFileSize(look, stream, file)
        : await committedFileSize(look, stream, file, state.generation);
      if (typeof size === 'number' || size === undefined)
        damaged.push({ stream, path: file.path, bytes: file.bytes, foundBytes: size ?? null });
    }
  return damaged;
}

/** `chain=43114 address=0x7a…9f3c`: the partition's keys but the network, long values shortened. */
export function partitionText(partition: Readonly<Record<string, string>>): string {
  const keys = Object.keys(partition).filter((k) => k !== 'network');
  return keys.length === 0 ? '-' : keys.map((k) => `${k}=${shorten(partition[k] ?? '')}`).join(' ');
}

const shorten = (text: string, keep = 10) =>
  text.length > keep * 2 + 1 ? `${text.slice(0, keep)}…${text.slice(-6)}` : text;

/** A checkpoint in a few words: cursor, head, since and snapshotAt readable; a walk in progress says so. */
export function checkpointText(checkpoint: Readonly<Record<string, unknown>> | null): string {
  if (checkpoint === null) return '-';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(checkpoint)) {
    // The boundary keys, a snapshot's answer hash, the keys below a head and the rejects already
    // written are bookkeeping.
    if (key === 'boundary' || key === 'answer' || key === 'belowHead' || key === KNOWN_REJECTS) continue;
    if (key === 'window' || key === 'reading') parts.push('paging');
    else if (typeof value === 'number') parts.push(`${key}=${timeOrNumber(value)}`);
    else if (typeof value === 'string') parts.push(`${key}=${keyText(value)}`);
    else if (Array.isArray(value)) parts.push(`${key}=${value.length}`);
    else if (value && typeof value === 'object') parts.push(`${key}=${Object.keys(value).length}`);
  }
  return parts.join(' ') || '-';
}

/** A record key as the walks store it (a JSON array of its primary-key values), shortened. */
function keyText(value: string): string {
  try {
    const parts = JSON.parse(value) as unknown;
    if (Array.isArray(parts)) return parts.map((v) => shorten(String(v), 8)).join('/');
  } catch {
    // Not JSON: an opaque token.
  }
  return shorten(value, 8);
}

/** Unix seconds or milliseconds as a UTC time to the minute; block numbers and the like as they are. */
function timeOrNumber(n: number): string {
  const ms = n >= 1e12 && n < 1e14 ? n : n >= 1e9 && n < 1e11 ? n * 1000 : undefined;
  return ms === undefined ? String(n) : `${new Date(ms).toISOString().slice(0, 16)}Z`;
}

/** How long ago, in its two largest units (`45s`, `12m 5s`, `3h 5m`, `2d 4h`). */
export const ageText = durationText;

/** A lock's line: who holds it, or that its holder is gone and the next run or build takes it over. */
function lockLine(holding: string, next: 'run' | 'build', h: LockStanding): string {
  return h.live
    ? `${holding}: pid ${h.pid} on ${h.hostname} since ${h.since}`
    : `a stale lock: pid ${h.pid} on ${h.hostname}, since ${h.since}, is no longer running; the next ${next} takes the lock over`;
}

export function formatStatus(status: LakeStatus): string {
  const lines: string[] = [];
  if (!status.extracted) {
    lines.push(
      `nothing extracted yet into ${status.dataDir}: no commits. Run "avalake extract [pipeline] --data-dir ${status.dataDir}" first.`,
    );
  } else {
    const header = [
      'stream',
      'partition',
      'commits',
      'last',
      'committed',
      'age',
      'rows',
      'rejects',
      'checkpoint',
    ];
    const rows = status.partitions.map((p) => [
      p.stream,
      partitionText(p.partition),
      String(p.commits),
      `#${p.lastSeq}`,
      `${p.lastCommitAt.slice(0, 19)}Z`,
      p.aheadSeconds === undefined ? ageText(p.ageSeconds) : `-${ageText(p.aheadSeconds)}`,
      String(p.rows),
      String(p.rejects),
      checkpointText(p.checkpoint),
    ]);
    const numeric = new Set([2, 3, 5, 6, 7]);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
    const line = (cells: string[]) =>
      cells
        .map((c, i) =>
          i === cells.length - 1
            ? c
            : numeric.has(i)
              ? c.padStart(widths[i] as number)
              : c.padEnd(widths[i] as number),
        )
        .join('  ');
    lines.push(line(header), ...rows.map(line));
    const streams = new Set(status.partitions.map((p) => p.stream)).size;
    const total = status.partitions.reduce((n, p) => n + p.rows, 0);
    const rejects = status.partitions.reduce((n, p) => n + p.rejects, 0);
    const freshest = Math.min(...status.partitions.map((p) => p.ageSeconds));
    const stalest = Math.max(...status.partitions.map((p) => p.ageSeconds));
    lines.push(
      `${streams} stream${streams === 1 ? '' : 's'}, ${status.partitions.length} partitions, ${total} rows, ${rejects} rejects; ` +
        `newest commit ${ageText(freshest)} ago, oldest partition last committed ${ageText(stalest)} ago`,
    );
    const catching = status.partitions.filter((p) => p.caughtUpAt !== p.lastCommitAt);
    if (catching.length > 0)
      lines.push(
        `${catching.length} partition${catching.length === 1 ? '' : 's'} still catching up: the last walk` +
          ` stopped before the source's head (a spent quota, an interrupt); the next run goes on (caughtUpAt in --json)`,
      );
    const ahead = status.partitions.filter((p) => p.aheadSeconds !== undefined);
    if (ahead.length > 0)
      lines.push(
        `warning: ${ahead.length} partition${ahead.length === 1 ? "'s" : "s'"} last commit is dated up to ` +
          `${ageText(Math.max(...ahead.map((p) => p.aheadSeconds ?? 0)))} after this host's clock (age shown ` +
          'negative): the clocks of the hosts that run avalake disagree, and ages and freshness tests are off ' +
          'by as much; set them right (NTP)',
      );
    const stampedAhead = status.partitions.filter((p) => p.stampedAheadSeconds !== undefined);
    if (stampedAhead.length > 0)
      lines.push(
        `warning: ${stampedAhead.length} partition${stampedAhead.length === 1 ? "'s" : "s'"} rows are stamped up to ` +
          `${ageText(Math.max(...stampedAhead.map((p) => p.stampedAheadSeconds ?? 0)))} after this host's clock: ` +
          'a run whose clock was ahead stamped them, and new rows are stamped after them (_extracted_at orders ' +
          "a record's versions) until the clock catches up; keep the clocks of the hosts that run avalake right (NTP)",
      );
  }
  // `workers` is there exactly when the commit log is a catalog's.
  const remedy = damagedFileRemedy({
    catalog: status.workers !== undefined,
    bucket: isObjectStorage(status.dataDir),
  });
  for (const d of status.damaged)
    lines.push(
      `damaged: lake file ${d.path} of stream ${d.stream} ${d.foundBytes === null ? 'is missing' : `has ${d.foundBytes} bytes`}, ` +
        `where the commit log records ${d.bytes}: ${remedy} (until then its rows are not in the lake)`,
    );
  if (status.damageUnchecked)
    lines.push(`warning: the lake's files were not checked for damage: ${status.damageUnchecked}`);
  if (status.lockedBy) lines.push(lockLine('a run holds the data directory', 'run', status.lockedBy));
  if (status.buildingBy) lines.push(lockLine('a build holds the warehouse', 'build', status.buildingBy));
  const live = status.workers?.filter((w) => w.live) ?? [];
  if (status.workers)
    lines.push(`workers on the catalog: ${live.length} live, ${status.workers.length - live.length} gone`);
  for (const w of live)
    lines.push(
      `  pid ${w.pid} on ${w.host} since ${w.startedAt}, holding ${w.holding} partition${w.holding === 1 ? '' : 's'}`,
    );
  return lines.join('\n');
}

/**
 * The whole command, returning its exit code. A missing data directory is not an error: nothing was
 * extracted yet (exit 0, and `extracted: false` in JSON); a path that is not a directory is (exit 2); a
 * damaged lake file is a failure (exit 1), after the status that names it.
 */
export async function status(
  args: StatusArgs,
  env: Readonly<Record<string, string | undefined>>,
  now = Date.now(),
): Promise<number> {
  const lake = await lakeOption(args, env);
  if (typeof lake === 'number') return lake;
  const { dataDir, catalog } = lake;
  const info = isObjectStorage(dataDir) ? undefined : await stat(dataDir).catch(() => undefined);
  if (info && !info.isDirectory()) {
    process.stderr.write(`avalake: ${dataDir} is not a directory; name the data directory with --data-dir\n`);
    return EXIT.usage;
  }
  let result: LakeStatus;
  try {
    result = await readStatus(dataDir, now, catalog);
  } catch (error) {
    // A corrupt lake is named with its path, for status is where one looks first.
    if (error instanceof LakeCorruptError && !error.message.includes(error.path)) {
      process.stderr.write(`avalake: ${error.message} (${error.path})\n`);
      return EXIT.failed;
    }
    const failed = lakeFailureExit(error);
    if (failed !== undefined) return failed;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'ENOTDIR') {
      process.stderr.write(`avalake: cannot read ${dataDir} (${code}); check its permissions\n`);
      return EXIT.usage;
    }
    throw error;
  }
  process.stdout.write(`${args.json ? JSON.stringify(result, null, 2) : formatStatus(result)}\n`);
  return result.damaged.length > 0 ? EXIT.failed : EXIT.ok;
}
