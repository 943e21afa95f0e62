import type { DataType, RecordBatch, Schema } from 'apache-arrow';
import * as arrow from 'apache-arrow';
import type { z } from 'zod';
import { arrowTypes } from './arrow-types.js';
import { createBatchBuilder } from './batch-builder.ts';
import { type LakeType, lakeColumnsOf } from './columns.ts';

export { BATCH_ROWS } from './batch-builder.ts';

/** Over the apache-arrow modules the rest of the code uses (tests, parquet.ts), so their classes mix. */
const types = arrowTypes(arrow);
export const { arrowSchemaOfColumns, messageToBatch } = types;

/** The Arrow type that stores a lake type. Every timestamp is milliseconds UTC: DuckDB reads TIMESTAMPTZ. */
export const arrowTypeOf = (type: LakeType): DataType => types.arrowTypeOf(type);

/** The Arrow schema of a stream's files: the record's fields, then the extra (lineage) columns. */
export function arrowSchemaOf(record: z.ZodType, extra?: z.ZodType): Schema {
  const { record: r, extra: e } = lakeColumnsOf(record, extra);
  return arrowSchemaOfColumns([...r, ...e]);
}

/**
 * Collects records into Arrow RecordBatches. `append` is all-or-nothing: a record with a value that does
 * not fit its column throws RecordTypeError and leaves the batch as it was, so the caller can reject it.
 */
export interface RecordBatchBuilder {
  readonly schema: Schema;
  readonly rows: number;
  /** Approximate bytes buffered, for byte-based flush thresholds. */
  byteLength(): number;
  append(record: object, extra?: object): void;
  /** The rows so far as one RecordBatch; the builder starts over empty. */
  finish(): RecordBatch;
}

/** A batch builder (batch-builder.ts) whose batches are Arrow's: for files written on this thread. */
export function createRecordBatchBuilder(record: z.ZodType, extra?: z.ZodType): RecordBatchBuilder {
  const builder = createBatchBuilder(lakeColumnsOf(record, extra));
  const schema = arrowSchemaOfColumns(builder.columns);
  return {
    schema,
    get rows() {
      return builder.rows;
    },
    byteLength: () => builder.byteLength(),
    append: (rec, extra) => builder.append(rec, extra),
    finish: () => messageToBatch(schema, builder.finish()),
  };
}
