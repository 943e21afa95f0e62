import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BATCH_ROWS, createBatchBuilder } from '../../src/load/batch-builder.ts';
import type { BatchMessage } from '../../src/load/batch-message.js';
import { lakeColumnsOf } from '../../src/load/columns.ts';
import { createInlineEncoder, createWorkerEncoder, ParquetEncodeError } from '../../src/load/encoder.ts';
import { type Lake, openLake } from '../../src/load/lake.ts';
import { columnTypes, query } from './duck.ts';
import { record, rows } from './fixtures/rich-records.ts';

/**
 * The encoder worker (encoder.ts, encode-worker.js) writes what the lake wrote before it, on the calling
 * thread: the same rows with the same types, over several files and batches. A file it cannot encode
 * fails its flush alone, and a closed encoder fails what is still open.
 */

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** More rows than a staged file holds, so a flush writes two files of several batches each. */
const ROWS = BATCH_ROWS + 7_321;

/** Partitions of a page or two, as most of a pipeline's are: each flush writes one small file. */
const SMALL_PARTITIONS = [1, 3, 100, 250];

/** A lake written by `write` through the worker encoder or the inline one; its Parquet files to read. */
async function writtenLake(
  encoder: 'worker' | 'inline',
  write: (lake: Lake) => Promise<void>,
): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), `avalake-encoder-${encoder}-`));
  dirs.push(dataDir);
  const lake = await openLake({
    dataDir,
    runId: 'run-1',
    ...(encoder === 'inline' ? { encoder: createInlineEncoder() } : {}),
  });
  try {
    await write(lake);
  } finally {
    await lake.close();
  }
  return `read_parquet('${dataDir}/lake/rich/**/*.parquet', hive_partitioning = false)`;
}

/** One partition of ROWS rows, appended a page of 1,000 at a time: two files of several batches each. */
const writeLarge = (encoder: 'worker' | 'inline') =>
  writtenLake(encoder, async (lake) => {
    const flush = lake.begin({ stream: 'rich', partition: { network: 'mainnet' }, schema: record });
    const all = Array.from({ length: ROWS }, (_, i) => {
      const row = record.parse(rows[i % rows.length]);
      return { ...row, txHash: `${row.txHash}-${i}` };
    });
    for (let i = 0; i < all.length; i += 1_000)
      await flush.append(all.slice(i, i + 1_000), 1_700_000_000_000);
    const committed = await flush.commit({ done: true });
    expect(committed.files.filter((f) => f.path.includes('/part-'))).toHaveLength(2);
  });

/** A few partitions of `sizes` rows each, every one a single small file. */
const writeSmallFiles = (encoder: 'worker' | 'inline', sizes: readonly number[]) =>
  writtenLake(encoder, async (lake) => {
    for (const [p, size] of sizes.entries()) {
      const flush = lake.begin({ stream: 'rich', partition: { network: `net-${p}` }, schema: record });
      const some = Array.from({ length: size }, (_, i) => {
        const row = record.parse(rows[(i + p) % rows.length]);
        return { ...row, txHash: `${row.txHash}-${p}-${i}` };
      });
      await flush.append(some, 1_700_000_000_000);
      const committed = await flush.commit({ done: true });
      expect(committed.files.filter((f) => f.path.includes('/part-'))).toHaveLength(1);
    }
  });

/** The two lakes hold the same `rows` rows, with the same column types. */
async function expectSameLake(worker: string, inline: string, rows: number) {
  expect(await columnTypes(worker)).toEqual(await columnTypes(inline));
  const [diff] = await query(
    `select (select count(*) from ${worker})::integer as rows,
            (select count(*) from (from ${worker} except all from ${inline}))::integer as only_worker,
            (select count(*) from (from ${inline} except all from ${worker}))::integer as only_inline`,
  );
  expect(diff).toEqual({ rows, only_worker: 0, only_inline: 0 });
}

describe('the Parquet encoder', () => {
  it('on its worker thread writes the rows and types the calling thread writes', async () => {
    await expectSameLake(await writeLarge('worker'), await writeLarge('inline'), ROWS);
  }, 120_000);

  it('writes small files, one per partition, as the calling thread writes them', async () => {
    const worker = await writeSmallFiles('worker', SMALL_PARTITIONS);
    const inline = await writeSmallFiles('inline', SMALL_PARTITIONS);
    await expectSameLake(
      worker,
      inline,
      SMALL_PARTITIONS.reduce((a, b) => a + b, 0),
    );
  }, 60_000);

  it('fails a file it cannot encode, alone: the next file encodes', async () => {
    const encoder = createWorkerEncoder();
    try {
      const columns = lakeColumnsOf(record);
      const builder = createBatchBuilder(columns);
      for (const row of rows) builder.append(record.parse(row));
      const good = builder.finish();
      // A batch whose nested column lost its children: Arrow cannot make a batch of it.
      const broken: BatchMessage = {
        ...good,
        columns: good.columns.map((column) =>
          column.children.length > 0 ? { ...column, children: [] } : column,
        ),
      };
      const bad = encoder.open(builder.columns);
      await bad.push(broken);
      await expect(bad.finish()).rejects.toThrow(ParquetEncodeError);

      for (const row of rows) builder.append(record.parse(row));
      const next = encoder.open(builder.columns);
      await next.push(builder.finish());
      const file = await next.finish();
      expect(file.written.rows).toBe(rows.length);
      expect(file.bytes.byteLength).toBe(file.written.bytes);
    } finally {
      await encoder.close();
    }
  });

  it('encodes every file right when its worker is ended after each one, and ends its workers without terminate()', async () => {
    // Stopping a thread that runs WebAssembly from outside can crash the process (encoder.ts endWorker).
    const terminate = vi.spyOn(Worker.prototype, 'terminate');
    const encoder = createWorkerEncoder({ recycleWasmBytes: 0 });
    try {
      const builder = createBatchBuilder(lakeColumnsOf(record));
      for (let n = 1; n <= 3; n++) {
        for (let i = 0; i < n * 10; i++) builder.append(record.parse(rows[i % rows.length]));
        const file = encoder.open(builder.columns);
        await file.push(builder.finish());
        const { written } = await file.finish();
        expect(written.rows).toBe(n * 10);
      }
      await encoder.close();
      expect(terminate).not.toHaveBeenCalled();
    } finally {
      terminate.mockRestore();
      await encoder.close();
    }
  });

  it('when closed, fails the files still open and refuses new ones', async () => {
    const encoder = createWorkerEncoder();
    const builder = createBatchBuilder(lakeColumnsOf(record));
    for (const row of rows) builder.append(record.parse(row));
    const open = encoder.open(builder.columns);
    await open.push(builder.finish());
    await encoder.close();
    await expect(open.finish()).rejects.toThrow(ParquetEncodeError);
    expect(() => encoder.open(builder.columns)).toThrow(/closed/);
  });
});
