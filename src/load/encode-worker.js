// @ts-check
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import * as parquet from 'parquet-wasm';
import { arrowTypes } from './arrow-types.js';
import { lakeWriterProperties } from './parquet-format.js';

// apache-arrow's single-file build: the same library, loaded in a few tens of milliseconds instead of the
// few hundred its module tree takes, which a run would wait for before its first commit.
const arrow = /** @type {typeof import('apache-arrow')} */ (
  createRequire(import.meta.url)('apache-arrow/Arrow.esnext.min')
);
const { Table, tableToIPC } = arrow;
const { arrowSchemaOfColumns, messageToBatch } = arrowTypes(arrow);

/**
 * The encoder worker (encoder.ts starts it): Arrow batches in, Parquet files out. Each file is a stream:
 * its batches are written as they arrive, so the main thread builds the next rows while this one
 * compresses, and parquet-wasm holds one batch and the row group in progress, never a whole file's Arrow
 * data. The file's bytes go back with their sha256; the main thread stages them (the commit protocol
 * stays there, unchanged).
 *
 * Messages in: open {file, columns (the table's ColumnSpecs)}, rows {file, batch (batch-message.js)},
 * end {file}, drop {file}, close (the worker ends).
 * Messages out: taken {file} (a batch went into the writer: room for another), done {file, bytes, rows,
 * sha256, wasmBytes}, failed {file, error, fatal}.
 *
 * Note: plain JavaScript (checked by tsc through JSDoc): a worker does not inherit the TypeScript loader,
 * and registering it here would cost start-up time and memory for a few dozen lines.
 */

if (!parentPort) throw new Error('encode-worker.js runs as a worker thread (see encoder.ts)');
const port = parentPort;

/** The end of a file's batches, in its queue. */
const END = Symbol('end');

/**
 * @typedef {import('./batch-message.js').BatchMessage} BatchMessage
 * @typedef {{ queue: (BatchMessage | typeof END)[], wake: (() => void) | undefined, dropped: boolean }} OpenFile
 */

/** @type {Map<number, OpenFile>} */
const files = new Map();

/** @typedef {{ kind: string, file: number, columns?: import('./columns.ts').ColumnSpec[], batch?: BatchMessage }} Message */

port.on('message', (/** @type {Message} */ m) => {
  // Closing the port empties the event loop, and the thread exits: files still open are given up (the
  // main thread has failed them already).
  if (m.kind === 'close') return port.close();
  if (m.kind === 'open') return open(m.file, m.columns ?? []);
  const file = files.get(m.file);
  if (!file) return;
  if (m.kind === 'rows') file.queue.push(/** @type {BatchMessage} */ (m.batch));
  else if (m.kind === 'end') file.queue.push(END);
  else if (m.kind === 'drop') {
    file.dropped = true;
    file.queue.length = 0;
    file.queue.push(END);
  }
  file.wake?.();
});

/**
 * @param {number} id
 * @param {import('./columns.ts').ColumnSpec[]} columns
 */
function open(id, columns) {
  /** @type {OpenFile} */
  const file = { queue: [], wake: undefined, dropped: false };
  files.set(id, file);
  let rows = 0;
  /** What went wrong in JavaScript, which parquet-wasm reports only as a failed cast of the stream's item. */
  /** @type {unknown} */
  let pullError;
  /** @returns {Promise<BatchMessage | typeof END>} */
  const next = async () => {
    while (file.queue.length === 0) await new Promise((resolve) => (file.wake = () => resolve(undefined)));
    file.wake = undefined;
    return /** @type {BatchMessage | typeof END} */ (file.queue.shift());
  };

  const encode = async () => {
    const schema = arrowSchemaOfColumns(columns);
    // highWaterMark 0: a batch enters wasm memory only when the writer asks for it.
    const input = new ReadableStream(
      {
        async pull(controller) {
          const item = await next();
          if (item === END) return controller.close();
          try {
            const batch = messageToBatch(schema, item);
            const table = parquet.Table.fromIPCStream(tableToIPC(new Table([batch]), 'stream'));
            try {
              for (const wasmBatch of table.recordBatches()) controller.enqueue(wasmBatch);
            } finally {
              table.free();
            }
            rows += batch.numRows;
          } catch (error) {
            pullError = error;
            throw error;
          }
          port.postMessage({ kind: 'taken', file: id });
        },
      },
      { highWaterMark: 0 },
    );
    const output = await parquet.transformParquetStream(input, lakeWriterProperties(parquet));
    /** @type {Uint8Array[]} */
    const chunks = [];
    let size = 0;
    const hash = createHash('sha256');
    for await (const chunk of /** @type {AsyncIterable<Uint8Array>} */ (/** @type {unknown} */ (output))) {
      chunks.push(chunk);
      size += chunk.byteLength;
      hash.update(chunk);
    }
    // One ArrayBuffer of exactly the file: it is transferred to the main thread, not copied again.
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    return { bytes, sha256: hash.digest('hex') };
  };

  encode().then(
    ({ bytes, sha256 }) => {
      files.delete(id);
      if (file.dropped) return;
      const wasmBytes = parquet.wasmMemory().buffer.byteLength;
      port.postMessage({ kind: 'done', file: id, bytes, rows, sha256, wasmBytes }, [bytes.buffer]);
    },
    (/** @type {unknown} */ failure) => {
      const error = pullError ?? failure;
      files.delete(id);
      // A trap (a Rust panic, memory exhausted) leaves the wasm instance unusable: the worker must go,
      // which the main thread is told even for a file it dropped.
      const fatal = error instanceof Error && error.name === 'RuntimeError';
      if (file.dropped && !fatal) return;
      const e = error instanceof Error ? error : new Error(String(error));
      port.postMessage({
        kind: 'failed',
        file: id,
        error: { name: e.name, message: e.message, stack: e.stack },
        fatal,
      });
    },
  );
}
