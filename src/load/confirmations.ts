import { z } from 'zod';
import { lake } from '../schemas/lake.ts';
import { partitionId, seqText } from './layout.ts';
import { mergeLakeFiles } from './merge.ts';
import type { StreamState } from './state.ts';
import type { LakeStorage } from './storage.ts';

/**
 * Confirmations of unchanged snapshots (when an answer was still true) grow with every run, so they stay
 * in a stream's state only up to a bound: folding then writes the pending ones as a Parquet file of the
 * stream's bookkeeping (`_confirmations/<stream>/`), which the state then lists among its files, and
 * merges them into one once MERGE_FILES pile up, so a stream keeps at most that many (a merged file names
 * the files it replaces, as a compaction's do). The state's rename commits it all; files no state names
 * are removed when the lake opens.
 *
 * Note: a merge rewrites every confirmation of the stream. They are tiny (a partition id, two times):
 * a year of 15-minute runs over a hundred partitions is a few million rows, a few MB, rewritten once
 * every MERGE_FILES - 1 files (every 30 runs of a hundred partitions); size tiers would bound that work
 * but keep several times more files. The warehouse does not read a merged file again
 * (warehouse/confirmations.ts).
 */

export const CONFIRMATIONS_TABLE = 'confirmations';
/**
 * Pending confirmations a stream's state holds before a fold writes them to a file. A cron run confirms
 * each snapshot partition once and folds every stream it checked: a stream of a dozen partitions wrote a
 * file every run or every second one, loading Arrow and parquet-wasm to do it (0.45 s of a 1.7 s run
 * that found nothing new, 2026-11-28), and DuckDB every fourth file to merge them. Held, they cost 31
 * bytes each in the state's JSON (32 KB at the bound, parsed in under a millisecond), and a file comes
 * every 1024 / partitions runs. Compacting everything (`avalake compact`) writes them out at once.
 */
export const HELD_CONFIRMATIONS = 1024;
/** Merge a stream's confirmation files into one when this many pile up. */
const MERGE_FILES = 4;

const confirmationSchema = z.object({
  partition: z.string(),
  snapshotAt: lake.timestamp({ unit: 'ms' }),
  confirmedAt: lake.timestamp({ unit: 'ms' }),
});

const folderOf = (stream: string) => `_confirmations/${stream}`;

const fileOf = (stream: string, seq: number, n: number) =>
  `${folderOf(stream)}/part-${seqText(seq)}-${n}.parquet`;

/** Confirmations in the state not yet in a file. */
export const pendingConfirmations = (state: StreamState): number =>
  [...state.partitions.values()].reduce((n, p) => n + p.confirmations.length, 0);

/**
 * Moves the state's pending confirmations into a new file once at least `atLeast` are pending, updating
 * `state` in place. The stream's files are merged into one first when MERGE_FILES of them have
 * piled up: the new file stays out of the merge, so the merged file holds only confirmations a warehouse
 * build could have read already, and the build, which follows the merge through `replaces`, reads just
 * the new file. Returns the files the new state no longer names, to delete once it is durable.
 */
export async function foldConfirmations(
  storage: LakeStorage,
  state: StreamState,
  atLeast: number,
): Promise<string[]> {
  const pending = [...state.partitions.values()].flatMap((p) =>
    p.confirmations.map(([confirmedAt, snapshotAt]) => ({
      partition: partitionId(p.partition),
      snapshotAt,
      confirmedAt,
    })),
  );
  if (pending.length === 0 || pending.length < atLeast) return [];
  const replaced = await mergeWhenMany(storage, state);
  // Loaded when a fold has confirmations to write: a run of other streams never loads Arrow or
  // parquet-wasm on this thread.
  const [{ createRecordBatchBuilder }, { encodeParquetFile }] = await Promise.all([
    import('./arrow.ts'),
    import('./parquet.ts'),
  ]);
  const builder = createRecordBatchBuilder(confirmationSchema);
  for (const row of pending) builder.append(row, {});
  const path = fileOf(state.stream, state.seq, 0);
  const { bytes, written } = encodeParquetFile(builder.finish());
  await storage.write(path, bytes);
  state.files.push({ path, table: CONFIRMATIONS_TABLE, seq: state.seq, ...written });
  for (const p of state.partitions.values()) p.confirmations = [];
  await storage.sync(folderOf(state.stream));
  return replaced;
}

/** Merges the stream's confirmation files into one once there are MERGE_FILES; returns the files replaced. */
async function mergeWhenMany(storage: LakeStorage, state: StreamState): Promise<string[]> {
  const files = state.files.filter((f) => f.table === CONFIRMATIONS_TABLE);
  if (files.length < MERGE_FILES) return [];
  const replaces = files.map((f) => f.path);
  const merged = fileOf(state.stream, state.seq, 1);
  const written = await mergeLakeFiles(storage, replaces, merged);
  state.files = state.files.filter((f) => f.table !== CONFIRMATIONS_TABLE);
  state.files.push({ path: merged, table: CONFIRMATIONS_TABLE, seq: state.seq, replaces, ...written });
  return replaces;
}

/** Deletes confirmation files no state names: a fold that never committed, or files a merge replaced. */
export async function removeStrayConfirmations(storage: LakeStorage, state: StreamState): Promise<void> {
  const live = new Set(state.files.filter((f) => f.table === CONFIRMATIONS_TABLE).map((f) => f.path));
  const folder = folderOf(state.stream);
  for (const name of await storage.list(folder))
    if (!live.has(`${folder}/${name}`)) await storage.remove(`${folder}/${name}`);
}
