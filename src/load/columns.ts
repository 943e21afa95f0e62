import type { z } from 'zod';
import { EXACT_SUFFIX, lakeMetaOf } from '../schemas/lake.ts';
import { defOf } from '../schemas/zod-def.ts';

/** The lake type of a value, independent of Arrow: what a column builder needs to know. */
export type LakeType =
  | { kind: 'utf8' }
  | { kind: 'json' }
  | { kind: 'float64' }
  | { kind: 'bool' }
  | { kind: 'int32' }
  | { kind: 'int64' }
  /** `overflow: 'null'` stores NULL for more than 38 digits (the exact string sits in its own column). */
  | { kind: 'decimal'; overflow: 'error' | 'null' }
  | { kind: 'timestamp'; unit: 's' | 'ms' }
  | { kind: 'list'; element: LakeType; elementNullable: boolean }
  | { kind: 'struct'; fields: ColumnSpec[] };

/** One column (top level or inside a struct), read from `source` of the record. */
export interface ColumnSpec {
  name: string;
  source: string;
  type: LakeType;
  nullable: boolean;
}

/** A zod type the lake cannot store as asked: says where and how to fix it. */
export class LakeSchemaError extends Error {
  override name = 'LakeSchemaError';
}

type AnySchema = z.ZodType;

/** The columns of a zod object schema, in its key order. */
export function columnsOf(schema: AnySchema): ColumnSpec[] {
  const { type, nullable } = unwrap(schema, '(root)');
  if (type.kind !== 'struct') throw new LakeSchemaError('a record schema must be a z.object');
  if (nullable) throw new LakeSchemaError('a record schema must not be optional or nullable');
  return type.fields;
}

function unwrap(schema: AnySchema, path: string): { type: LakeType; nullable: boolean } {
  const { inner, nullable } = unwrapNullability(schema);
  const meta = lakeMetaOf(inner);
  if (meta)
    return { type: markedType(meta.kind, meta.unit, path), nullable: nullable || meta.kind === 'json' };
  return { type: plainType(inner, path), nullable };
}

function markedType(kind: string, unit: 's' | 'ms' | undefined, path: string): LakeType {
  switch (kind) {
    case 'amount':
      return { kind: 'decimal', overflow: 'error' };
    case 'bigAmount':
      // Expanded into two columns by fieldsOf; reaching here means a bigAmount inside a list.
      throw new LakeSchemaError(`${path}: lake.bigAmount() cannot be a list element; wrap it in a z.object`);
    case 'timestamp':
      return { kind: 'timestamp', unit: unit ?? 's' };
    case 'int32':
    case 'int64':
    case 'json':
      return { kind };
    default:
      throw new LakeSchemaError(`${path}: unknown lake kind ${kind}`);
  }
}

function plainType(schema: AnySchema, path: string): LakeType {
  const def = defOf(schema);
  switch (def.type) {
    case 'string':
    case 'enum':
    case 'template_literal':
      return { kind: 'utf8' };
    case 'number':
      return { kind: 'float64' };
    case 'boolean':
      return { kind: 'bool' };
    case 'literal':
      return literalType(def.values ?? [], path);
    case 'array': {
      const element = unwrap(def.element as AnySchema, `${path}[]`);
      return { kind: 'list', element: element.type, elementNullable: element.nullable };
    }
    case 'object':
      return { kind: 'struct', fields: fieldsOf(def.shape ?? {}, path) };
    case 'union':
      return unionType(def.options ?? [], path);
    case 'pipe':
      // A pipe into a schema (not a transform) stores what comes out.
      if (def.out && defOf(def.out).type !== 'transform') return unwrap(def.out, path).type;
      break;
  }
  throw new LakeSchemaError(
    `${path}: the lake cannot store a zod ${def.type}; mark it with lake.json() (free-form) or another lake.* type`,
  );
}

function literalType(values: unknown[], path: string): LakeType {
  if (values.every((v) => typeof v === 'string')) return { kind: 'utf8' };
  if (values.every((v) => typeof v === 'boolean')) return { kind: 'bool' };
  if (values.every((v) => typeof v === 'number')) return { kind: 'float64' };
  throw new LakeSchemaError(`${path}: a literal mixing types; mark it with lake.json()`);
}

/** A union of one scalar kind (e.g. string enums of two spellings) is that kind; anything else is JSON. */
function unionType(options: AnySchema[], path: string): LakeType {
  const kinds = options.map((o) => unwrap(o, path).type);
  const first = kinds[0];
  if (
    first &&
    first.kind !== 'list' &&
    first.kind !== 'struct' &&
    kinds.every((k) => k.kind === first.kind)
  ) {
    return first;
  }
  throw new LakeSchemaError(`${path}: a union of different types; mark it with lake.json()`);
}

function fieldsOf(shape: Record<string, AnySchema>, path: string): ColumnSpec[] {
  const columns: ColumnSpec[] = [];
  for (const [key, field] of Object.entries(shape)) {
    const fieldPath = path === '(root)' ? key : `${path}.${key}`;
    if (isBigAmount(field)) {
      const { nullable } = unwrapNullability(field);
      columns.push({ name: key, source: key, type: { kind: 'decimal', overflow: 'null' }, nullable: true });
      columns.push({ name: key + EXACT_SUFFIX, source: key, type: { kind: 'utf8' }, nullable });
      continue;
    }
    const { type, nullable } = unwrap(field, fieldPath);
    columns.push({ name: key, source: key, type, nullable });
  }
  const names = new Set<string>();
  for (const c of columns) {
    if (names.has(c.name)) throw new LakeSchemaError(`${path}: two columns named ${c.name}`);
    names.add(c.name);
  }
  return columns;
}

function isBigAmount(schema: AnySchema): boolean {
  return lakeMetaOf(unwrapNullability(schema).inner)?.kind === 'bigAmount';
}

const PASS_THROUGH = new Set(['default', 'prefault', 'catch', 'readonly', 'nonoptional']);

/** Strips optional/nullable/default wrappers down to a lake-marked or plain schema. */
function unwrapNullability(schema: AnySchema): { inner: AnySchema; nullable: boolean } {
  let nullable = false;
  let current = schema;
  for (;;) {
    if (lakeMetaOf(current)) return { inner: current, nullable };
    const def = defOf(current);
    if (def.type === 'optional' || def.type === 'nullable') nullable = true;
    else if (!PASS_THROUGH.has(def.type)) break;
    current = def.innerType as AnySchema;
  }
  return { inner: current, nullable };
}

/** A table's columns: the record's fields, then `extra`'s (lineage: run id, extracted at, partition keys). */
export interface LakeColumns {
  /** Columns filled from the record. */
  record: ColumnSpec[];
  /** Columns filled from the per-flush lineage object. */
  extra: ColumnSpec[];
}

export function lakeColumnsOf(record: AnySchema, extra?: AnySchema): LakeColumns {
  const columns = { record: columnsOf(record), extra: extra ? columnsOf(extra) : [] };
  const seen = new Set<string>();
  for (const c of [...columns.record, ...columns.extra]) {
    if (seen.has(c.name))
      throw new LakeSchemaError(`column ${c.name} is both a record field and a lineage column`);
    seen.add(c.name);
  }
  return columns;
}
