import { type PartitionState, partitionId, type StreamState } from '../load/index.ts';
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

/** Why a partition is stale, and by how much (seconds) beyond what is allowed, to name the worst first. */
interface Stale {
  partition: PartitionState;
  /** Seconds since the last successful check. */
  checkedAge: number;
  /** Seconds the newest record lags the source's clock, when the stream has a cadence. */
  recordLag?: number;
  kind: 'unchecked' | 'behind';
}

export interface StreamFreshness {
  /** Partitions judged. */
  judged: number;
  stale: Stale[];
  /** Seconds, for this stream. */
  limit: number;
}

/**
 * A stream's partitions against its maximum age, two ways:
 * - the last successful check (a commit, or a run that found nothing new) must be within it, so a
 *   partition failing for days is named while the stream's others are fresh;
 * - where the stream has a cadence (a series the source extends on a schedule), the newest record may
 *   lag the source's clock (its `Date` header when the partition was last read) by the cadence plus
 *   the maximum age, so a series the service stopped extending is named although every run "succeeds".
 * `planned` (partition ids): judge only these; undefined judges every partition of the lake.
 */
export function judgeStream(
  state: StreamState,
  limit: number,
  now: number,
  planned: ReadonlySet<string> | undefined,
): StreamFreshness {
  const judged = [...state.partitions.values()].filter(
    (p) => !planned || planned.has(partitionId(p.partition)),
  );
  const stale: Stale[] = [];
  for (const partition of judged) {
    const checkedAge = Math.max(0, Math.round((now - Date.parse(partition.committedAt)) / 1000));
    const { sourceAt, newestRecordAt, cadence } = partition;
    const recordLag =
      cadence !== undefined && sourceAt !== undefined && newestRecordAt !== undefined
        ? Math.max(0, Math.round((sourceAt - newestRecordAt) / 1000))
        : undefined;
    const lagged = { partition, checkedAge, ...(recordLag !== undefined ? { recordLag } : {}) };
    if (checkedAge > limit) stale.push({ ...lagged, kind: 'unchecked' });
    else if (recordLag !== undefined && recordLag - (cadence ?? 0) > limit)
      stale.push({ ...lagged, kind: 'behind' });
  }
  const overdue = (s: Stale) => (s.kind === 'unchecked' ? s.checkedAge : (s.recordLag ?? 0));
  // Equally overdue partitions (checked in the same run) by their id: the same message every time,
  // whatever order the run committed them in.
  const idOf = (s: Stale) => partitionId(s.partition.partition);
  stale.sort((a, b) => overdue(b) - overdue(a) || (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0));
  return { judged: judged.length, stale, limit };
}

/** The failure message: how many partitions are stale in each way, and the worst of each. */
export function freshnessMessage({ judged, stale, limit }: StreamFreshness): string {
  const parts: string[] = [];
  const unchecked = stale.filter((s) => s.kind === 'unchecked');
  const behind = stale.filter((s) => s.kind === 'behind');
  if (unchecked[0])
    parts.push(
      `${unchecked.length} of ${judged} partitions last checked more than ${durationText(limit)} ago` +
        ` (oldest: ${partitionLabel(unchecked[0].partition.partition)}, ${durationText(unchecked[0].checkedAge)} ago)`,
    );
  if (behind[0]) {
    const worst = behind[0];
    parts.push(
      `${behind.length} of ${judged} partitions with a newest record more than ${durationText(limit)} overdue` +
        ` (worst: ${partitionLabel(worst.partition.partition)}, newest record ${durationText(worst.recordLag ?? 0)}` +
        ` behind the source, one is due every ${durationText(worst.partition.cadence ?? 0)})`,
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
    ],
    types: ['VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR'],
    rows: stale
      .slice(0, rows)
      .map(({ partition: p, checkedAge, recordLag }) => [
        stream,
        partitionLabel(p.partition),
        p.committedAt,
        durationText(checkedAge),
        durationText(limit),
        iso(p.newestRecordAt),
        iso(p.sourceAt),
        recordLag === undefined ? null : durationText(recordLag),
      ]),
  };
}

/** `network=fuji address=0x…`: a partition's keys in a line. */
const partitionLabel = (partition: Readonly<Record<string, string>>) =>
  Object.entries(partition)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
