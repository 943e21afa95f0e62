import {
  caughtUpAtOf,
  type Partition,
  type PartitionState,
  partitionId,
  type StreamState,
} from '../load/index.ts';
import { durationText } from './duration.ts';

import type { QueryResult } from './sql.ts';
import { WarehouseUsageError } from './usage-error.ts';

/** A partition not checked for longer than this is stale, unless `--max-age stream=…` says otherwise. */
export const DEFAULT_MAX_AGE_SECONDS = 24 * 3600;

/** How long each stream's partitions may go without a successful check: a default and per-stream exceptions. */
export interface MaxAge {
  defaultSeconds: number;
  byStream: Record<string, number>;
}

/**
 * `90s`, `45m`, `24h`, `7d` → seconds. A bare number is hours for `--max-age` (as it always was); a flag
 * that waits says `bareIsHours: false`, since its bare "30" would read as minutes to most and mean 30 hours:
 * it then takes a bare 0 only.
 */
export function parseDuration(text: string, flag = '--max-age', { bareIsHours = true } = {}): number {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd]?)$/.exec(text.trim());
  if (!m) throw new WarehouseUsageError(`${flag}: "${text}" is not a duration; write e.g. 90m, 24h or 7d`);
  if (m[2] === '' && !bareIsHours && Number(m[1]) !== 0)
    throw new WarehouseUsageError(
      `${flag}: "${text}" has no unit; write e.g. ${m[1]}m for minutes or ${m[1]}s for seconds`,
    );
  const unit = { s: 1, m: 60, h: 3600, d: 86_400, '': 3600 }[m[2] as 's' | 'm' | 'h' | 'd' | ''];
  return Math.round(Number(m[1]) * unit);
}

/**
 * `--max-age 24h --max-age metrics=2d` → a default of 24 h and two days for metrics. With `streams` (every
 * stream avalake knows), a stream not among them is refused: a misspelt one would hold nothing to it.
 */
export function parseMaxAge(values: readonly string[], streams?: readonly string[]): MaxAge {
  const maxAge: MaxAge = { defaultSeconds: DEFAULT_MAX_AGE_SECONDS, byStream: {} };
  for (const value of values) {
    const at = value.indexOf('=');
    if (at < 0) {
      maxAge.defaultSeconds = parseDuration(value);
      continue;
    }
    const stream = value.slice(0, at).trim();
    if (streams && !streams.includes(stream))
      throw new WarehouseUsageError(
        `--max-age ${value}: no stream is named "${stream}"; streams: ${[...streams].sort().join(', ')}`,
      );
    maxAge.byStream[stream] = parseDuration(value.slice(at + 1));
  }
  return maxAge;
}

/**
 * Why a partition is not fresh, and by how much (seconds) beyond what is allowed, to name the worst first:
 * - `never`: the pipeline reads it, but nothing of it was ever committed (every run failed on it);
 * - `waiting`: never checked, or not within the maximum age, because a spent quota stopped the run
 *   before its turn (the run's unfinished work goes first), while the lake progresses: its turn comes;
 * - `unchecked`: its last successful check is older than the maximum age;
 * - `catching-up`: checked within it, but no walk of it has reached the source's head within it (a spent
 *   quota, an interrupt, a walk split over runs): a gap may lie behind its head. Progressing, not stuck;
 * - `behind`: caught up, but its newest record lags the source's clock past the stream's cadence.
 */
interface Stale {
  partition: Partition;
  /** Its state; none for `never`. */
  state?: PartitionState;
  /** Seconds since the last successful check. */
  checkedAge?: number;
  /** Seconds since a walk of it last reached the head; null: none ever did. */
  caughtUpAge?: number | null;
  /** Seconds the newest record lags the source's clock, when the stream has a cadence. */
  recordLag?: number;
  kind: 'never' | 'waiting' | 'unchecked' | 'catching-up' | 'behind';
}

/**
 * Kinds that fail the test. A partition still catching up (checked within the maximum age), or waiting for
 * its turn behind a quota-limited backfill, warns: a backfill progressing as expected is no failure.
 */
const FAILING: ReadonlySet<Stale['kind']> = new Set(['never', 'unchecked', 'behind']);

export interface StreamFreshness {
  /** Partitions judged. */
  judged: number;
  stale: Stale[];
  /** Seconds, for this stream. */
  limit: number;
}

/** Whether the stream fails freshness (`fail`), is only catching up (`warn`), or is fresh (`pass`). */
export function freshnessStatus({ stale }: StreamFreshness): 'pass' | 'warn' | 'fail' {
  if (stale.some((s) => FAILING.has(s.kind))) return 'fail';
  return stale.length > 0 ? 'warn' : 'pass';
}

/**
 * A stream's partitions against its maximum age:
 * - the last successful check (a commit, or a run that found nothing new) must be within it, so a
 *   partition failing for days is named while the stream's others are fresh;
 * - so must the last time a walk of it reached the source's head: a commit of a walk that stopped early
 *   (a spent quota, an interrupt) moved, but weeks may lie behind its head still. Checked within the
 *   maximum age, such a partition is progressing: it warns (`catching-up`) rather than fails;
 * - where the stream has a cadence (a series the source extends on a schedule), the newest record may
 *   lag the source's clock (its `Date` header when the partition was last read) by the cadence plus
 *   the maximum age, so a series the service stopped extending is named although every run "succeeds".
 * `planned` (by partition id): judge these, a planned partition with nothing committed as never checked;
 * undefined judges every partition of the lake. `waiting` (partition ids): those a spent quota kept
 * this run from, which warn where they would fail for not being checked (never, or not lately).
 */
export function judgeStream(
  state: StreamState | undefined,
  limit: number,
  now: number,
  planned: ReadonlyMap<string, Partition> | undefined,
  waiting: ReadonlySet<string> = new Set(),
): StreamFreshness {
  const partitions = state?.partitions ?? new Map<string, PartitionState>();
  const judged = planned ? [...planned.keys()] : [...partitions.keys()];
  const ageOf = (iso: string) => Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  const stale: Stale[] = [];
  for (const id of judged) {
    const partition = partitions.get(id);
    if (!partition) {
      stale.push({ partition: planned?.get(id) ?? {}, kind: waiting.has(id) ? 'waiting' : 'never' });
      continue;
    }
    const checkedAge = ageOf(partition.committedAt);
    const caughtUpAt = caughtUpAtOf(partition);
    const caughtUpAge = caughtUpAt === null ? null : ageOf(caughtUpAt);
    const { sourceAt, newestRecordAt, cadence } = partition;
    const recordLag =
      cadence !== undefined && sourceAt !== undefined && newestRecordAt !== undefined
        ? Math.max(0, Math.round((sourceAt - newestRecordAt) / 1000))
        : undefined;
    const judgedOne = {
      partition: partition.partition,
      state: partition,
      checkedAge,
      caughtUpAge,
      ...(recordLag !== undefined ? { recordLag } : {}),
    };
    if (checkedAge > limit) stale.push({ ...judgedOne, kind: waiting.has(id) ? 'waiting' : 'unchecked' });
    // Its newest record says nothing of the source while the walk has not reached the head.
    else if (caughtUpAge === null || caughtUpAge > limit) stale.push({ ...judgedOne, kind: 'catching-up' });
    else if (recordLag !== undefined && recordLag - (cadence ?? 0) > limit)
      stale.push({ ...judgedOne, kind: 'behind' });
  }
  const overdue = (s: Stale) =>
    s.kind === 'never'
      ? Number.POSITIVE_INFINITY
      : s.kind === 'unchecked' || s.kind === 'waiting'
        ? (s.checkedAge ?? Number.POSITIVE_INFINITY)
        : s.kind === 'catching-up'
          ? (s.caughtUpAge ?? Number.POSITIVE_INFINITY)
          : (s.recordLag ?? 0);
  // Equally overdue partitions (checked in the same run, or never) by their id: the same message every
  // time, whatever order the run committed them in.
  const idOf = (s: Stale) => partitionId(s.partition);
  stale.sort(
    (a, b) =>
      (overdue(b) === overdue(a) ? 0 : overdue(b) > overdue(a) ? 1 : -1) ||
      (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0),
  );
  return { judged: judged.length, stale, limit };
}

/** Partitions named at most, by a message, of those never checked. */
const NAMED = 3;

/** The message: how many partitions are stale in each way, and the worst of each. */
export function freshnessMessage({ judged, stale, limit }: StreamFreshness): string {
  const parts: string[] = [];
  const of = (kind: Stale['kind']) => stale.filter((s) => s.kind === kind);
  const never = of('never');
  const waiting = of('waiting');
  const named = (some: Stale[]) => {
    const shown = some.slice(0, NAMED).map((s) => partitionLabel(s.partition));
    const more = some.length - shown.length;
    return `${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  };
  const unchecked = of('unchecked');
  const catching = of('catching-up');
  const behind = of('behind');
  if (never.length > 0)
    parts.push(
      `${never.length} of ${judged} partitions never checked: nothing committed yet, every run failed or` +
        ` stopped before them (${named(never)})`,
    );
  if (unchecked[0])
    parts.push(
      `${unchecked.length} of ${judged} partitions last checked more than ${durationText(limit)} ago` +
        ` (oldest: ${partitionLabel(unchecked[0].partition)}, ${durationText(unchecked[0].checkedAge ?? 0)} ago)`,
    );
  if (behind[0]) {
    const worst = behind[0];
    parts.push(
      `${behind.length} of ${judged} partitions with a newest record more than ${durationText(limit)} overdue` +
        ` (worst: ${partitionLabel(worst.partition)}, newest record ${durationText(worst.recordLag ?? 0)}` +
        ` behind the source, one is due every ${durationText(worst.state?.cadence ?? 0)})`,
    );
  }
  if (catching[0]) {
    const worst = catching[0];
    const since =
      typeof worst.caughtUpAge === 'number'
        ? `last caught up ${durationText(worst.caughtUpAge)} ago`
        : 'never caught up';
    parts.push(
      `${catching.length} of ${judged} partitions still catching up, read within ${durationText(limit)} but` +
        ` not up to the source's head (longest behind: ${partitionLabel(worst.partition)}, ${since},` +
        ` last read ${durationText(worst.checkedAge ?? 0)} ago)`,
    );
  }
  if (waiting[0]) {
    const worst = waiting[0];
    const read =
      worst.checkedAge === undefined ? 'never read' : `last read ${durationText(worst.checkedAge)} ago`;
    parts.push(
      `${waiting.length} of ${judged} partitions waiting for the quota, spent before their turn` +
        ` (longest waiting: ${partitionLabel(worst.partition)}, ${read})`,
    );
  }
  return parts.join('; ');
}

/** The stale partitions as rows, for the test's sample. */
export function freshnessSample(
  stream: string,
  { stale, limit }: StreamFreshness,
  rows: number,
): QueryResult {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const duration = (seconds: number | undefined) => (seconds === undefined ? null : durationText(seconds));
  return {
    columns: [
      'stream',
      'partition',
      'last_checked_at',
      'age',
      'max_age',
      'newest_record_at',
      'source_at',
      'record_lag',
      'why',
      'last_caught_up_at',
    ],
    types: Array<string>(10).fill('VARCHAR'),
    rows: stale
      .slice(0, rows)
      .map(({ partition, state: p, checkedAge, recordLag, kind }) => [
        stream,
        partitionLabel(partition),
        p?.committedAt ?? null,
        duration(checkedAge),
        durationText(limit),
        iso(p?.newestRecordAt),
        iso(p?.sourceAt),
        duration(recordLag),
        WHY[kind],
        p ? caughtUpAtOf(p) : null,
      ]),
  };
}

const WHY: Record<Stale['kind'], string> = {
  never: 'never checked',
  waiting: 'waiting for the quota',
  unchecked: 'not checked',
  'catching-up': 'catching up',
  behind: 'newest record overdue',
};

/** `network=fuji address=0x…`: a partition's keys in a line. */
const partitionLabel = (partition: Readonly<Record<string, string>>) =>
  Object.entries(partition)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
