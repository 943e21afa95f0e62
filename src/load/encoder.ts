import { Worker } from 'node:worker_threads';
import type { BatchMessage } from './batch-message.js';
import type { ColumnSpec } from './columns.ts';
import type { WrittenFile } from './parquet.ts';

/**
 * Where staged files are encoded to Parquet. A flush builds batches of columns on the main thread and
 * pushes them, a few thousand rows at a time, into the file being encoded; `finish` hands back the
 * file's bytes, which the flush stages as before (the commit protocol does not change with the encoder).
 *
 * The default encoder is a worker thread, so fetching, parsing and checking records on the main thread
 * overlap with compression on the other core. The inline encoder does the same work on the calling
 * thread, in one write per file, as the lake did before the worker: tests compare the two lakes.
 */
export interface ParquetEncoder {
  /** Starts a file whose columns are these (a table's, in order: lakeColumnsOf). */
  open(columns: readonly ColumnSpec[]): EncodingFile;
  /** Ends the encoder; files still open fail. */
  close(): Promise<void>;
}

export interface EncodingFile {
  /**
   * Adds rows to the file; resolves once the encoder has room for more (it holds a bounded amount). The
   * batch's buffers are given away: it must not be used after.
   */
  push(batch: BatchMessage): Promise<void>;
  /** Ends the file: its bytes, and what the commit record says of it. */
  finish(): Promise<EncodedFile>;
  /** Gives the file up (its flush was aborted or failed). */
  drop(): void;
}

export interface EncodedFile {
  bytes: Uint8Array;
  written: WrittenFile;
}

/** The Parquet encoder failed: the file it was writing is lost, its flush fails (nothing is committed). */
export class ParquetEncodeError extends Error {
  override name = 'ParquetEncodeError';
}

/** Batches a file may have on their way to the worker before `push` waits: one being written, one next. */
const IN_FLIGHT_BATCHES = 2;
/**
 * parquet-wasm's memory only grows: a worker whose memory grew past this (a file of wide rows) is ended
 * once it has no file open, and the next file starts a fresh one.
 */
const RECYCLE_WASM_BYTES = 64 * 1024 * 1024;

interface OpenFile {
  inFlight: number;
  rows: number;
  failure?: Error;
  room?: { resolve(): void; reject(error: Error): void };
  done?: { resolve(file: EncodedFile): void; reject(error: Error): void };
}

type WorkerMessage =
  | { kind: 'taken'; file: number }
  | { kind: 'done'; file: number; bytes: Uint8Array; rows: number; sha256: string; wasmBytes: number }
  | {
      kind: 'failed';
      file: number;
      error: { name: string; message: string; stack?: string };
      fatal: boolean;
    };

/** A worker asked to end exits by itself within this, or is terminated. */
const EXIT_GRACE_MS = 5_000;

/**
 * Ends a worker that should have no file in progress: it is asked to close its port and exits by itself
 * once its event loop is empty. terminate() is the fallback: stopping a thread that runs WebAssembly from
 * outside can crash the whole process in rare cases (nodejs/node#47748), and the encoder's is parquet-wasm.
 */
function endWorker(w: Worker): Promise<void> {
  // Held until it has exited: an idle worker is unref'd, and a caller awaiting its end must not see the
  // process exit around it.
  w.ref();
  return new Promise((resolve) => {
    const timer = setTimeout(() => void w.terminate().then(() => resolve(), resolve), EXIT_GRACE_MS);
    timer.unref();
    w.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    w.postMessage({ kind: 'close' });
  });
}

/**
 * Encodes on a worker thread (src/load/encode-worker.js), started with the first file. `recycleWasmBytes`
 * is for tests (RECYCLE_WASM_BYTES by default; 0 ends the worker after every file).
 */
export function createWorkerEncoder(options: { recycleWasmBytes?: number } = {}): ParquetEncoder {
  const recycleWasmBytes = options.recycleWasmBytes ?? RECYCLE_WASM_BYTES;
  let worker: Worker | undefined;
  let closed = false;
  let nextId = 1;
  const files = new Map<number, OpenFile>();

  const fail = (file: OpenFile, error: Error) => {
    file.failure ??= error;
    file.room?.reject(file.failure);
    file.done?.reject(file.failure);
    file.room = undefined;
    file.done = undefined;
  };

  /** Every open file fails with `error`, and the worker is gone: the next file starts another. */
  const lose = (lost: Worker, error: Error) => {
    if (worker !== lost) return;
    worker = undefined;
    for (const file of files.values()) fail(file, error);
    files.clear();
    void lost.terminate();
  };

  // An idle worker must not keep the process alive (a run that forgot to close its lake still exits).
  const settle = (w: Worker, wasmBytes = 0) => {
    if (files.size > 0) return;
    if (wasmBytes > recycleWasmBytes) {
      worker = undefined;
      void endWorker(w);
    } else w.unref();
  };

  const onMessage = (w: Worker, m: WorkerMessage) => {
    const file = files.get(m.file);
    if (m.kind === 'failed' && m.fatal) {
      const error = new ParquetEncodeError(`the Parquet encoder worker stopped: ${m.error.message}`);
      return lose(w, error);
    }
    if (!file) return;
    if (m.kind === 'taken') {
      file.inFlight--;
      if (file.room && file.inFlight <= IN_FLIGHT_BATCHES) {
        file.room.resolve();
        file.room = undefined;
      }
      return;
    }
    files.delete(m.file);
    if (m.kind === 'done') {
      const written = { rows: m.rows, bytes: m.bytes.byteLength, sha256: m.sha256 };
      file.done?.resolve({ bytes: m.bytes, written });
      file.done = undefined;
    } else {
      const cause = Object.assign(new Error(m.error.message), { name: m.error.name, stack: m.error.stack });
      fail(file, new ParquetEncodeError(`encoding a Parquet file failed: ${m.error.message}`, { cause }));
    }
    settle(w, m.kind === 'done' ? m.wasmBytes : 0);
  };

  const start = () => {
    // Note: no execArgv: the worker is plain JavaScript and needs neither the TypeScript loader nor the
    // flags of the process (a --cpu-prof would write a profile per worker).
    const w = new Worker(new URL('./encode-worker.js', import.meta.url), {
      execArgv: [],
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    w.on('message', (m: WorkerMessage) => onMessage(w, m));
    w.on('error', (error) =>
      lose(
        w,
        new ParquetEncodeError(`the Parquet encoder worker failed: ${error.message}`, { cause: error }),
      ),
    );
    w.on('exit', (code) =>
      lose(w, new ParquetEncodeError(`the Parquet encoder worker exited unexpectedly (code ${code})`)),
    );
    return w;
  };

  return {
    open(columns) {
      if (closed) throw new ParquetEncodeError('the Parquet encoder is closed');
      worker ??= start();
      const w = worker;
      w.ref();
      const id = nextId++;
      const file: OpenFile = { inFlight: 0, rows: 0 };
      files.set(id, file);
      w.postMessage({ kind: 'open', file: id, columns });
      return {
        async push(batch) {
          if (file.failure) throw file.failure;
          w.postMessage({ kind: 'rows', file: id, batch }, [batch.packed]);
          file.inFlight++;
          file.rows += batch.length;
          if (file.inFlight > IN_FLIGHT_BATCHES)
            await new Promise<void>((resolve, reject) => {
              file.room = { resolve, reject };
            });
        },
        finish() {
          if (file.failure) return Promise.reject(file.failure);
          return new Promise<EncodedFile>((resolve, reject) => {
            file.done = { resolve, reject };
            w.postMessage({ kind: 'end', file: id });
          });
        },
        drop() {
          if (!files.delete(id)) return;
          fail(file, new ParquetEncodeError('the file was dropped'));
          w.postMessage({ kind: 'drop', file: id });
          settle(w);
        },
      };
    },

    async close() {
      closed = true;
      const w = worker;
      worker = undefined;
      for (const file of files.values()) fail(file, new ParquetEncodeError('the Parquet encoder was closed'));
      files.clear();
      if (w) await endWorker(w);
    },
  };
}

/** Encodes on the calling thread, all of a file in one write when it is finished. */
export function createInlineEncoder(): ParquetEncoder {
  return {
    open(columns) {
      const batches: BatchMessage[] = [];
      return {
        push: async (batch) => {
          batches.push(batch);
        },
        finish: async () => {
          // Loaded only here: a lake that encodes on the worker never loads Arrow or parquet-wasm on this
          // thread.
          const [{ arrowSchemaOfColumns, messageToBatch }, { encodeParquetFile }] = await Promise.all([
            import('./arrow.ts'),
            import('./parquet.ts'),
          ]);
          const schema = arrowSchemaOfColumns(columns);
          return encodeParquetFile(batches.map((batch) => messageToBatch(schema, batch)));
        },
        drop: () => {
          batches.length = 0;
        },
      };
    },
    close: async () => {},
  };
}
