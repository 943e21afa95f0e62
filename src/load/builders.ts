import { type Data, type DataType, makeData } from 'apache-arrow';
import type { ColumnSpec, LakeType } from './columns.ts';
import { fitsDecimal38, writeDecimal38 } from './decimal.ts';
import { RecordTypeError } from './errors.ts';

/**
 * Column builders that write straight into typed buffers (no per-value Arrow objects). Buffers double as
 * they fill and are reused after `finish()`, so a long run holds one batch's worth of memory per column.
 */
export interface ColumnBuilder {
  readonly length: number;
  /** Appends a value; null/undefined is NULL and throws for a required column. */
  append(value: unknown): void;
  /** Appends NULL without the required check: a slot masked by a NULL parent struct. */
  appendNull(): void;
  /** Drops values from index `length` on, including a half-appended nested value. */
  truncate(length: number): void;
  /** Buffer bytes in use, for flush thresholds. */
  byteLength(): number;
  /** The Arrow data so far; the builder starts over empty. */
  finish(): Data;
}

type Typed = Uint8Array | Int32Array | Uint32Array | Float64Array | BigInt64Array;

function ensure<T extends Typed>(array: T, need: number): T {
  if (need <= array.length) return array;
  let capacity = Math.max(64, array.length * 2);
  while (capacity < need) capacity *= 2;
  const next = new (array.constructor as new (n: number) => T)(capacity);
  next.set(array as never);
  return next;
}

/** A bitmap whose every bit is written (set or cleared), so reused bytes never leak stale bits. */
class Bitmap {
  bytes = new Uint8Array(64);
  zeros = 0;

  set(index: number, bit: boolean): void {
    this.bytes = ensure(this.bytes, (index >> 3) + 1);
    const mask = 1 << (index & 7);
    if (bit) this.bytes[index >> 3] = (this.bytes[index >> 3] ?? 0) | mask;
    else {
      this.bytes[index >> 3] = (this.bytes[index >> 3] ?? 0) & ~mask;
      this.zeros++;
    }
  }

  get(index: number): boolean {
    return (((this.bytes[index >> 3] ?? 0) >> (index & 7)) & 1) === 1;
  }

  truncate(from: number, to: number): void {
    for (let i = to; i < from; i++) if (!this.get(i)) this.zeros--;
  }

  take(length: number): Uint8Array {
    const out = this.bytes.slice(0, (length + 7) >> 3);
    this.zeros = 0;
    return out;
  }
}

abstract class Base implements ColumnBuilder {
  length = 0;
  protected validity = new Bitmap();

  constructor(
    readonly type: DataType,
    protected readonly path: string,
    private readonly nullable: boolean,
  ) {}

  append(value: unknown): void {
    if (value === null || value === undefined) {
      if (!this.nullable) throw new RecordTypeError(this.path, value, 'a value is required');
      this.appendNull();
      return;
    }
    this.write(this.length, value);
    this.validity.set(this.length, true);
    this.length++;
  }

  appendNull(): void {
    this.writeNull(this.length);
    this.validity.set(this.length, false);
    this.length++;
  }

  truncate(length: number): void {
    if (length < this.length) {
      this.validity.truncate(this.length, length);
      this.length = length;
    }
    this.truncateValues(length);
  }

  finish(): Data {
    const length = this.length;
    const nullCount = this.validity.zeros;
    const nullBitmap = this.validity.take(length);
    const data = this.take(length, nullCount, nullCount > 0 ? nullBitmap : undefined);
    this.length = 0;
    return data;
  }

  /** Writes a non-null value at `index`; throws RecordTypeError before changing anything visible. */
  protected abstract write(index: number, value: unknown): void;
  protected abstract writeNull(index: number): void;
  protected truncateValues(_length: number): void {}
  protected abstract take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data;
  abstract byteLength(): number;

  protected fail(value: unknown, reason: string): never {
    throw new RecordTypeError(this.path, value, reason);
  }
}

class Utf8Builder extends Base {
  private offsets = new Int32Array(65);
  private bytes = new Uint8Array(1024);
  private readonly encoder = new TextEncoder();

  constructor(
    type: DataType,
    path: string,
    nullable: boolean,
    private readonly asJson: boolean,
  ) {
    super(type, path, nullable);
  }

  protected write(index: number, value: unknown): void {
    let text: string;
    if (this.asJson) text = JSON.stringify(value);
    else if (typeof value === 'string') text = value;
    else this.fail(value, 'expected a string');
    const start = this.offsets[index] ?? 0;
    // UTF-8 needs at most 3 bytes per UTF-16 unit.
    this.bytes = ensure(this.bytes, start + text.length * 3);
    const { written } = this.encoder.encodeInto(text, this.bytes.subarray(start));
    // Note: Utf8 offsets are int32; BATCH_BYTES cuts batches long before this.
    if (start + written > 0x7fffffff)
      this.fail(`${text.slice(0, 20)}…`, 'more than 2 GiB of text in one batch');
    this.offsets = ensure(this.offsets, index + 2);
    this.offsets[index + 1] = start + written;
  }

  protected writeNull(index: number): void {
    this.offsets = ensure(this.offsets, index + 2);
    this.offsets[index + 1] = this.offsets[index] ?? 0;
  }

  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    const end = this.offsets[length] ?? 0;
    return makeData({
      type: this.type as never,
      length,
      nullCount,
      nullBitmap,
      valueOffsets: this.offsets.slice(0, length + 1),
      data: this.bytes.slice(0, end),
    });
  }

  byteLength(): number {
    return (this.offsets[this.length] ?? 0) + 4 * this.length;
  }
}

/** Fixed-width columns: one typed array, `stride` elements per value. */
abstract class FixedBuilder<T extends Typed> extends Base {
  protected values: T;

  constructor(
    type: DataType,
    path: string,
    nullable: boolean,
    make: (n: number) => T,
    private readonly stride = 1,
  ) {
    super(type, path, nullable);
    this.values = make(64 * stride);
  }

  protected reserve(index: number): void {
    this.values = ensure(this.values, (index + 1) * this.stride);
  }

  protected writeNull(index: number): void {
    this.reserve(index);
    const zero = this.values instanceof BigInt64Array ? 0n : 0;
    this.values.fill(zero as never, index * this.stride, (index + 1) * this.stride);
  }

  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return makeData({
      type: this.type as never,
      length,
      nullCount,
      nullBitmap,
      data: this.values.slice(0, length * this.stride),
    } as never);
  }

  byteLength(): number {
    return this.length * this.stride * this.values.BYTES_PER_ELEMENT;
  }
}

class Float64Builder extends FixedBuilder<Float64Array> {
  constructor(type: DataType, path: string, nullable: boolean) {
    super(type, path, nullable, (n) => new Float64Array(n));
  }
  protected write(index: number, value: unknown): void {
    if (typeof value !== 'number') this.fail(value, 'expected a number');
    this.reserve(index);
    this.values[index] = value;
  }
}

class Int32Builder extends FixedBuilder<Int32Array> {
  constructor(type: DataType, path: string, nullable: boolean) {
    super(type, path, nullable, (n) => new Int32Array(n));
  }
  protected write(index: number, value: unknown): void {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) {
      this.fail(value, 'expected an int32');
    }
    this.reserve(index);
    this.values[index] = value;
  }
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

function toBigInt(value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : undefined;
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) return BigInt(value);
  return undefined;
}

class Int64Builder extends FixedBuilder<BigInt64Array> {
  constructor(type: DataType, path: string, nullable: boolean) {
    super(type, path, nullable, (n) => new BigInt64Array(n));
  }
  protected write(index: number, value: unknown): void {
    const n = toBigInt(value);
    if (n === undefined || n < INT64_MIN || n > INT64_MAX)
      this.fail(value, 'expected an int64 (number or string)');
    this.reserve(index);
    this.values[index] = n;
  }
}

class TimestampBuilder extends FixedBuilder<BigInt64Array> {
  private readonly factor: bigint;
  constructor(type: DataType, path: string, nullable: boolean, unit: 's' | 'ms') {
    super(type, path, nullable, (n) => new BigInt64Array(n));
    this.factor = unit === 's' ? 1000n : 1n;
  }
  protected write(index: number, value: unknown): void {
    let ms: bigint | undefined;
    if (value instanceof Date) ms = Number.isNaN(value.getTime()) ? undefined : BigInt(value.getTime());
    else {
      const n = toBigInt(value);
      ms = n === undefined ? undefined : n * this.factor;
    }
    if (ms === undefined || ms < INT64_MIN || ms > INT64_MAX)
      this.fail(value, 'expected an integer Unix time');
    this.reserve(index);
    this.values[index] = ms;
  }
}

class DecimalBuilder extends FixedBuilder<Uint32Array> {
  constructor(
    type: DataType,
    path: string,
    nullable: boolean,
    private readonly overflowToNull: boolean,
  ) {
    super(type, path, nullable, (n) => new Uint32Array(n), 4);
  }

  override append(value: unknown): void {
    // A bigAmount beyond 38 digits is NULL here; its exact string lives in the sibling column.
    if (this.overflowToNull && typeof value === 'string' && /^\d{39,}$/.test(value)) this.appendNull();
    else super.append(value);
  }

  protected write(index: number, value: unknown): void {
    const text =
      typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value))
        ? String(value)
        : value;
    if (typeof text !== 'string' || !fitsDecimal38(text)) {
      this.fail(value, 'expected an integer of at most 38 digits as a decimal string');
    }
    this.reserve(index);
    writeDecimal38(this.values, index * 4, text);
  }
}

class BoolBuilder extends Base {
  private values = new Bitmap();
  protected write(index: number, value: unknown): void {
    if (typeof value !== 'boolean') this.fail(value, 'expected a boolean');
    this.values.set(index, value);
  }
  protected writeNull(index: number): void {
    this.values.set(index, false);
  }
  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return makeData({
      type: this.type as never,
      length,
      nullCount,
      nullBitmap,
      data: this.values.take(length),
    });
  }
  byteLength(): number {
    return this.length >> 3;
  }
}

class ListBuilder extends Base {
  private offsets = new Int32Array(65);

  constructor(
    type: DataType,
    path: string,
    nullable: boolean,
    private readonly child: ColumnBuilder,
  ) {
    super(type, path, nullable);
  }

  protected write(index: number, value: unknown): void {
    if (!Array.isArray(value)) this.fail(value, 'expected an array');
    for (const element of value) this.child.append(element);
    this.offsets = ensure(this.offsets, index + 2);
    this.offsets[index + 1] = this.child.length;
  }

  protected writeNull(index: number): void {
    this.offsets = ensure(this.offsets, index + 2);
    this.offsets[index + 1] = this.offsets[index] ?? 0;
  }

  protected override truncateValues(length: number): void {
    this.child.truncate(this.offsets[length] ?? 0);
  }

  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return makeData({
      type: this.type as never,
      length,
      nullCount,
      nullBitmap,
      valueOffsets: this.offsets.slice(0, length + 1),
      child: this.child.finish(),
    });
  }

  byteLength(): number {
    return 4 * this.length + this.child.byteLength();
  }
}

class StructBuilder extends Base {
  constructor(
    type: DataType,
    path: string,
    nullable: boolean,
    private readonly sources: string[],
    private readonly children: ColumnBuilder[],
  ) {
    super(type, path, nullable);
  }

  protected write(_index: number, value: unknown): void {
    if (typeof value !== 'object' || Array.isArray(value)) this.fail(value, 'expected an object');
    const record = value as Record<string, unknown>;
    this.children.forEach((child, i) => {
      child.append(record[this.sources[i] as string]);
    });
  }

  protected writeNull(): void {
    for (const child of this.children) child.appendNull();
  }

  protected override truncateValues(length: number): void {
    for (const child of this.children) child.truncate(length);
  }

  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): Data {
    return makeData({
      type: this.type as never,
      length,
      nullCount,
      nullBitmap,
      children: this.children.map((c) => c.finish()),
    });
  }

  byteLength(): number {
    return this.children.reduce((sum, c) => sum + c.byteLength(), 0);
  }
}

/** A builder for a column of `lakeType`; `type` is its Arrow type, the very instance in the schema. */
export function createColumnBuilder(
  type: DataType,
  lakeType: LakeType,
  path: string,
  nullable: boolean,
): ColumnBuilder {
  switch (lakeType.kind) {
    case 'utf8':
    case 'json':
      return new Utf8Builder(type, path, nullable, lakeType.kind === 'json');
    case 'float64':
      return new Float64Builder(type, path, nullable);
    case 'bool':
      return new BoolBuilder(type, path, nullable);
    case 'int32':
      return new Int32Builder(type, path, nullable);
    case 'int64':
      return new Int64Builder(type, path, nullable);
    case 'timestamp':
      return new TimestampBuilder(type, path, nullable, lakeType.unit);
    case 'decimal':
      return new DecimalBuilder(type, path, nullable, lakeType.overflow === 'null');
    case 'list': {
      const childType = (type as unknown as { children: { type: DataType }[] }).children[0]?.type as DataType;
      const child = createColumnBuilder(childType, lakeType.element, `${path}[]`, lakeType.elementNullable);
      return new ListBuilder(type, path, nullable, child);
    }
    case 'struct': {
      const childTypes = (type as unknown as { children: { type: DataType }[] }).children;
      const children = lakeType.fields.map((f: ColumnSpec, i) =>
        createColumnBuilder(childTypes[i]?.type as DataType, f.type, `${path}.${f.name}`, f.nullable),
      );
      return new StructBuilder(
        type,
        path,
        nullable,
        lakeType.fields.map((f) => f.source),
        children,
      );
    }
  }
}
