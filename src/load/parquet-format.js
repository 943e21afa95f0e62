// @ts-check

/**
 * How the lake's Parquet files are written: zstd, one row group per staged file (a file holds at most
 * BATCH_ROWS rows), created by avalake. One definition for the encoder worker and the main thread.
 *
 * The dictionary page is held to 256 KiB: a column of unique values (hashes, ids) gives up its dictionary
 * early instead of filling one it then throws away. Measured on 50,000 real rows written as the encoder
 * worker writes them, on 2026-11-25: ERC-20 transfers 417 -> 405 ms, 4.04 -> 3.94 MB, wasm memory
 * 43 -> 35 MB; EVM blocks 344 -> 310 ms, 3.92 -> 3.81 MB, 40 -> 34 MB. Data pages of format version 2
 * were tried too: 5 % smaller files, but slower on this path and two to three times the wasm memory
 * (61 to 91 MB), which never shrinks.
 *
 * Note: plain JavaScript (checked by tsc through JSDoc) because the encoder worker (encode-worker.js) loads
 * it without the TypeScript loader.
 */

/** One row group per batch-sized write: readers prune by row-group statistics. */
export const ROW_GROUP_ROWS = 50_000;
/** A column whose dictionary page grows beyond this is written plain for the rest of the row group. */
const DICTIONARY_PAGE_BYTES = 256 * 1024;

/**
 * The writer properties of every lake file. They are consumed (freed) by the write that takes them, so
 * each write builds its own.
 * @param {typeof import('parquet-wasm')} parquet
 */
export function lakeWriterProperties(parquet) {
  return new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setDictionaryPageSizeLimit(DICTIONARY_PAGE_BYTES)
    .setMaxRowGroupSize(ROW_GROUP_ROWS)
    .setCreatedBy('avalake')
    .build();
}
