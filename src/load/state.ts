import { z } from 'zod';
import { recordCheckOf } from '../schemas/record-check.ts';
import { LakeCorruptError } from './errors.ts';
import { type Partition, partitionId } from './layout.ts';

/**
 * What a stream's commit log amounts to: where each partition stands and which files are live. Every
 * commit record applies to it in sequence order (`applyRecord`); folding writes it out as one file so
 * that opening the lake reads one state per stream and the few records after it, not every commit ever
 * made. The writer (commit.ts) and the read-only readers (status, warehouse) fold the same way, here.
 */

const committedFileSchema = z.object({
  /** Final path relative to the lake directory, `/`-separated. */
  path: z.string(),
  /** File name in the stream's staging folder. */
  staged: z.string(),
  /** `confirmations`: unchanged snapshots' times, moved out of the state when it is folded. */
  table: z.enum(['data', 'rejects', 'confirmations']),
  rows: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

/**
 * What a walk saw of the source's time: its clock (the `Date` header of its answers), the newest record
 * time it committed, and the stream's cadence (the longest a healthy source goes without a newer record).
 * Freshness judges a partition whose newest record lags the source's clock by more than the cadence.
 */
const observationSchema = z.object({
  /** Milliseconds. */
  sourceAt: z.number().int().optional(),
  /** Milliseconds. */
  newestRecordAt: z.number().int().optional(),
  /** Seconds. */
  cadence: z.number().int().positive().optional(),
});

export type Observation = z.infer<typeof observationSchema>;

/** A flush of one partition: its files and the checkpoint after them. No files: the partition was checked. */
export const dataCommitSchema = z.object({
  format: z.literal(1),
  kind: z.literal('data').optional(),
  stream: z.string(),
  seq: z.number().int().positive(),
  partition: z.record(z.string(), z.string()),
  runId: z.string(),
  committedAt: z.string(),
  /**
   * The partition's newest commit when this one was made (null: none), so each partition's commits form
   * one chain; a shared catalog refuses a commit whose parent is no longer the newest.
   */
  parent: z.number().int().positive().nullable().optional(),
  files: z.array(committedFileSchema),
  /** null: this commit did not move the checkpoint and there was none before (e.g. rejects only). */
  checkpoint: z.record(z.string(), z.unknown()).nullable(),
  /**
   * A snapshot whose answer equalled the partition's last one: no rows, only the time (ms) at which it
   * was still true. The rows stamped `_snapshot_at = checkpoint.snapshotAt` stand for this time too.
   */
  confirmedAt: z.number().int().optional(),
  observed: observationSchema.optional(),
  /**
   * The newest time (ms) it stamped rows with: their `_extracted_at`, or an unchanged snapshot's
   * `confirmedAt`; none without either.
   */
  stampedAt: z.number().int().optional(),
  /**
   * Whether the walk behind it reached the source's head: it ended, rather than stopping early (a spent
   * quota, an interrupt, a failure) with the rest of the listing still ahead. Absent: an older avalake's.
   */
  caughtUp: z.boolean().optional(),
});

/** Small files of one folder merged into larger ones: the same rows, other files. Checkpoints untouched. */
export const compactCommitSchema = z.object({
  format: z.literal(1),
  kind: z.literal('compact'),
  stream: z.string(),
  seq: z.number().int().positive(),
  runId: z.string(),
  committedAt: z.string(),
  /** Lake-relative paths of the files the merged ones replace. */
  removed: z.array(z.string()).min(1),
  added: z
    .array(
      committedFileSchema.omit({ staged: true }).extend({
        /** The files this one merged (lake-relative paths), so a reader that holds those knows it holds this. */
        replaces: z.array(z.string()).min(1),
      }),
    )
    .min(1),
});

/**
 * `avalake repair` on a catalog's lake (repair.ts): damaged files dropped from the live set, and one
 * partition whose rows they may have held rewound to its start (checkpoint null, as --full-refresh).
 * It is the partition's newest commit, made with the same compare-and-set on its head as a flush, so a
 * worker that read the partition before it cannot commit over it (CommitConflictError). Without a
 * partition: files only a stream knows (snapshot confirmations) dropped, nothing rewound.
 */
export const repairCommitSchema = z.object({
  format: z.literal(1),
  kind: z.literal('repair'),
  stream: z.string(),
  seq: z.number().int().positive(),
  runId: z.string(),
  committedAt: z.string(),
  partition: z.record(z.string(), z.string()).optional(),
  parent: z.number().int().positive().nullable().optional(),
  /** Lake-relative paths of the damaged files dropped (every record of one repair names them all). */
  removed: z.array(z.string()),
});

const flushOrCompactionSchema = z.union([dataCommitSchema, compactCommitSchema]);
export const commitRecordSchema = z.union([dataCommitSchema, compactCommitSchema, repairCommitSchema]);

/** The kinds of record this avalake reads; another is a newer avalake's, which it must not misread. */
const KNOWN_KINDS: ReadonlySet<unknown> = new Set([undefined, 'data', 'compact', 'repair']);

export type CommittedFile = z.infer<typeof committedFileSchema>;
export type DataCommit = z.infer<typeof dataCommitSchema>;
export type CompactCommit = z.infer<typeof compactCommitSchema>;
export type RepairCommit = z.infer<typeof repairCommitSchema>;
export type CommitRecord = DataCommit | CompactCommit | RepairCommit;

export const isCompaction = (record: CommitRecord): record is CompactCommit => record.kind === 'compact';
export const isRepair = (record: CommitRecord): record is RepairCommit => record.kind === 'repair';
export const isDataCommit = (record: CommitRecord): record is DataCommit =>
  record.kind === undefined || record.kind === 'data';

/** The files a record made live (a flush's, a compaction's merged ones; none for a repair). */
export const filesOf = (record: CommitRecord): readonly { path: string; bytes: number; sha256: string }[] =>
  isCompaction(record) ? record.added : isRepair(record) ? [] : record.files;

/** The partition a record advances (its head in a catalog); undefined for a stream's own (compaction). */
export const partitionOf = (record: CommitRecord): Partition | undefined =>
  isCompaction(record) ? undefined : record.partition;

const partitionStateSchema = z.object({
  partition: z.record(z.string(), z.string()),
  /** The newest commit of the partition (its files are in `files` while live). */
  seq: z.number().int().positive(),
  runId: z.string(),
  committedAt: z.string(),
  checkpoint: z.record(z.string(), z.unknown()).nullable(),
  commits: z.number().int().nonnegative(),
  rows: z.number().int().nonnegative(),
  rejects: z.number().int().nonnegative(),
  /** Times (ms) an unchanged snapshot was confirmed, with the `_snapshot_at` of the rows it confirmed. */
  confirmations: z.array(z.tuple([z.number().int(), z.number().int()])),
  /** The newest time (ms) its commits ever stamped rows with (see `newestStampOf`). */
  stampedAt: z.number().int().optional(),
  /** The source's clock and the stream's cadence at the newest read; the newest record time ever committed. */
  ...observationSchema.shape,
  /**
   * When a walk of it last reached the source's head (`committedAt` of that commit): freshness counts from
   * this, not from a commit of a walk still catching up. null: none has yet. Absent: its newest commit is
   * an older avalake's, which did not say (see `caughtUpAtOf`).
   */
  caughtUpAt: z.string().nullable().optional(),
});

const liveFileSchema = committedFileSchema.omit({ staged: true }).extend({
  /** The commit that made the file (a flush or a compaction). */
  seq: z.number().int().positive(),
  /** A merged file: the files it replaced (the warehouse's incremental build follows rows through it). */
  replaces: z.array(z.string()).optional(),
});

export const streamStateSchema = z.object({
  format: z.literal(2),
  stream: z.string(),
  /** Every record up to this sequence number is folded in. */
  seq: z.number().int().nonnegative(),
  nextSeq: z.number().int().positive(),
  /** The generation of folders `data/lake/<stream>` links to: the newest compaction's seq, 0 before any. */
  generation: z.number().int().nonnegative(),
  partitions: z.array(partitionStateSchema),
  files: z.array(liveFileSchema),
});

export type PartitionState = z.infer<typeof partitionStateSchema>;
export type LiveFile = z.infer<typeof liveFileSchema>;
export type StreamState = Omit<z.infer<typeof streamStateSchema>, 'partitions'> & {
  /** By partition id. */
  partitions: Map<string, PartitionState>;
};

export function emptyState(stream: string): StreamState {
  return { format: 2, stream, seq: 0, nextSeq: 1, generation: 0, partitions: new Map(), files: [] };
}

/**
 * The newest time (ms) a partition's rows were stamped with: `_extracted_at`, `_snapshot_at` (the
 * checkpoint's `snapshotAt`), an unchanged snapshot's confirmation. Those times order a record's
 * versions and a partition's snapshots, so a partition's next ones are stamped after it, whatever the
 * clock says (it may have stepped back, or be another worker's, behind). A commit of an older avalake
 * says only when it was made, after its rows were stamped.
 */
export function newestStampOf(partition: PartitionState | undefined): number | undefined {
  if (partition === undefined) return undefined;
  const snapshotAt = partition.checkpoint?.snapshotAt;
  return newestOf([
    partition.stampedAt,
    Date.parse(partition.committedAt),
    typeof snapshotAt === 'number' ? snapshotAt : undefined,
  ]);
}

/** The latest of some times, undefined when none is known (a time that is not a finite number is not). */
export function newestOf(times: Iterable<number | undefined>): number | undefined {
  let newest: number | undefined;
  for (const t of times)
    if (t !== undefined && Number.isFinite(t) && (newest === undefined || t > newest)) newest = t;
  return newest;
}

/**
 * The stamp for rows read `now`, after the newest stamp so far: `now`, unless the clock says earlier
 * (it stepped back, or is another worker's, behind), then a millisecond after the newest. A clock that
 * has not moved since gives the same stamp again: reads in one millisecond are equally new.
 */
export function nextStamp(now: number, newest: number | undefined): number {
  return newest === undefined || now >= newest ? now : newest + 1;
}

/** Applies one record, in sequence order, to a stream's state (in place). */
export function applyRecord(state: StreamState, record: CommitRecord): void {
  state.seq = Math.max(state.seq, record.seq);
  state.nextSeq = Math.max(state.nextSeq, record.seq + 1);
  if (isCompaction(record)) {
    const removed = new Set(record.removed);
    state.files = state.files.filter((f) => !removed.has(f.path));
    for (const file of record.added) state.files.push({ ...file, seq: record.seq });
    state.generation = record.seq;
    return;
  }
  if (isRepair(record)) {
    const removed = new Set(record.removed);
    state.files = state.files.filter((f) => !removed.has(f.path));
    if (!record.partition) return;
    const id = partitionId(record.partition);
    const before = state.partitions.get(id);
    // Its stamps stay ahead of what it stamped before: a snapshot's `snapshotAt` goes with the checkpoint.
    const stampedAt = newestStampOf(before);
    state.partitions.set(id, {
      ...(before ?? { commits: 0, rows: 0, rejects: 0, confirmations: [] }),
      partition: record.partition,
      seq: record.seq,
      runId: record.runId,
      committedAt: record.committedAt,
      checkpoint: null,
      // Not caught up any more: rows it had are gone until a walk reads them again (freshness says so).
      caughtUpAt: null,
      commits: (before?.commits ?? 0) + 1,
      ...(stampedAt !== undefined ? { stampedAt } : {}),
    });
    return;
  }
  const id = partitionId(record.partition);
  const before = state.partitions.get(id);
  // The source's clock and the cadence are as of the newest read; the newest record is the newest ever.
  const { sourceAt, cadence, ...observed } = record.observed ?? {};
  const newest = [before?.newestRecordAt, observed.newestRecordAt].filter((t) => t !== undefined);
  const stamped = [before?.stampedAt, record.stampedAt].filter((t) => t !== undefined);
  // A commit of an older avalake says nothing of it: the partition is judged by that commit, as it was.
  const caughtUpAt = record.caughtUp === undefined ? undefined : caughtUpAfter(before, record);
  const rowsOf = (table: 'data' | 'rejects') =>
    record.files.filter((f) => f.table === table).reduce((n, f) => n + f.rows, 0);
  state.partitions.set(id, {
    partition: record.partition,
    seq: record.seq,
    runId: record.runId,
    committedAt: record.committedAt,
    checkpoint: record.checkpoint,
    commits: (before?.commits ?? 0) + 1,
    rows: (before?.rows ?? 0) + rowsOf('data'),
    rejects: (before?.rejects ?? 0) + rowsOf('rejects'),
    confirmations: [
      ...(before?.confirmations ?? []),
      ...(record.confirmedAt !== undefined
        ? [[record.confirmedAt, Number(record.checkpoint?.snapshotAt)] as [number, number]]
        : []),
    ],
    ...(stamped.length > 0 ? { stampedAt: Math.max(...stamped) } : {}),
    ...(sourceAt !== undefined ? { sourceAt } : {}),
    ...(newest.length > 0 ? { newestRecordAt: Math.max(...newest) } : {}),
    ...(cadence !== undefined ? { cadence } : {}),
    ...(caughtUpAt !== undefined ? { caughtUpAt } : {}),
  });
  for (const { staged: _, ...file } of record.files) state.files.push({ ...file, seq: record.seq });
}

/**
 * When a partition was last caught up, after a commit that says whether its walk reached the head. A
 * partition whose commits are all an older avalake's (no `caughtUpAt`) is taken to have been caught up at
 * its newest one, as that avalake's freshness took it: an upgrade does not turn every partition stale at
 * once, and a partition behind then is named once its newest such commit is older than the maximum age.
 */
function caughtUpAfter(before: PartitionState | undefined, record: DataCommit): string | null {
  if (record.caughtUp) return record.committedAt;
  if (before === undefined) return null;
  return before.caughtUpAt === undefined ? before.committedAt : before.caughtUpAt;
}

/**
 * When a partition was last caught up, for freshness: null when never. One whose newest commit is an older
 * avalake's, which did not say, counts from that commit (as that avalake judged it).
 */
export const caughtUpAtOf = (partition: PartitionState): string | null =>
  partition.caughtUpAt === undefined ? partition.committedAt : partition.caughtUpAt;

/** The state as JSON for its file. */
export function serializeState(state: StreamState): string {
  return JSON.stringify({ ...state, partitions: [...state.partitions.values()] });
}

/**
 * What a schema found wrong, in one line: the first few issues by path (zod's own message is a JSON dump
 * of every issue, a hundred lines for one bad field).
 */
function issuesOf(error: z.ZodError): string {
  const issues = closestIssues(error.issues);
  const shown = issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'the whole'}: ${issue.message}`);
  const more = issues.length - shown.length;
  return `${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/** A union's "Invalid input" says nothing: its closest member's issues (the fewest) say what is wrong. */
function closestIssues(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
    const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0] ?? [];
    return closestIssues(closest).map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
  });
}

/**
 * A value of `schema` read back from its store. Most are well-formed and hold nothing zod would change:
 * the quick check passes them as they are (zod's copy of every state took ~20 ms of each command's
 * start). A malformed one is a LakeCorruptError saying what and where.
 */
function parseStored<S extends z.ZodType>(
  schema: S,
  json: unknown,
  what: string,
  where: string,
): z.output<S> {
  if (recordCheckOf(schema)(json)) return json as z.output<S>;
  const result = schema.safeParse(json);
  if (!result.success)
    throw new LakeCorruptError(
      `${what} is malformed (${issuesOf(result.error)}); restore it from a backup`,
      where,
    );
  return result.data;
}

/** A folded state as read back from its store. */
export function parseState(json: unknown, what: string, where: string): StreamState {
  const { partitions, ...rest } = parseStored(streamStateSchema, json, what, where);
  return { ...rest, partitions: new Map(partitions.map((p) => [partitionId(p.partition), p])) };
}

/** A commit record as read back from its store. */
export function parseCommitRecord(json: unknown, what: string, where: string): CommitRecord {
  const kind = (json as { kind?: unknown } | null)?.kind;
  if (typeof json === 'object' && json !== null && !KNOWN_KINDS.has(kind))
    throw new LakeCorruptError(
      `${what} is of a kind this avalake does not know (${JSON.stringify(kind)}): a newer avalake wrote it; ` +
        'upgrade avalake on this host (every host sharing the commit log must run a version that knows it)',
      where,
    );
  // By its kind, so that a malformed record is told what its own kind lacks, not another's.
  return kind === 'repair'
    ? parseStored(repairCommitSchema, json, what, where)
    : parseStored(flushOrCompactionSchema, json, what, where);
}

/** Whether any snapshot of the stream was confirmed unchanged (pending in the state, or in its files). */
export const hasConfirmations = (state: StreamState | undefined): boolean =>
  !!state &&
  (state.files.some((f) => f.table === 'confirmations') ||
    [...state.partitions.values()].some((p) => p.confirmations.length > 0));

export const partitionStateOf = (state: StreamState | undefined, partition: Partition) =>
  state?.partitions.get(partitionId(partition));
