import { Base, type ColumnBuilder, type ColumnData, ensure } from './builder-base.ts';
import {
  BoolBuilder,
  DecimalBuilder,
  Float64Builder,
  Int32Builder,
  Int64Builder,
  TimestampBuilder,
  Utf8Builder,
} from './builder-scalars.ts';
import type { ColumnSpec, LakeType } from './columns.ts';

export type { ColumnBuilder } from './builder-base.ts';

/** Builders of nested columns (lists, structs), and the one factory that picks a column's builder. */

class ListBuilder extends Base {
  private offsets = new Int32Array(65);

  constructor(
    path: string,
    nullable: boolean,
    private readonly child: ColumnBuilder,
  ) {
    super(path, nullable);
  }

  write(index: number, value: unknown): void {
    if (!Array.isArray(value)) this.fail(value, 'expected an array');
    for (const element of value) this.child.append(element);
    if (index + 2 > this.offsets.length) this.offsets = ensure(this.offsets, index + 2);
    this.offsets[index + 1] = this.child.length;
  }

  protected writeNull(index: number): void {
    this.offsets = ensure(this.offsets, index + 2);
    this.offsets[index + 1] = this.offsets[index] ?? 0;
  }

  protected override truncateValues(length: number): void {
    this.child.truncate(this.offsets[length] ?? 0);
  }

  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): ColumnData {
    return {
      length,
      nullCount,
      nullBitmap,
      valueOffsets: this.offsets.slice(0, length + 1),
      values: undefined,
      children: [this.child.finish()],
    };
  }

  byteLength(): number {
    return 4 * this.length + this.child.byteLength();
  }
}

export class StructBuilder extends Base {
  constructor(
    path: string,
    nullable: boolean,
    readonly sources: string[],
    readonly children: Base[],
  ) {
    super(path, nullable);
  }

  write(_index: number, value: unknown): void {
    if (typeof value !== 'object' || Array.isArray(value)) this.fail(value, 'expected an object');
    const record = value as Record<string, unknown>;
    const { children, sources } = this;
    for (let i = 0; i < children.length; i++)
      (children[i] as ColumnBuilder).append(record[sources[i] as string]);
  }

  protected writeNull(): void {
    for (const child of this.children) child.appendNull();
  }

  protected override truncateValues(length: number): void {
    for (const child of this.children) child.truncate(length);
  }

  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): ColumnData {
    return {
      length,
      nullCount,
      nullBitmap,
      valueOffsets: undefined,
      values: undefined,
      children: this.children.map((c) => c.finish()),
    };
  }

  byteLength(): number {
    return this.children.reduce((sum, c) => sum + c.byteLength(), 0);
  }
}

/** A builder for a column of `lakeType`. */
export function createColumnBuilder(lakeType: LakeType, path: string, nullable: boolean): Base {
  switch (lakeType.kind) {
    case 'utf8':
    case 'json':
      return new Utf8Builder(path, nullable, lakeType.kind === 'json');
    case 'float64':
      return new Float64Builder(path, nullable);
    case 'bool':
      return new BoolBuilder(path, nullable);
    case 'int32':
      return new Int32Builder(path, nullable);
    case 'int64':
      return new Int64Builder(path, nullable);
    case 'timestamp':
      return new TimestampBuilder(path, nullable, lakeType.unit);
    case 'decimal':
      return new DecimalBuilder(path, nullable, lakeType.overflow === 'null');
    case 'list': {
      const child = createColumnBuilder(lakeType.element, `${path}[]`, lakeType.elementNullable);
      return new ListBuilder(path, nullable, child);
    }
    case 'struct': {
      const children = lakeType.fields.map((f: ColumnSpec) =>
        createColumnBuilder(f.type, `${path}.${f.name}`, f.nullable),
      );
      return new StructBuilder(
        path,
        nullable,
        lakeType.fields.map((f) => f.source),
        children,
      );
    }
  }
}
