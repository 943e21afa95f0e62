/**
 * What a run reports as it goes: the live display draws it on a terminal; elsewhere it becomes log lines.
 * Each event's `at` is a `performance.now()` reading, for rates and spans only: the monotonic clock keeps
 * them right when NTP steps the wall clock during a run.
 */
export type ProgressEvent =
  | { kind: 'plan'; at: number; partitions: Record<string, number> }
  | { kind: 'start'; at: number; stream: string; partition: string }
  | {
      kind: 'page';
      at: number;
      stream: string;
      partition: string;
      /** Requests so far in this partition. */
      pages: number;
      /** Records fetched so far (committed at the next flush). */
      rows: number;
      rejects: number;
      retries: number;
      /** Requests the partition will make in all, when knowable (a height walk knows its tip). */
      total?: number;
    }
  | { kind: 'retry'; at: number; stream: string; partition: string; retries: number }
  | {
      kind: 'end';
      at: number;
      stream: string;
      partition: string;
      status: 'done' | 'failed' | 'quota' | 'interrupted';
      pages: number;
      /** Rows committed. */
      rows: number;
      rejects: number;
      retries: number;
    };

export type ProgressSink = (event: ProgressEvent) => void;

interface PartitionProgress {
  pages: number;
  rows: number;
  rejects: number;
  retries: number;
  total?: number;
  ended: boolean;
}

/** One stream's progress, summed over its partitions. */
export interface StreamProgress {
  name: string;
  partitions: number;
  started: number;
  ended: number;
  failed: number;
  pages: number;
  rows: number;
  rejects: number;
  retries: number;
  firstAt?: number;
  lastAt?: number;
  byPartition: Map<string, PartitionProgress>;
}

export interface ProgressState {
  startedAt?: number;
  streams: Map<string, StreamProgress>;
}

export const createProgressState = (): ProgressState => ({ streams: new Map() });

/** Folds one event into the state. */
export function applyProgress(state: ProgressState, event: ProgressEvent): void {
  state.startedAt ??= event.at;
  if (event.kind === 'plan') {
    for (const [name, partitions] of Object.entries(event.partitions))
      streamOf(state, name).partitions = partitions;
    return;
  }
  const s = streamOf(state, event.stream);
  s.firstAt ??= event.at;
  s.lastAt = event.at;
  let p = s.byPartition.get(event.partition);
  if (!p) {
    p = { pages: 0, rows: 0, rejects: 0, retries: 0, ended: false };
    s.byPartition.set(event.partition, p);
    s.started++;
  }
  switch (event.kind) {
    case 'start':
      break;
    case 'retry':
      p.retries = event.retries;
      break;
    case 'page':
      Object.assign(p, {
        pages: event.pages,
        rows: event.rows,
        rejects: event.rejects,
        retries: event.retries,
        ...(event.total !== undefined ? { total: event.total } : {}),
      });
      break;
    case 'end':
      Object.assign(p, {
        pages: event.pages,
        rows: event.rows,
        rejects: event.rejects,
        retries: event.retries,
      });
      if (!p.ended) {
        p.ended = true;
        s.ended++;
        if (event.status === 'failed') s.failed++;
      }
      break;
  }
  let pages = 0;
  let rows = 0;
  let rejects = 0;
  let retries = 0;
  for (const x of s.byPartition.values()) {
    pages += x.pages;
    rows += x.rows;
    rejects += x.rejects;
    retries += x.retries;
  }
  Object.assign(s, { pages, rows, rejects, retries });
}

function streamOf(state: ProgressState, name: string): StreamProgress {
  let s = state.streams.get(name);
  if (!s) {
    s = {
      name,
      partitions: 0,
      started: 0,
      ended: 0,
      failed: 0,
      pages: 0,
      rows: 0,
      rejects: 0,
      retries: 0,
      byPartition: new Map(),
    };
    state.streams.set(name, s);
  }
  return s;
}

/**
 * Requests still to make, when every partition of the stream has begun and each unfinished one knows
 * its total; otherwise undefined (no estimate is better than a wrong one).
 */
export function remainingPages(s: StreamProgress): number | undefined {
  if (s.started < s.partitions || s.started === 0) return undefined;
  let remaining = 0;
  for (const p of s.byPartition.values()) {
    if (p.ended) continue;
    if (p.total === undefined) return undefined;
    remaining += Math.max(0, p.total - p.pages);
  }
  return remaining;
}
