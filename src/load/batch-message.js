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
 * @typedef {{ length: number, columns: DataMessage[] }} BatchMessage
 */

/**
 * The buffers a message can give away when it is posted: those its views cover whole. A view into a
 * larger buffer, or an empty one, is copied by the clone instead.
 * @param {BatchMessage} message
 * @returns {ArrayBuffer[]}
 */
export function transferablesOf(message) {
  /** @type {Set<ArrayBuffer>} */
  const buffers = new Set();
  /** @param {Buffer | undefined} view */
  const take = (view) => {
    if (view && view.byteLength > 0 && view.byteOffset === 0 && view.byteLength === view.buffer.byteLength)
      buffers.add(/** @type {ArrayBuffer} */ (view.buffer));
  };
  /** @param {DataMessage} data */
  const visit = (data) => {
    take(data.valueOffsets);
    take(data.values);
    take(data.nullBitmap);
    for (const child of data.children) visit(child);
  };
  for (const column of message.columns) visit(column);
  return [...buffers];
}
