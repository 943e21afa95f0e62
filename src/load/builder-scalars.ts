import { Base, Bitmap, type ColumnData, ensure, type Typed } from './builder-base.ts';
import { fitsDecimal38, writeDecimal38 } from './decimal.ts';

/** Builders of the scalar columns: strings and JSON text, numbers, times, decimals, booleans. */

export class Utf8Builder extends Base {
  private offsets = new Int32Array(65);
  private bytes = new Uint8Array(1024);
  private readonly encoder = new TextEncoder();

  constructor(
    path: string,
    nullable: boolean,
    private readonly asJson: boolean,
  ) {
    super(path, nullable);
  }

  write(index: number, value: unknown): void {
    let text: string;
    if (this.asJson) text = JSON.stringify(value);
    else if (typeof value === 'string') text = value;
    else this.fail(value, 'expected a string');
    const start = this.offsets[index] ?? 0;
    const length = text.length;
    // UTF-8 needs at most 3 bytes per UTF-16 unit.
    if (start + length * 3 > this.bytes.length) this.bytes = ensure(this.bytes, start + length * 3);
    const bytes = this.bytes;
    // Hashes, addresses, ids and names are ASCII: copied byte by byte, which is cheaper than a call into
    // the encoder for strings this short; the encoder takes over from the first other character.
    let i = 0;
    for (; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) break;
      bytes[start + i] = code;
    }
    let end = start + i;
    if (i < length) end += this.encoder.encodeInto(text.slice(i), bytes.subarray(end)).written;
    // Note: Utf8 offsets are int32; BATCH_BYTES cuts batches long before this.
    if (end > 0x7fffffff) this.fail(`${text.slice(0, 20)}…`, 'more than 2 GiB of text in one batch');
    if (index + 2 > this.offsets.length) this.offsets = ensure(this.offsets, index + 2);
    this.offsets[index + 1] = end;
  }

  protected writeNull(index: number): void {
    if (index + 2 > this.offsets.length) this.offsets = ensure(this.offsets, index + 2);
    this.offsets[index + 1] = this.offsets[index] ?? 0;
  }

  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): ColumnData {
    const end = this.offsets[length] ?? 0;
    return {
      length,
      nullCount,
      nullBitmap,
      valueOffsets: this.offsets.slice(0, length + 1),
      values: this.bytes.slice(0, end),
      children: [],
    };
  }

  byteLength(): number {
    return (this.offsets[this.length] ?? 0) + 4 * this.length;
  }
}

/** Fixed-width columns: one typed array, `stride` elements per value. */
abstract class FixedBuilder<T extends Typed> extends Base {
  protected values: T;

  constructor(
    path: string,
    nullable: boolean,
    make: (n: number) => T,
    private readonly stride = 1,
  ) {
    super(path, nullable);
    this.values = make(64 * stride);
  }

  protected reserve(index: number): void {
    const need = (index + 1) * this.stride;
    if (need > this.values.length) this.values = ensure(this.values, need);
  }

  protected writeNull(index: number): void {
    this.reserve(index);
    const zero = this.values instanceof BigInt64Array ? 0n : 0;
    this.values.fill(zero as never, index * this.stride, (index + 1) * this.stride);
  }

  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): ColumnData {
    return {
      length,
      nullCount,
      nullBitmap,
      valueOffsets: undefined,
      values: this.values.slice(0, length * this.stride),
      children: [],
    };
  }

  byteLength(): number {
    return this.length * this.stride * this.values.BYTES_PER_ELEMENT;
  }
}

export class Float64Builder extends FixedBuilder<Float64Array> {
  constructor(path: string, nullable: boolean) {
    super(path, nullable, (n) => new Float64Array(n));
  }
  write(index: number, value: unknown): void {
    if (typeof value !== 'number') this.fail(value, 'expected a number');
    this.reserve(index);
    this.values[index] = value;
  }
}

export class Int32Builder extends FixedBuilder<Int32Array> {
  constructor(path: string, nullable: boolean) {
    super(path, nullable, (n) => new Int32Array(n));
  }
  write(index: number, value: unknown): void {
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

/**
 * 64-bit columns written as two 32-bit words when the value is a safe integer (nearly always), so the hot
 * path allocates no BigInt; the words alias the BigInt64Array Arrow takes (little-endian, as Arrow is).
 */
abstract class Int64Words extends FixedBuilder<BigInt64Array> {
  private words: Uint32Array;

  constructor(path: string, nullable: boolean) {
    super(path, nullable, (n) => new BigInt64Array(n));
    this.words = new Uint32Array(this.values.buffer);
  }

  protected override reserve(index: number): void {
    super.reserve(index);
    if (this.words.buffer !== this.values.buffer) this.words = new Uint32Array(this.values.buffer);
  }

  /** `n` must be a safe integer. */
  protected writeSafe(index: number, n: number): void {
    this.reserve(index);
    const high = Math.floor(n / TWO_32);
    this.words[2 * index] = n - high * TWO_32;
    // A negative high word wraps to its two's complement, as Uint32Array stores any number.
    this.words[2 * index + 1] = high;
  }

  protected writeBig(index: number, n: bigint): void {
    this.reserve(index);
    this.values[index] = n;
  }
}

const TWO_32 = 4294967296;
/** Up to 15 digits a decimal string is exactly a double. */
const SAFE_DIGITS = /^-?\d{1,15}$/;

export class Int64Builder extends Int64Words {
  write(index: number, value: unknown): void {
    if (typeof value === 'number' && Number.isSafeInteger(value)) this.writeSafe(index, value);
    else if (typeof value === 'string' && SAFE_DIGITS.test(value)) this.writeSafe(index, Number(value));
    else this.writeBig(index, this.int64Of(value));
  }

  private int64Of(value: unknown): bigint {
    const n = toBigInt(value);
    if (n === undefined || n < INT64_MIN || n > INT64_MAX)
      this.fail(value, 'expected an int64 (number or string)');
    return n;
  }
}

export class TimestampBuilder extends Int64Words {
  private readonly factor: bigint;
  private readonly multiplier: number;
  constructor(path: string, nullable: boolean, unit: 's' | 'ms') {
    super(path, nullable);
    this.factor = unit === 's' ? 1000n : 1n;
    this.multiplier = unit === 's' ? 1000 : 1;
  }
  write(index: number, value: unknown): void {
    // The common case: Unix seconds (or ms) as a number, whose milliseconds are still exact.
    const safe = typeof value === 'number' && Number.isSafeInteger(value);
    if (safe && Number.isSafeInteger(value * this.multiplier)) {
      this.writeSafe(index, value * this.multiplier);
      return;
    }
    let ms: bigint | undefined;
    if (value instanceof Date) ms = Number.isNaN(value.getTime()) ? undefined : BigInt(value.getTime());
    else {
      const n = toBigInt(value);
      ms = n === undefined ? undefined : n * this.factor;
    }
    if (ms === undefined || ms < INT64_MIN || ms > INT64_MAX)
      this.fail(value, 'expected an integer Unix time');
    this.writeBig(index, ms);
  }
}

export class DecimalBuilder extends FixedBuilder<Uint32Array> {
  constructor(
    path: string,
    nullable: boolean,
    private readonly overflowToNull: boolean,
  ) {
    super(path, nullable, (n) => new Uint32Array(n), 4);
  }

  override append(value: unknown): void {
    if (this.overflows(value)) this.appendNull();
    else super.append(value);
  }

  /** A bigAmount beyond 38 digits is NULL here; its exact string lives in the sibling column. */
  overflows(value: unknown): boolean {
    return this.overflowToNull && typeof value === 'string' && value.length >= 39 && /^\d+$/.test(value);
  }

  write(index: number, value: unknown): void {
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
  write(index: number, value: unknown): void {
    if (typeof value !== 'boolean') this.fail(value, 'expected a boolean');
    this.values.set(index, value);
  }
  protected writeNull(index: number): void {
    this.values.set(index, false);
  }
  protected take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): ColumnData {
    return {
      length,
      nullCount,
      nullBitmap,
      valueOffsets: undefined,
      values: this.values.take(length),
      children: [],
    };
  }
  byteLength(): number {
    return this.length >> 3;
  }
}
