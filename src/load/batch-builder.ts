import { type BatchMessage, packBatch } from './batch-message.js';
import { createColumnBuilder } from './builders.ts';
import type { ColumnSpec, LakeColumns } from './columns.ts';
import { compileRowAppend } from './row-append.ts';

/** Rows per staged file (and per Parquet row group): keeps parquet-wasm's never-shrinking memory small. */
export const BATCH_ROWS = 50_000;

/**
 * Collects records into a batch of columns (batch-message.js). `append` is all-or-nothing: a record with
 * a value that does not fit its column throws RecordTypeError and leaves the batch as it was, so the
 * caller can reject it.
 */
export interface BatchBuilder {
  /** The record's columns, then the extra (lineage) columns: the table's columns in order. */
  readonly columns: readonly ColumnSpec[];
  readonly rows: number;
  /** Approximate bytes buffered, for byte-based flush thresholds. */
  byteLength(): number;
  append(record: object, extra?: object): void;
  /** The rows so far as one batch; the builder starts over empty. */
  finish(): BatchMessage;
}

export function createBatchBuilder({ record, extra }: LakeColumns): BatchBuilder {
  const columns = [...record, ...extra];
  const builders = columns.map((c) => createColumnBuilder(c.type, c.name, c.nullable));
  const appendRow = compileRowAppend(columns, builders, record.length);
  let rows = 0;

  return {
    columns,
    get rows() {
      return rows;
    },
    byteLength: () => builders.reduce((sum, b) => sum + b.byteLength(), 0),
    append(rec, extra = {}) {
      try {
        appendRow(rec, extra);
      } catch (error) {
        for (const b of builders) b.truncate(rows);
        throw error;
      }
      rows++;
    },
    finish() {
      const batch = packBatch({ length: rows, columns: builders.map((b) => b.finish()) });
      rows = 0;
      return batch;
    },
  };
}
