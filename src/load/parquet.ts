import { type RecordBatch, Table, tableToIPC } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { sha256Hex, writeDurable } from './durable.ts';
import { lakeWriterProperties } from './parquet-format.js';

/** What a written Parquet file is, as the commit record names it. */
export interface WrittenFile {
  rows: number;
  bytes: number;
  sha256: string;
}

/**
 * Encodes batches as one zstd Parquet file in memory. parquet-wasm's linear memory never shrinks, so callers
 * pass at most a few tens of thousands of rows per call (BATCH_ROWS); larger runs become more files.
 */
export function encodeParquet(batches: RecordBatch | RecordBatch[]): Uint8Array {
  const list = Array.isArray(batches) ? batches : [batches];
  if (list.length === 0) throw new Error('encodeParquet: no batches');
  const ipc = tableToIPC(new Table(list), 'stream');
  // Both arguments are consumed (freed) by writeParquet.
  return parquet.writeParquet(parquet.Table.fromIPCStream(ipc), lakeWriterProperties(parquet));
}

/** Encodes batches as a Parquet file's bytes, with what the commit record says of that file. */
export function encodeParquetFile(batches: RecordBatch | RecordBatch[]): {
  bytes: Uint8Array;
  written: WrittenFile;
} {
  const list = Array.isArray(batches) ? batches : [batches];
  const bytes = encodeParquet(list);
  const rows = list.reduce((n, b) => n + b.numRows, 0);
  return { bytes, written: { rows, bytes: bytes.byteLength, sha256: sha256Hex(bytes) } };
}

/** Writes a new Parquet file at `path` (which must not exist) and fsyncs it; the caller fsyncs the folder. */
export async function writeParquetFile(
  path: string,
  batches: RecordBatch | RecordBatch[],
): Promise<WrittenFile> {
  const { bytes, written } = encodeParquetFile(batches);
  await writeDurable(path, bytes);
  return written;
}
