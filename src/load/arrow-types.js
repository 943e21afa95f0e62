// @ts-check

/**
 * The Arrow side of the lake's types: the Arrow type of each lake type, a table's Arrow schema, and a
 * built batch (batch-message.js) as an Arrow RecordBatch, over a given build of apache-arrow. The encoder
 * worker passes the library's single-file bundle (it loads in a tenth of the time of its module tree);
 * arrow.ts passes the modules the rest of the code uses. Classes from two builds do not mix, so each
 * caller keeps to its own.
 *
 * Note: plain JavaScript (checked by tsc through JSDoc): the encoder worker loads it without the
 * TypeScript loader.
 *
 * @typedef {import('./columns.ts').ColumnSpec} ColumnSpec
 * @typedef {import('./columns.ts').LakeType} LakeType
 * @typedef {import('./batch-message.js').ColumnsMessage} ColumnsMessage
 * @typedef {import('./batch-message.js').DataMessage} DataMessage
 * @typedef {typeof import('apache-arrow')} Arrow
 */

/** @param {Arrow} arrow */
export function arrowTypes(arrow) {
  const {
    Bool,
    Data,
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
  } = arrow;

  /**
   * The Arrow type that stores a lake type. Every timestamp is milliseconds UTC: DuckDB reads TIMESTAMPTZ.
   * @param {LakeType} type
   * @returns {import('apache-arrow').DataType}
   */
  function arrowTypeOf(type) {
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

  /** @param {ColumnSpec} column */
  function fieldOf(column) {
    return new Field(column.name, arrowTypeOf(column.type), column.nullable);
  }

  /**
   * The Arrow schema of a table whose columns are these.
   * @param {readonly ColumnSpec[]} columns
   */
  function arrowSchemaOfColumns(columns) {
    return new Schema(columns.map(fieldOf));
  }

  /**
   * A built batch as an Arrow RecordBatch of `schema` (the same buffers, not copied).
   * @param {import('apache-arrow').Schema} schema
   * @param {ColumnsMessage} message
   * @returns {import('apache-arrow').RecordBatch}
   */
  function messageToBatch(schema, message) {
    const children = schema.fields.map((field, i) => dataOf(field.type, columnOf(message.columns, i)));
    const data = makeData({
      type: new Struct(schema.fields),
      length: message.length,
      nullCount: 0,
      children,
    });
    return new RecordBatch(schema, data);
  }

  /**
   * @param {import('apache-arrow').DataType} type
   * @param {DataMessage} message
   * @returns {import('apache-arrow').Data}
   */
  function dataOf(type, message) {
    /** @type {import('apache-arrow').Field[]} */
    const fields = type.children ?? [];
    const children = fields.map((field, i) => dataOf(field.type, columnOf(message.children, i)));
    // As makeData does: no validity bitmap (nothing is NULL) is an empty one.
    return new Data(
      type,
      0,
      message.length,
      message.nullCount,
      [message.valueOffsets, message.values, message.nullBitmap ?? EMPTY],
      children,
    );
  }

  const EMPTY = new Uint8Array(0);

  /**
   * @param {DataMessage[]} columns
   * @param {number} i
   */
  function columnOf(columns, i) {
    const found = columns[i];
    if (!found) throw new Error(`messageToBatch: the batch has no column ${i} of the schema`);
    return found;
  }

  return { arrowTypeOf, arrowSchemaOfColumns, messageToBatch };
}
