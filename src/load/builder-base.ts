import type { DataMessage } from './batch-message.js';
import { RecordTypeError } from './errors.ts';

/**
 * Column builders that write straight into typed buffers (no per-value Arrow objects). Buffers double as
 * they fill and are reused after `finish()`, so a long run holds one batch's worth of memory per column.
 * What they finish is a column's buffers laid out as Arrow lays them (batch-message.js): Arrow's classes
 * are built from them where a file is encoded, so the thread that fetches never loads Arrow.
 */

/** A finished column: Arrow's buffers for it, and its children's. */
export type ColumnData = DataMessage;

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
  /** The column so far; the builder starts over empty. */
  finish(): ColumnData;
}

export type Typed = Uint8Array | Int32Array | Uint32Array | Float64Array | BigInt64Array;

export function ensure<T extends Typed>(array: T, need: number): T {
  if (need <= array.length) return array;
  let capacity = Math.max(64, array.length * 2);
  while (capacity < need) capacity *= 2;
  const next = new (array.constructor as new (n: number) => T)(capacity);
  next.set(array as never);
  return next;
}

/** A bitmap whose every bit is written (set or cleared), so reused bytes never leak stale bits. */
export class Bitmap {
  bytes = new Uint8Array(64);
  zeros = 0;

  set(index: number, bit: boolean): void {
    const at = index >> 3;
    if (at >= this.bytes.length) this.bytes = ensure(this.bytes, at + 1);
    const mask = 1 << (index & 7);
    if (bit) this.bytes[at] = (this.bytes[at] as number) | mask;
    else {
      this.bytes[at] = (this.bytes[at] as number) & ~mask;
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

export abstract class Base implements ColumnBuilder {
  length = 0;
  /** Which slots hold a value; public with `write` for the compiled row appends (row-append.ts). */
  readonly validity = new Bitmap();

  constructor(
    readonly path: string,
    readonly nullable: boolean,
  ) {}

  append(value: unknown): void {
    if (value === null || value === undefined) {
      if (!this.nullable) this.required(value);
      this.appendNull();
      return;
    }
    this.write(this.length, value);
    this.validity.set(this.length, true);
    this.length++;
  }

  /** A NULL or missing value where the column requires one. */
  required(value: unknown): never {
    throw new RecordTypeError(this.path, value, 'a value is required');
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

  finish(): ColumnData {
    const length = this.length;
    const nullCount = this.validity.zeros;
    const nullBitmap = this.validity.take(length);
    const data = this.take(length, nullCount, nullCount > 0 ? nullBitmap : undefined);
    this.length = 0;
    return data;
  }

  /** Writes a non-null value at `index`; throws RecordTypeError before changing anything visible. */
  abstract write(index: number, value: unknown): void;
  protected abstract writeNull(index: number): void;
  protected truncateValues(_length: number): void {}
  protected abstract take(length: number, nullCount: number, nullBitmap: Uint8Array | undefined): ColumnData;
  abstract byteLength(): number;

  fail(value: unknown, reason: string): never {
    throw new RecordTypeError(this.path, value, reason);
  }
}
