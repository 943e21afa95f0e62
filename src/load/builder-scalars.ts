import { type Data, type DataType, makeData } from 'apache-arrow';
import { Base, Bitmap, ensure, type Typed } from './builder-base.ts';
import { fitsDecimal38, writeDecimal38 } from './decimal.ts';

/** Builders of the scalar columns: strings and JSON text, numbers, times, decimals, booleans. */

export class Utf8Builder extends Base {
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

export class Float64Builder extends FixedBuilder<Float64Array> {
  constructor(type: DataType, path: string, nullable: boolean) {
    super(type, path, nullable, (n) => new Float64Array(n));
  }
  protected write(index: number, value: unknown): void {
    if (typeof value !== 'number') this.fail(value, 'expected a number');
    this.reserve(index);
    this.values[index] = value;
  }
}

export class Int32Builder extends FixedBuilder<Int32Array> {
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

export class Int64Builder extends FixedBuilder<BigInt64Array> {
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

export class TimestampBuilder extends FixedBuilder<BigInt64Array> {
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

export class DecimalBuilder extends FixedBuilder<Uint32Array> {
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

export class BoolBuilder extends Base {
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
