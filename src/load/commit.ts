import {
  foldConfirmations,
  HELD_CONFIRMATIONS,
  pendingConfirmations,
  removeStrayConfirmations,
} from './confirmations.ts';
import { fileRecordStore } from './file-records.ts';
import { createGenerations, type Generations } from './generations.ts';
import { isSafeSegment, type LakePaths, lakePaths, type Partition } from './layout.ts';
import type { RecordStore, StreamLog } from './records.ts';
import { createRecovery, publishStaged, type RecoveryReport } from './recovery.ts';
import { mergeRejects, removeStrayRejects } from './rejects-merge.ts';
import {
  applyRecord,
  type CommitRecord,
  type CompactCommit,
  type DataCommit,
  emptyState,
  type PartitionState,
  partitionStateOf,
  type StreamState,
} from './state.ts';
import { baseName, diskStorage, eachLimited, folderOf, type LakeStorage, stagingFolder } from './storage.ts';

export type {
  CommitRecord,
  CommittedFile,
  CompactCommit,
  DataCommit,
  LiveFile,
  Observation,
  PartitionState,
  StreamState,
} from './state.ts';

/**
 * The commit protocol (DESIGN.md): staged files are fsynced, then ONE commit record names them with the
 * checkpoint after them (tmp + fsync + rename + fsync dir), then the files move into the lake. The commit
 * record's rename is the instant of commit: before it the flush never happened, after it the flush is
 * complete even if the files still sit in staging, because recovery moves them.
 *
 * Records are folded: `state-<seq>.json` holds what every record up to <seq> amounts to (each
 * partition's newest commit, the live files), written durably before the records it replaces are
 * deleted. Opening the lake reads the newest state and the records after it, so its cost follows the
 * partitions and the live files, not the number of commits ever made.
 */

/** Where a stream's reading stands after a commit (page token, cursor, …): opaque JSON to the load layer. */
export type Checkpoint = Readonly<Record<string, unknown>>;

/** A stream is folded when a run leaves at least this many records after its state. */
export const FOLD_RECORDS = 16;
/** Streams folded at once by a writer alone with its log. */
const FOLDS_AT_ONCE = 4;
/** Streams recovered at once as a writer alone with its log opens it. */
const RECOVERIES_AT_ONCE = 8;

export type { RecoveryReport } from './recovery.ts';

export interface CommitLog {
  /**
   * Recovers every stream and loads its state. Call once, holding the data directory (its lock or a run).
   * `checkFiles: false` (a repair, which drops damaged files) puts the lake right without refusing it
   * for a file of an unfolded commit that is missing or cut short.
   */
  open(options?: { checkFiles?: boolean }): Promise<RecoveryReport>;
  /**
   * Recovers one stream again, as `open` did, adding to `report`: a shared lake's writer taking over a
   * gone writer's partition puts in what that writer committed and left staged.
   */
  recover(stream: string, report: RecoveryReport): Promise<void>;
  /** Reserves the next commit sequence number of a stream; numbers only grow, gaps are allowed. */
  allocateSeq(stream: string): Promise<number>;
  /** Where a partition stands: its newest commit (whose checkpoint is the partition's checkpoint). */
  latest(stream: string, partition: Partition): PartitionState | undefined;
  /** A stream's state as of its newest commit (as this writer last read it). */
  state(stream: string): StreamState | undefined;
  streams(): string[];
  /** Reads a stream again from the store: another writer may have committed to it. */
  refresh(stream: string): Promise<void>;
  /** Applies one partition's commits that other writers made since this one read the stream. */
  refreshPartition(stream: string, partition: Partition): Promise<void>;
  /**
   * Commits files already written and fsynced in the stream's staging folder, then moves them. The
   * record's `parent` is set to the partition's newest commit: a shared store refuses the commit when
   * another writer advanced the partition since (CommitConflictError).
   */
  commit(record: DataCommit): Promise<void>;
  /**
   * Records that a partition was read and had nothing new (no files; its checkpoint stays): where the
   * source stood, or that its snapshot was still true. A shared store takes it as any commit. A writer
   * alone with its log keeps it in the state until the log folds, at the latest as the lake closes: one
   * state file per stream for a run's checks, not one durable record file (two fsyncs) per partition.
   * A run killed before then loses only its checks, as if it had not looked: no checkpoint moves with
   * them.
   */
  check(record: DataCommit): Promise<void>;
  /**
   * Runs `body` (a compaction: plan, build, `commitCompaction`) holding the stream alone, with the
   * stream read fresh when the store is shared.
   */
  exclusive<T>(stream: string, body: () => Promise<T>): Promise<T>;
  /**
   * Commits a compaction whose next generation of folders is built and fsynced, then points the stream's
   * link at it and removes the old generation. Only inside `exclusive`.
   */
  commitCompaction(record: CompactCommit): Promise<void>;
  /**
   * Folds every stream with at least `minRecords` records after its state (default FOLD_RECORDS), and
   * every stream with checks not yet durable. Snapshot confirmations stay in the state until
   * HELD_CONFIRMATIONS are pending, except those of the streams in `confirmationsOut` (compaction of
   * everything), which are moved to a file.
   */
  fold(minRecords?: number, options?: { confirmationsOut?: readonly string[] }): Promise<void>;
  /** The store, for what the lake does beside commits (a catalog's leases). */
  readonly store: RecordStore;
  /** Where the files are. */
  readonly storage: LakeStorage;
}

/**
 * A local lake swaps a stream's folders by generation on compaction; object storage has no links, so
 * there a compaction publishes its merged files one by one (`publishStaged`).
 */
const NO_GENERATIONS: Generations = { ensureLink: async () => {}, settle: async () => {} };

export function createCommitLog(
  paths: LakePaths,
  store: RecordStore = fileRecordStore(paths),
  storage: LakeStorage = diskStorage(paths.lakeDir),
): CommitLog {
  const states = new Map<string, StreamState>();
  /** How many records follow each stream's state. */
  const unfolded = new Map<string, number>();
  const nextSeq = new Map<string, number>();
  /** Streams with checks held in the state only, made durable by the next fold. */
  const heldChecks = new Set<string>();

  const stateOf = (stream: string) => {
    let state = states.get(stream);
    if (!state) {
      state = emptyState(stream);
      states.set(stream, state);
    }
    return state;
  };

  const remember = (record: CommitRecord) => {
    applyRecord(stateOf(record.stream), record);
    unfolded.set(record.stream, (unfolded.get(record.stream) ?? 0) + 1);
    nextSeq.set(record.stream, Math.max(nextSeq.get(record.stream) ?? 1, record.seq + 1));
  };

  /** Replaces what this writer knows of a stream by what the store holds. */
  const load = (stream: string, { state, records }: StreamLog) => {
    states.set(stream, state ?? emptyState(stream));
    unfolded.set(stream, 0);
    nextSeq.set(stream, stateOf(stream).nextSeq);
    for (const record of records) remember(record);
    return records;
  };

  const generations = storage.remote
    ? NO_GENERATIONS
    : createGenerations(
        paths,
        (stream) => stateOf(stream),
        () => storage.forgetFolders(),
      );
  const ensureStreamDir = generations.ensureLink;
  const settleGeneration = generations.settle;
  const recovery = createRecovery({ storage, store, stateOf, ensureStreamDir });

  const foldStream = (stream: string, minRecords: number, allConfirmations: boolean) =>
    store.withStream(stream, 'exclusive', async () => {
      const records = store.shared
        ? load(stream, await store.loadStream(stream, { tidy: false }))
        : undefined;
      const count = unfolded.get(stream) ?? 0;
      const full = count >= minRecords;
      const state = stateOf(stream);
      const confirmationsOut = allConfirmations && pendingConfirmations(state) > 0;
      if (!confirmationsOut && (count === 0 || (!full && !heldChecks.has(stream)))) return;
      state.nextSeq = Math.max(state.nextSeq, nextSeq.get(stream) ?? 1);
      const replaced = [
        ...(await mergeRejects(storage, state)),
        ...(await foldConfirmations(storage, state, allConfirmations ? 1 : HELD_CONFIRMATIONS)),
      ];
      await store.writeState(
        state,
        (records ?? []).map((r) => r.seq),
      );
      for (const path of replaced) await storage.remove(path);
      unfolded.set(stream, 0);
      heldChecks.delete(stream);
    });

  /** Reads a stream afresh and puts right what gone writers left of it (staged files, a generation). */
  const recover = (
    stream: string,
    report: RecoveryReport,
    { tidy, checkFiles = true }: { tidy: boolean; checkFiles?: boolean },
  ) =>
    // Alone with the stream: a shared catalog's other writers neither commit nor compact it meanwhile.
    store.withStream(stream, 'exclusive', async () => {
      const records = load(stream, await store.loadStream(stream, { tidy }));
      await recovery.rollForward(stream, report);
      await settleGeneration(stream);
      await removeStrayConfirmations(storage, stateOf(stream));
      await removeStrayRejects(storage, stateOf(stream));
      if (checkFiles) await recovery.checkFiles(stream, records);
    });

  const log: CommitLog = {
    store,
    storage,

    async open({ checkFiles = true } = {}) {
      const report: RecoveryReport = { rolledForward: [], discarded: [] };
      const streams = new Set(
        [
          ...(await store.streams()),
          ...(await storage.list('_staging')),
          ...(await storage.list('_generations')),
        ]
          // Stray entries (.DS_Store, editor files) are not streams.
          .filter(isSafeSegment),
      );
      // Streams are recovered side by side: each alone with its own files, and what a lake on disk waits
      // for here is the file system (a state, a stat per committed file), one stream after another else.
      // The report and the failure thrown are in the streams' order, as if one at a time.
      const names = [...streams];
      const reports = names.map((): RecoveryReport => ({ rolledForward: [], discarded: [] }));
      const failures: unknown[] = [];
      await eachLimited(names.length, store.shared ? 1 : RECOVERIES_AT_ONCE, (i) =>
        recover(names[i] as string, reports[i] as RecoveryReport, { tidy: true, checkFiles }).catch(
          (error: unknown) => {
            failures[i] = error;
          },
        ),
      );
      const failed = failures.findIndex((error) => error !== undefined);
      if (failed >= 0) throw failures[failed];
      for (const each of reports) {
        report.rolledForward.push(...each.rolledForward);
        report.discarded.push(...each.discarded);
      }
      return report;
    },

    recover: (stream, report) => recover(stream, report, { tidy: false }),

    async allocateSeq(stream) {
      const fromStore = await store.allocateSeq(stream);
      if (fromStore !== undefined) return fromStore;
      const seq = nextSeq.get(stream) ?? 1;
      nextSeq.set(stream, seq + 1);
      return seq;
    },

    latest: (stream, partition) => partitionStateOf(states.get(stream), partition),
    state: (stream) => states.get(stream),
    streams: () => [...states.keys()],

    async refresh(stream) {
      load(stream, await store.loadStream(stream, { tidy: false }));
    },

    async refreshPartition(stream, partition) {
      for (const record of (await store.loadPartition?.(stream, partition)) ?? []) remember(record);
    },

    commit: (record) =>
      store.withStream(record.stream, 'shared', async () => {
        const staging = stagingFolder(record.stream);
        // The staged files' names must be durable before a commit record can point at them.
        if (record.files.length > 0) await storage.sync(staging);
        record.parent = log.latest(record.stream, record.partition)?.seq ?? null;
        await store.append(record);
        remember(record);
        if (record.files.length === 0) return;
        if (record.files.some((f) => f.table === 'data')) await ensureStreamDir(record.stream);
        for (const file of record.files) await publishStaged(storage, record.stream, file);
        // Not needed for correctness (recovery would redo a lost rename) but keeps the lake as committed.
        for (const folder of new Set(record.files.map((f) => folderOf(f.path)))) await storage.sync(folder);
        await storage.sync(staging);
      }),

    async check(record) {
      if (store.shared) return log.commit(record);
      record.parent = log.latest(record.stream, record.partition)?.seq ?? null;
      remember(record);
      heldChecks.add(record.stream);
    },

    exclusive: (stream, body) =>
      store.withStream(stream, 'exclusive', async () => {
        if (store.shared) await log.refresh(stream);
        return body();
      }),

    async commitCompaction(record) {
      await store.append(record);
      remember(record);
      if (!storage.remote) return settleGeneration(record.stream);
      for (const file of record.added)
        await publishStaged(storage, record.stream, { ...file, staged: baseName(file.path) });
    },

    async fold(minRecords = FOLD_RECORDS, { confirmationsOut = [] } = {}) {
      const out = new Set(confirmationsOut);
      // A shared store's streams this writer committed to are read again alone: others may have added.
      const due = [...states.keys()].filter((stream) => {
        const n = unfolded.get(stream) ?? 0;
        if (n > 0 && (store.shared || n >= minRecords || heldChecks.has(stream))) return true;
        return out.has(stream) && pendingConfirmations(stateOf(stream)) > 0;
      });
      // Alone with its log, a writer folds a few streams at once: each fold waits on fsyncs, which the
      // file system can then serve together (a cron run folds every stream it checked as it closes).
      await eachLimited(due.length, store.shared ? 1 : FOLDS_AT_ONCE, (i) =>
        foldStream(due[i] as string, minRecords, out.has(due[i] as string)),
      );
    },
  };
  return log;
}

/**
 * Every stream's state as of its newest commit, read-only: no lock, no recovery, tmp files left alone.
 * Safe while a run writes (records and states appear whole by rename); a fold that deletes a file while
 * it is read makes the stream be read again.
 */
export async function readStreamStates(
  dataDir: string,
  store: RecordStore = fileRecordStore(lakePaths(dataDir)),
): Promise<Map<string, StreamState>> {
  const byStream = new Map<string, StreamState>();
  for (const stream of (await store.streams()).filter(isSafeSegment)) {
    for (let attempt = 1; ; attempt++) {
      try {
        const { state, records } = await store.loadStream(stream, { tidy: false });
        const folded = state ?? emptyState(stream);
        for (const record of records) applyRecord(folded, record);
        if (folded.seq > 0) byStream.set(stream, folded);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw error;
      }
    }
  }
  return byStream;
}
