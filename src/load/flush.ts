import type { z } from 'zod';
import { EXTRACTED_AT, lineageFields, RUN_ID } from '../schemas/lake.ts';
import { BATCH_ROWS, type BatchBuilder, createBatchBuilder } from './batch-builder.ts';
import { columnsOf, type LakeColumns, lakeColumnsOf } from './columns.ts';
import type { Checkpoint, CommitLog, CommittedFile, DataCommit, Observation } from './commit.ts';
import type { EncodingFile, ParquetEncoder } from './encoder.ts';
import { RecordTypeError } from './errors.ts';
import { type FileTable, lakeRelativePath, type Partition, stagedFileName } from './layout.ts';
import { CommitConflictError } from './records.ts';
import { rejectSchema } from './rejects.ts';
import { newestOf, nextStamp } from './state.ts';
import { stagedPath } from './storage.ts';

/** A staged file is cut at this many buffered bytes even before BATCH_ROWS rows. */
export const BATCH_BYTES = 64 * 1024 * 1024;
/** How often (in rows) the byte size of the buffers is checked. */
const BYTES_CHECK_ROWS = 1024;
/**
 * Rows go to the encoder in batches of this many (a multiple of BYTES_CHECK_ROWS, so files are cut where
 * they were when a file was one batch), or fewer once CHUNK_BYTES are buffered: the builders stay small
 * and the encoder works while the next rows are built. Small batches keep memory low: a batch's buffers
 * are freed only when the encoder's garbage collector gets to them, and large ones scatter the heap (peak
 * RSS of the whale walk on 2026-11-25: at 200k records about 340 MB with batches of 8k rows, 305 MB with
 * 2k; at 2M records, 305 MB with 2k, 285 MB with 1k).
 */
const CHUNK_ROWS = BYTES_CHECK_ROWS;
const CHUNK_BYTES = 1024 * 1024;

/** A record that could not be stored, kept verbatim with why. */
export interface Reject {
  /** The record's JSON text as received. */
  raw: string;
  reason: string;
}

/**
 * One flush of one partition: records and rejects go to staged Parquet files (cut every BATCH_ROWS rows,
 * so memory stays bounded however many rows a flush holds); `commit` makes them visible with the
 * checkpoint after them, `abort` drops them. Calls must not overlap: await each before the next.
 */
export interface Flush {
  readonly stream: string;
  readonly partition: Partition;
  /** Rows accepted so far. */
  readonly rows: number;
  /** Rejects so far (records whose values did not fit their columns, and those passed to `reject`). */
  readonly rejected: number;
  /** Bytes so far: the Parquet files staged, and what is buffered for the next (in memory, uncompressed). */
  readonly bytes: number;
  /** Settles once the flush has its number (its commit's place in the partition's order), or is done. */
  readonly numbered: Promise<void>;
  /** The newest `_extracted_at` (ms) it stamped a row with, undefined before its first row. */
  readonly stampedAt: number | undefined;
  /**
   * Appends records (already checked by the stream's zod schema). A value that does not fit its column
   * turns its record into a reject instead of failing the flush.
   */
  append(records: Iterable<object>, extractedAt?: number | Date): Promise<void>;
  reject(rejects: Iterable<Reject>, extractedAt?: number | Date): Promise<void>;
  /**
   * Commits everything appended with `checkpoint`; nothing of it is visible before, all of it after.
   * `observed`: what the walk saw of the source's time (freshness reads it). `caughtUp`: whether the walk
   * reached the source's head with it (true) or stopped before (false); unsaid, the commit says neither.
   */
  commit(checkpoint: Checkpoint | null, observed?: Observation, caughtUp?: boolean): Promise<DataCommit>;
  /** Deletes the staged files; the partition's checkpoint stays where it was. */
  abort(): Promise<void>;
  /**
   * Takes no more rows: `commit` or `abort` follow, perhaps later, and the partition's next flush may
   * begin meanwhile (its commit must come after this one's).
   */
  seal(): void;
}

export interface FlushArgs {
  log: CommitLog;
  encoder: ParquetEncoder;
  stream: string;
  partition: Partition;
  runId: string;
  /** The stream's record schema (a z.object). */
  schema: z.ZodType;
  /**
   * The newest `_extracted_at` (ms) of the stream's rows so far, committed or not, read as each call
   * stamps its rows: they are stamped later than that whatever the clock says (see `lineage`).
   */
  stampedBefore?: () => number | undefined;
  /** Told each stamp the flush gives, so that the stream's later rows follow it. */
  onStamped?: (ms: number) => void;
  /**
   * Settles once the partition's flush before this one is numbered or done: this one's number is taken
   * after it, so the partition's commits keep the order the flushes began in, whatever order they
   * stage in (a sealed flush may still be committing while the next one stages its first file).
   */
  after?: Promise<void>;
  /** Called once the flush takes no more rows: its commit or abort has begun. */
  onSealed?: () => void;
  /** Called once the flush is committed or aborted. */
  onDone: () => void;
}

interface Table {
  name: FileTable;
  builder: BatchBuilder;
  /** The staged file being encoded, with the rows and buffer bytes already pushed to it. */
  file: EncodingFile | undefined;
  fileRows: number;
  fileBytes: number;
}

export function createFlush(args: FlushArgs): Flush {
  const { log, stream, partition, runId } = args;
  const { storage } = log;
  // Numbered when it first stages a file or is sealed (a shared catalog hands numbers out
  // asynchronously), never before the partition's flush before it.
  let seq: number | undefined;
  let numbering: Promise<number> | undefined;
  let markNumbered = () => {};
  const numbered = new Promise<void>((resolve) => {
    markNumbered = resolve;
  });
  const seqOf = () => {
    numbering ??= (async () => {
      try {
        await args.after;
        seq = await log.allocateSeq(stream);
        return seq;
      } finally {
        markNumbered();
      }
    })();
    return numbering;
  };
  const table = (name: FileTable, builder: BatchBuilder): Table => ({
    name,
    builder,
    file: undefined,
    fileRows: 0,
    fileBytes: 0,
  });
  // A table's builder is made by its first row: most flushes reject nothing, and a cron run's flushes
  // mostly take no row at all.
  let dataTable: Table | undefined;
  let rejectsTable: Table | undefined;
  const data = () => {
    dataTable ??= table('data', createBatchBuilder(dataColumnsOf(args.schema, Object.keys(partition))));
    return dataTable;
  };
  const rejects = () => {
    rejectsTable ??= table('rejects', createBatchBuilder(rejectColumns()));
    return rejectsTable;
  };
  /** The tables with rows so far, data first (the order their files are numbered in). */
  const tables = () => [dataTable, rejectsTable].filter((t) => t !== undefined);
  /** Files written to staging so far, numbered in order across both tables. */
  const staged: CommittedFile[] = [];
  let state: 'open' | 'busy' | 'failed' | 'done' = 'open';
  let failure: unknown;
  let rows = 0;
  let rejected = 0;
  let stagedBytes = 0;

  let stampedAt: number | undefined;
  /**
   * A row's lineage. Its `_extracted_at` orders a record's versions (staging keeps the newest), so it
   * never goes back within a stream: after the clock stepped back (NTP correcting a clock that ran
   * ahead, a VM resumed), or on a worker whose clock is behind the one that read the stream last, the
   * rows are stamped just after the newest stamp, not before it, where a rebuild would take the older
   * version for the newer (`nextStamp`). While the clock is behind, each call's rows a millisecond after
   * the last call's: a walk may list a record twice in one flush (a pass carried on, then one from the
   * top), and a tie would leave staging to pick either.
   */
  const lineage = (extractedAt: number | Date | undefined) => {
    const newest = newestOf([args.stampedBefore?.(), stampedAt]);
    const at = extractedAt ?? nextStamp(Date.now(), newest);
    const ms = typeof at === 'number' ? at : at.getTime();
    stampedAt = Math.max(stampedAt ?? ms, ms);
    args.onStamped?.(ms);
    return { ...partition, [RUN_ID]: runId, [EXTRACTED_AT]: at };
  };

  /** Hands the builder's rows to the table's file (started with its first rows). */
  const push = async (table: Table) => {
    const { builder } = table;
    if (builder.rows === 0) return;
    table.fileRows += builder.rows;
    table.fileBytes += builder.byteLength();
    table.file ??= args.encoder.open(builder.columns);
    await table.file.push(builder.finish());
  };

  /** Ends the table's file and writes it to staging (durably: storage.write fsyncs it). */
  const stage = async (table: Table) => {
    await push(table);
    const { file } = table;
    if (!file) return;
    table.file = undefined;
    table.fileRows = 0;
    table.fileBytes = 0;
    const n = staged.length;
    const seq = await seqOf();
    const name = stagedFileName(table.name, seq, n);
    const { bytes, written } = await file.finish();
    await storage.write(stagedPath(stream, name), bytes);
    staged.push({
      path: lakeRelativePath(stream, partition, table.name, seq, n),
      staged: name,
      table: table.name,
      ...written,
    });
    stagedBytes += written.bytes;
  };

  /**
   * After each appended row: the file is cut at BATCH_ROWS rows or BATCH_BYTES buffered bytes, the rows
   * go to the encoder every CHUNK_ROWS rows or CHUNK_BYTES bytes. Synchronous when neither is due, so the
   * per-record path awaits only then.
   */
  const due = (table: Table): 'file' | 'chunk' | undefined => {
    const b = table.builder;
    const checkBytes = b.rows % BYTES_CHECK_ROWS === 0;
    const bytes = checkBytes ? b.byteLength() : 0;
    if (table.fileRows + b.rows >= BATCH_ROWS || (checkBytes && table.fileBytes + bytes >= BATCH_BYTES))
      return 'file';
    if (b.rows >= CHUNK_ROWS || (checkBytes && bytes >= CHUNK_BYTES)) return 'chunk';
    return undefined;
  };
  const afterRow = (table: Table) => {
    const next = due(table);
    return next === 'file' ? stage(table) : next === 'chunk' ? push(table) : undefined;
  };

  const addReject = async (reject: Reject, extra: object) => {
    const table = rejects();
    table.builder.append({ ...reject, stream, partition }, extra);
    rejected++;
    await afterRow(table);
  };

  const dropFiles = () => {
    for (const table of tables()) {
      table.file?.drop();
      table.file = undefined;
    }
  };

  /**
   * Runs one call at a time. A failure other than a rejected record may have lost buffered rows (a batch
   * taken from the builder but not staged), so the flush then only allows `abort`.
   */
  const exclusive = async <T>(what: string, body: () => Promise<T>): Promise<T> => {
    if (state !== 'open' && !(state === 'failed' && what === 'abort')) {
      const why = {
        busy: 'another call is running',
        failed: `an earlier call failed (${(failure as Error | undefined)?.message})`,
        done: 'it is finished',
      };
      throw new Error(`flush ${stream} #${seq ?? '-'}: cannot ${what}, ${why[state as keyof typeof why]}`, {
        cause: state === 'failed' ? failure : undefined,
      });
    }
    state = 'busy';
    try {
      const result = await body();
      if (state === 'busy') state = 'open';
      return result;
    } catch (error) {
      if (state === 'busy') {
        state = 'failed';
        failure = error;
      }
      throw error;
    }
  };

  let sealed = false;
  const seal = () => {
    if (sealed) return;
    sealed = true;
    args.onSealed?.();
  };
  const refuseSealed = (what: string) =>
    sealed
      ? Promise.reject(new Error(`flush ${stream} #${seq ?? '-'}: cannot ${what}, it is sealed`))
      : undefined;
  const finish = () => {
    state = 'done';
    seal();
    markNumbered();
    args.onDone();
  };

  const removeStaged = async () => {
    for (const file of staged) {
      await storage.remove(stagedPath(stream, file.staged)).catch(() => undefined);
    }
  };

  return {
    stream,
    partition,
    seal() {
      // Sealed to commit later: numbered now, so the next flush, which is numbered after this one, need
      // not wait for this commit to begin. A number an abort then leaves unused is a gap, as a dropped
      // staged file's is.
      if (!sealed) seqOf().catch(() => undefined);
      seal();
    },
    numbered,
    get rows() {
      return rows;
    },
    get rejected() {
      return rejected;
    },
    get stampedAt() {
      return stampedAt;
    },
    get bytes() {
      const buffered = (t: Table) => t.fileBytes + t.builder.byteLength();
      return stagedBytes + tables().reduce((sum, table) => sum + buffered(table), 0);
    },

    // Refused before `exclusive`: a call after seal() is the caller's mistake, not this flush's failure.
    append: (records, extractedAt) =>
      refuseSealed('append') ??
      exclusive('append', async () => {
        let extra: ReturnType<typeof lineage> | undefined;
        let table: Table | undefined;
        for (const record of records) {
          table ??= data();
          extra ??= lineage(extractedAt);
          try {
            table.builder.append(record, extra);
          } catch (error) {
            if (!(error instanceof RecordTypeError)) throw error;
            await addReject({ raw: JSON.stringify(record, bigintToString), reason: error.message }, extra);
            continue;
          }
          rows++;
          const next = afterRow(table);
          if (next) await next;
        }
      }),

    reject: (items, extractedAt) =>
      refuseSealed('reject') ??
      exclusive('reject', async () => {
        let extra: ReturnType<typeof lineage> | undefined;
        for (const item of items) {
          extra ??= lineage(extractedAt);
          await addReject(item, extra);
        }
      }),

    commit: (checkpoint, observed, caughtUp) =>
      exclusive('commit', async () => {
        seal();
        const record: DataCommit = {
          format: 1,
          stream,
          seq: 0,
          partition: { ...partition },
          runId,
          committedAt: new Date().toISOString(),
          files: [],
          checkpoint: JSON.parse(JSON.stringify(checkpoint)),
          ...(observed && Object.keys(observed).length > 0 ? { observed } : {}),
          ...(stampedAt !== undefined ? { stampedAt } : {}),
          ...(caughtUp !== undefined ? { caughtUp } : {}),
        };
        // Failing to get its number (the catalog gone) ends the flush too: left open, it would keep the
        // lake from closing after the failure.
        try {
          record.seq = await seqOf();
          for (const table of tables()) await stage(table);
        } catch (error) {
          dropFiles();
          await removeStaged();
          finish();
          throw error;
        }
        record.files = staged;
        // A failure from here leaves either no commit (the staged files are discarded at the next start)
        // or a durable one (its files are rolled forward): never half. Either way this flush is over.
        try {
          await log.commit(record);
        } catch (error) {
          // Refused (another writer advanced the partition): nothing of it is committed, so nothing stays.
          if (error instanceof CommitConflictError) await removeStaged();
          throw error;
        } finally {
          finish();
        }
        return record;
      }),

    abort: () =>
      exclusive('abort', async () => {
        seal();
        dropFiles();
        await removeStaged();
        finish();
      }),
  };
}

/**
 * A table's columns, worked out from its zod schema once and kept: every partition's flush of a stream
 * has the same ones, and working them out (walking the schema, building the lineage columns' schema)
 * cost about 0.7 ms a flush, a tenth of a cron run that finds nothing new.
 */
const layouts = new WeakMap<z.ZodType, Map<string, LakeColumns>>();

/** The data table's columns: the record's, then the lineage columns for the partition's keys. */
function dataColumnsOf(schema: z.ZodType, partitionKeys: readonly string[]): LakeColumns {
  let bySchema = layouts.get(schema);
  if (!bySchema) {
    bySchema = new Map();
    layouts.set(schema, bySchema);
  }
  const key = partitionKeys.join('\n');
  let columns = bySchema.get(key);
  if (!columns) {
    const recordNames = new Set(columnsOf(schema).map((c) => c.name));
    // A partition key the record already carries (e.g. `address`) is not repeated as a lineage column.
    const lineageKeys = partitionKeys.filter((k) => !recordNames.has(k));
    columns = lakeColumnsOf(schema, lineageFields(lineageKeys));
    bySchema.set(key, columns);
  }
  return columns;
}

let rejectLayout: LakeColumns | undefined;
const rejectColumns = () => {
  rejectLayout ??= lakeColumnsOf(rejectSchema, lineageFields(['network']));
  return rejectLayout;
};

function bigintToString(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
