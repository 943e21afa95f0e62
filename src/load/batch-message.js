// @ts-check

/**
 * A batch of rows as its columns' buffers, laid out as Arrow lays them but without Arrow's classes: what
 * the column builders finish, and what crosses to the encoder worker (a structured clone whose buffers
 * are moved, not copied). Arrow's RecordBatch is made from it where a file is encoded (arrow-types.js).
 *
 * Note: plain JavaScript (checked by tsc through JSDoc): the encoder worker loads it without the
 * TypeScript loader.
 */

/**
 * @typedef {Int32Array | Uint8Array | Uint32Array | Float64Array | BigInt64Array} Buffer
 * @typedef {{
 *   length: number,
 *   nullCount: number,
 *   valueOffsets: Int32Array | undefined,
 *   values: Buffer | undefined,
 *   nullBitmap: Uint8Array | undefined,
 *   children: DataMessage[],
 * }} DataMessage One column (or a struct's field, a list's elements): Arrow's offsets, values and
 *   validity bitmap (undefined when nothing is NULL), and the children of a nested type.
 * @typedef {{ length: number, columns: DataMessage[] }} ColumnsMessage A batch's columns as the column
 *   builders finish them: views into buffers of their own.
 * @typedef {ColumnsMessage & { packed: ArrayBuffer }} BatchMessage A batch as it crosses to the encoder
 *   (packBatch): `packed` is the one buffer every view of the batch lies in, and posting the batch with
 *   `[packed]` as its transfer list moves that buffer instead of copying it.
 */

/** Views start at multiples of this: the widest element (Float64, BigInt64) needs 8. */
const ALIGN = 8;

/**
 * The batch with all its buffers copied into one ArrayBuffer, which is what crosses to the encoder: one
 * allocation made and freed per batch instead of one per column buffer (dozens for a wide table), so the
 * memory handed between threads comes and goes in large, uniform blocks.
 * @param {ColumnsMessage} message
 * @returns {BatchMessage}
 */
export function packBatch(message) {
  let size = 0;
  /** @param {Buffer | undefined} view */
  const measure = (view) => {
    if (view) size += Math.ceil(view.byteLength / ALIGN) * ALIGN;
  };
  /** @param {DataMessage} data */
  const visitSizes = (data) => {
    measure(data.valueOffsets);
    measure(data.values);
    measure(data.nullBitmap);
    for (const child of data.children) visitSizes(child);
  };
  for (const column of message.columns) visitSizes(column);

  const packed = new ArrayBuffer(size);
  const bytes = new Uint8Array(packed);
  let at = 0;
  /**
   * @template {Buffer} T
   * @param {T | undefined} view
   * @returns {T | undefined}
   */
  const copy = (view) => {
    if (!view) return undefined;
    bytes.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength), at);
    const Kind = /** @type {new (buffer: ArrayBuffer, offset: number, length: number) => T} */ (
      view.constructor
    );
    const moved = new Kind(packed, at, view.length);
    at += Math.ceil(view.byteLength / ALIGN) * ALIGN;
    return moved;
  };
  /**
   * @param {DataMessage} data
   * @returns {DataMessage}
   */
  const move = (data) => ({
    length: data.length,
    nullCount: data.nullCount,
    valueOffsets: copy(data.valueOffsets),
    values: copy(data.values),
    nullBitmap: copy(data.nullBitmap),
    children: data.children.map(move),
  });
  return { length: message.length, columns: message.columns.map(move), packed };
}
