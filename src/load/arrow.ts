import {
  Bool,
  type DataType,
  Decimal,
  Field,
  Float64,
  Int32,
  Int64,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  TimestampMillisecond,
  Utf8,
} from 'apache-arrow';
import type { z } from 'zod';
import { type ColumnBuilder, createColumnBuilder } from './builders.ts';
import { type ColumnSpec, columnsOf, LakeSchemaError, type LakeType } from './columns.ts';

/** Rows per Arrow batch (and per Parquet write): keeps parquet-wasm's never-shrinking memory small. */
export const BATCH_ROWS = 50_000;

/** The Arrow type that stores a lake type. Every timestamp is milliseconds UTC: DuckDB reads TIMESTAMPTZ. */
export function arrowTypeOf(type: LakeType): DataType {
  switch (type.kind) {
    case 'utf8':
    case 'json':
      return new Utf8();
    case 'float64':
      return new Float64();
    case 'bool':
      return new Bool();
    case 'int32':
      return new Int32();
    case 'int64':
      return new Int64();
    case 'decimal':
      return new Decimal(0, 38, 128);
    case 'timestamp':
      return new TimestampMillisecond('UTC');
    case 'list':
      return new List(new Field('item', arrowTypeOf(type.element), type.elementNullable));
    case 'struct':
      return new Struct(type.fields.map(fieldOf));
  }
}

function fieldOf(column: ColumnSpec): Field {
  return new Field(column.name, arrowTypeOf(column.type), column.nullable);
}

/** A record schema's columns, then `extra`'s (lineage: run id, extracted at, partition keys). */
export interface LakeColumns {
  /** Columns filled from the record. */
  record: ColumnSpec[];
  /** Columns filled from the per-flush lineage object. */
  extra: ColumnSpec[];
}

export function lakeColumnsOf(record: z.ZodType, extra?: z.ZodType): LakeColumns {
  const columns = { record: columnsOf(record), extra: extra ? columnsOf(extra) : [] };
  const seen = new Set<string>();
  for (const c of [...columns.record, ...columns.extra]) {
    if (seen.has(c.name))
      throw new LakeSchemaError(`column ${c.name} is both a record field and a lineage column`);
    seen.add(c.name);
  }
  return columns;
}

/** The Arrow schema of a stream's files: the record's fields, then the extra (lineage) columns. */
export function arrowSchemaOf(record: z.ZodType, extra?: z.ZodType): Schema {
  const { record: r, extra: e } = lakeColumnsOf(record, extra);
  return new Schema([...r, ...e].map(fieldOf));
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

export function createRecordBatchBuilder(record: z.ZodType, extra?: z.ZodType): RecordBatchBuilder {
  const columns = lakeColumnsOf(record, extra);
  const specs = [...columns.record, ...columns.extra];
  const schema = new Schema(specs.map(fieldOf));
  const builders: ColumnBuilder[] = specs.map((spec, i) =>
    createColumnBuilder(schema.fields[i]?.type as DataType, spec.type, spec.name, spec.nullable),
  );
  const recordCount = columns.record.length;
  let rows = 0;

  return {
    schema,
    get rows() {
      return rows;
    },
    byteLength: () => builders.reduce((sum, b) => sum + b.byteLength(), 0),
    append(rec, extra = {}) {
      try {
        for (let i = 0; i < specs.length; i++) {
          const source = i < recordCount ? rec : extra;
          (builders[i] as ColumnBuilder).append(
            (source as Record<string, unknown>)[(specs[i] as ColumnSpec).source],
          );
        }
      } catch (error) {
        for (const b of builders) b.truncate(rows);
        throw error;
      }
      rows++;
    },
    finish() {
      const children = builders.map((b) => b.finish());
      const data = makeData({ type: new Struct(schema.fields), length: rows, nullCount: 0, children });
      rows = 0;
      return new RecordBatch(schema, data);
    },
  };
}
