// @ts-check

/**
 * How the lake's Parquet files are written: zstd, one row group per staged file (a file holds at most
 * BATCH_ROWS rows), created by avalake. One definition for the encoder worker and the main thread.
 *
 * Note: plain JavaScript (checked by tsc through JSDoc) because the encoder worker (encode-worker.js) loads
 * it without the TypeScript loader.
 */

/** One row group per batch-sized write: readers prune by row-group statistics. */
export const ROW_GROUP_ROWS = 50_000;

/**
 * The writer properties of every lake file. They are consumed (freed) by the write that takes them, so
 * each write builds its own.
 * @param {typeof import('parquet-wasm')} parquet
 */
export function lakeWriterProperties(parquet) {
  return new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setMaxRowGroupSize(ROW_GROUP_ROWS)
    .setCreatedBy('avalake')
    .build();
}
