import { randomUUID } from 'node:crypto';
import { createCommitLog } from './commit.ts';
import { fileRecordStore } from './file-records.ts';
import { openLakeStorage, storageWhileHeld, whileHeld } from './lake.ts';
import { checkLakeIdentity } from './lake-identity.ts';
import { isSafeSegment, lakePaths, type Partition, partitionFolders, partitionId } from './layout.ts';
import { acquireLock, type LockOptions } from './lock.ts';
import { committedFileSize } from './recovery.ts';
import {
  applyRecord,
  type CommitRecord,
  emptyState,
  isDataCommit,
  type LiveFile,
  newestStampOf,
  type PartitionState,
  type RepairCommit,
  type StreamState,
} from './state.ts';
import { diskStorage, folderOf, type LakeStorage } from './storage.ts';

/**
 * Repair of a lake whose commit log names a file the lake lacks or holds at another size (deleted or cut
 * short by hand, a restore gone wrong) and no backup has it: the file is dropped from the commit log, and
 * every partition whose rows it may have held is rewound to its start, so that the next run reads those
 * rows again (as newer versions; staging keeps one per key). Rewinding to the start is what --full-refresh
 * does, and it is right for every strategy: a cursor, a newest-first walk or a height walk reads its
 * history again down to the pipeline's `start`, and a snapshot takes a new one (with rows: an answer
 * like the last is stored again, since the rows of the last may have been in the file).
 *
 * Which partitions: a flush's file is its partition's, known while the commit that made it is unfolded or
 * is the partition's newest; a merged file (compaction, rejects merge), or a flush's file once folded, is
 * known only by its folder (network, chain), so every partition writing there is rewound. Confirmations
 * of unchanged snapshots (`_confirmations/`) are observations of past times: dropped, nothing to re-read.
 *
 * Crash safety: per stream, a file found at another size is first moved aside (`_damaged/<its path>`,
 * out of every reader's glob; the log still names it, now as missing), then ONE new folded state without
 * the files and with the rewound checkpoints is written as a fold writes it (tmp, fsync, rename): before
 * that rename the stream is as it was (a repair run again finds the same files), after it, repaired.
 * Under the data directory's lock, as every writer, and after the recovery every writer's open does:
 * a writer killed between a compaction's commit and the move of its stream's link left the merged files
 * in a generation the link does not point at yet, and a flush's files may still be staged; judged before
 * that, they would look missing, and a healthy stream would be rewound (with the merged files left
 * behind in its folders once the link moved, where a glob reads them beside the rows read again). A dry
 * run takes no lock and writes nothing: it looks for such a file in the generation its state names.
 */

/** Where a file found at another size is moved, out of the stream's folders. */
export const DAMAGED_FOLDER = '_damaged';

export interface DroppedFile {
  /** Lake-relative, as the commit log names it. */
  path: string;
  table: LiveFile['table'];
  /** Rows the commit log records it held. */
  rows: number;
  bytes: number;
  /** Its size found in place; null when it is missing. */
  foundBytes: number | null;
  /** Where a file found at another size was moved (lake-relative). */
  movedTo?: string;
}

export interface RewoundPartition {
  partition: Partition;
  /** The checkpoint it had: the next run reads from the start instead. */
  checkpoint: Readonly<Record<string, unknown>> | null;
  /** `file`: the commit that wrote a dropped file names it; `folder`: it writes into a dropped file's folder. */
  by: 'file' | 'folder';
}

export interface StreamRepair {
  stream: string;
  dropped: DroppedFile[];
  rewound: RewoundPartition[];
}

export type RepairStep = 'plan' | 'aside' | 'commit' | 'done';

export interface RepairOptions {
  dataDir: string;
  /** Only these streams; default every stream of the lake. */
  streams?: readonly string[];
  /** Find and report, write nothing, take no lock. */
  dryRun?: boolean;
  lock?: LockOptions;
  /** Called as each stream's repair enters a step (the crash test's kill points). */
  onStep?: (stream: string, step: RepairStep) => void | Promise<void>;
}

/** Finds the damaged files of a local lake that keeps its commit log in files, and repairs their streams. */
export async function repairLake(options: RepairOptions): Promise<StreamRepair[]> {
  const paths = lakePaths(options.dataDir);
  const lock = options.dryRun ? undefined : await acquireLock(paths.lockFile, options.lock);
  // Written only while the lock is still this repair's: paused past its heartbeats and taken over, its
  // state would rewind partitions the other run has committed to since.
  const store = lock ? whileHeld(fileRecordStore(paths), lock) : fileRecordStore(paths);
  const storage = lock ? storageWhileHeld(diskStorage(paths.lakeDir), lock) : diskStorage(paths.lakeDir);
  try {
    // Not checking the files of unfolded commits: those are what a repair drops.
    if (lock) await createCommitLog(paths, store, storage).open({ checkFiles: false });
    const wanted = options.streams && new Set(options.streams);
    const repairs: StreamRepair[] = [];
    for (const stream of (await store.streams()).filter(isSafeSegment)) {
      if (wanted && !wanted.has(stream)) continue;
      const { state: folded, records } = await store.loadStream(stream, { tidy: false });
      const state = folded ?? emptyState(stream);
      for (const record of records) applyRecord(state, record);
      const plan = await planRepair(storage, state, records);
      if (!plan) continue;
      repairs.push(plan.repair);
      if (options.dryRun) continue;
      await options.onStep?.(stream, 'plan');
      await moveAside(storage, plan.repair.dropped, () => options.onStep?.(stream, 'aside'));
      await options.onStep?.(stream, 'commit');
      await store.writeState(
        plan.state,
        records.map((r) => r.seq),
      );
      await options.onStep?.(stream, 'done');
    }
    return repairs;
  } finally {
    await lock?.release();
  }
}

export interface CatalogRepairOptions extends Omit<RepairOptions, 'lock'> {
  /** The PostgreSQL catalog that keeps the lake's commit log. */
  catalog: string;
}

/**
 * The repair of a lake whose commit log is a catalog (its files in a bucket or a local directory), where
 * workers on other hosts may be extracting the partitions it rewinds. Per stream, holding the stream
 * alone (no commit or compaction of it meanwhile): a damaged file found at another size is moved aside
 * (`_damaged/<its path>`; on a bucket a copy and a delete, so that no reader's glob of the stream's
 * folders meets it), then ONE catalog transaction writes a `repair` record per rewound partition
 * (state.ts), each the partition's new head by the compare-and-set every commit makes. A worker that
 * read a partition before it fails its next commit there (CommitConflictError, which says a repair
 * rewound it): its flush is dropped, it gives the partition up for this run, and the next run reads it
 * from the start. One that claims the partition after the repair reads the record as it claims it.
 * A repair killed before the transaction leaves the log as it was (a file moved aside is then missing,
 * and a repair run again drops it); after it, repaired. As a writer it registers as one of the
 * catalog's runs and recovers first, as local repair does under the lock (see the header). A dry run
 * registers nothing and writes nothing.
 */
export async function repairCatalogLake(options: CatalogRepairOptions): Promise<StreamRepair[]> {
  const paths = lakePaths(options.dataDir);
  const storage = await openLakeStorage(options.dataDir);
  try {
    const catalog = await (await import('./catalog.ts')).openCatalog(options.catalog);
    try {
      // Refuses a catalog opened over a lake it does not keep, before anything is judged missing.
      await checkLakeIdentity(catalog, storage);
      const runId = randomUUID();
      const log = createCommitLog(paths, catalog, storage);
      if (!options.dryRun) {
        await catalog.register(runId);
        await log.open({ checkFiles: false });
      }
      const wanted = options.streams && new Set(options.streams);
      const repairs: StreamRepair[] = [];
      for (const stream of (await catalog.streams()).filter(isSafeSegment)) {
        if (wanted && !wanted.has(stream)) continue;
        const repairStream = async () => {
          const { state: folded, records } = await catalog.loadStream(stream, { tidy: false });
          const state = folded ?? emptyState(stream);
          for (const record of records) applyRecord(state, record);
          const plan = await planRepair(storage, state, records);
          if (!plan || options.dryRun) return plan?.repair;
          await options.onStep?.(stream, 'plan');
          const committedAt = new Date().toISOString();
          const removed = plan.repair.dropped.map((d) => d.path);
          const base = { format: 1, kind: 'repair', stream, runId, committedAt, removed } as const;
          // Numbered first: a catalog that fails here leaves nothing moved. (A catalog always numbers.)
          const nextSeq = async () => Number(await catalog.allocateSeq(stream));
          const repairRecords: RepairCommit[] = [];
          for (const r of plan.repair.rewound)
            repairRecords.push({
              ...base,
              seq: await nextSeq(),
              partition: { ...r.partition },
              parent: state.partitions.get(partitionId(r.partition))?.seq ?? null,
            });
          // Only snapshot confirmations damaged: nothing to rewind, the files to drop all the same.
          if (repairRecords.length === 0) repairRecords.push({ ...base, seq: await nextSeq() });
          await moveAside(storage, plan.repair.dropped, () => options.onStep?.(stream, 'aside'));
          await options.onStep?.(stream, 'commit');
          await catalog.appendAll(repairRecords);
          await options.onStep?.(stream, 'done');
          return plan.repair;
        };
        const repaired = options.dryRun
          ? await repairStream()
          : await catalog.withStream(stream, 'exclusive', repairStream);
        if (repaired) repairs.push(repaired);
      }
      // Folded at once, as a run's close folds: a reader of the stream then meets the repair in its state
      // (an older avalake too, which does not know the record's kind).
      if (!options.dryRun && repairs.length > 0) {
        for (const { stream } of repairs) await log.refresh(stream);
        await log.fold(1);
      }
      return repairs;
    } finally {
      await catalog.close();
    }
  } finally {
    storage.close();
  }
}

/**
 * Moves each file found at another size out of the stream's folders, to `_damaged/<its path>` (noted in
 * `movedTo`), durably: no reader's glob meets it, and the commit log then names it as missing.
 */
async function moveAside(
  storage: LakeStorage,
  dropped: DroppedFile[],
  onStep: () => Promise<void> | void,
): Promise<void> {
  for (const file of dropped) {
    if (file.foundBytes === null) continue;
    await onStep();
    file.movedTo = `${DAMAGED_FOLDER}/${file.path}`;
    await storage.move(file.path, file.movedTo);
    await storage.sync(folderOf(file.movedTo));
    await storage.sync(folderOf(file.path));
  }
}

/** A stream's damaged files and what its repaired state is; undefined when none is damaged. */
async function planRepair(
  storage: LakeStorage,
  state: StreamState,
  records: readonly CommitRecord[],
): Promise<{ repair: StreamRepair; state: StreamState } | undefined> {
  const dropped: DroppedFile[] = [];
  for (const file of state.files) {
    // 'unsettled' only in a dry run, which recovers nothing.
    const size = await committedFileSize(storage, state.stream, file, state.generation);
    if (size === 'in place' || size === 'staged' || size === 'unsettled') continue;
    dropped.push({
      path: file.path,
      table: file.table,
      rows: file.rows,
      bytes: file.bytes,
      foundBytes: size ?? null,
    });
  }
  if (dropped.length === 0) return undefined;
  const rewound = new Map<string, RewoundPartition>();
  for (const file of state.files.filter((f) => dropped.some((d) => d.path === f.path)))
    for (const { partition, by } of partitionsOf(state, records, file)) {
      const id = partitionId(partition.partition);
      if (rewound.get(id)?.by === 'file') continue;
      rewound.set(id, { partition: partition.partition, checkpoint: partition.checkpoint, by });
    }
  const gone = new Set(dropped.map((d) => d.path));
  const repaired: StreamState = {
    ...state,
    // A number of its own: the repair is the newest entry of the stream's log.
    seq: state.nextSeq,
    nextSeq: state.nextSeq + 1,
    files: state.files.filter((f) => !gone.has(f.path)),
    partitions: new Map(
      [...state.partitions].map(([id, p]) => {
        if (!rewound.has(id)) return [id, p];
        // Its stamps stay ahead of what it stamped before: a snapshot's `snapshotAt` goes with the checkpoint.
        // Not caught up any more: rows it had are gone until a walk reads them again (freshness says so).
        const stampedAt = newestStampOf(p);
        return [
          id,
          { ...p, checkpoint: null, caughtUpAt: null, ...(stampedAt !== undefined ? { stampedAt } : {}) },
        ];
      }),
    ),
  };
  const order = (a: RewoundPartition, b: RewoundPartition) =>
    partitionId(a.partition) < partitionId(b.partition) ? -1 : 1;
  return {
    repair: { stream: state.stream, dropped, rewound: [...rewound.values()].sort(order) },
    state: repaired,
  };
}

/** The partitions whose rows a live file may hold (see the header), and how that is known. */
function partitionsOf(
  state: StreamState,
  records: readonly CommitRecord[],
  file: LiveFile,
): { partition: PartitionState; by: 'file' | 'folder' }[] {
  if (file.table === 'confirmations') return [];
  const partitions = [...state.partitions.values()];
  if (!file.replaces) {
    const made = records.find((r) => isDataCommit(r) && r.files.some((f) => f.path === file.path));
    const id = made && isDataCommit(made) ? partitionId(made.partition) : undefined;
    // Sequence numbers are unique in a stream: a partition whose newest commit is the file's made it.
    const own = partitions.find((p) => (id ? partitionId(p.partition) === id : p.seq === file.seq));
    if (own) return [{ partition: own, by: 'file' }];
  }
  const folder = folderOf(file.path);
  const writesThere = (p: PartitionState) =>
    file.table === 'data'
      ? folder === [state.stream, ...partitionFolders(p.partition)].join('/')
      : folder === `_rejects/stream=${state.stream}/network=${p.partition.network}`;
  return partitions.filter(writesThere).map((partition) => ({ partition, by: 'folder' }));
}
