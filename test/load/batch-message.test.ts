import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { expect, it } from 'vitest';
import { BATCH_ROWS, createBatchBuilder } from '../../src/load/batch-builder.ts';
import type { BatchMessage, DataMessage } from '../../src/load/batch-message.js';
import { lakeColumnsOf } from '../../src/load/columns.ts';
import { record, rows } from './fixtures/rich-records.ts';

/**
 * A finished batch crosses to the encoder worker as one buffer: every column's views lie in it, aligned
 * for their element type, and posting the batch moves that buffer (it is not copied).
 */

function viewsOf(batch: BatchMessage) {
  const views: NonNullable<DataMessage['values']>[] = [];
  const visit = (data: DataMessage) => {
    for (const view of [data.valueOffsets, data.values, data.nullBitmap]) if (view) views.push(view);
    data.children.forEach(visit);
  };
  batch.columns.forEach(visit);
  return views;
}

it('a batch is packed in one buffer, aligned, and moved to the worker whole', () => {
  const builder = createBatchBuilder(lakeColumnsOf(record));
  const count = Math.min(BATCH_ROWS, 3 * rows.length);
  for (let i = 0; i < count; i++) builder.append(record.parse(rows[i % rows.length]) as object, {});
  const batch = builder.finish();

  const views = viewsOf(batch);
  expect(views.length).toBeGreaterThan(10);
  for (const view of views) {
    expect(view.buffer).toBe(batch.packed);
    expect(view.byteOffset % 8).toBe(0);
  }
  // No two views overlap.
  const spans = views
    .map((v) => ({ from: v.byteOffset, to: v.byteOffset + v.byteLength }))
    .sort((a, b) => a.from - b.from);
  for (const [i, span] of spans.entries())
    if (i > 0) expect(span.from).toBeGreaterThanOrEqual(spans[i - 1]?.to ?? 0);

  // Posted as the encoder posts it: the buffer moves, and what arrives is the same batch.
  const expected = structuredClone(batch);
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(batch, [batch.packed]);
  expect(batch.packed.byteLength).toBe(0);
  const arrived = receiveMessageOnPort(port2)?.message as BatchMessage;
  port1.close();
  expect(arrived.length).toBe(count);
  expect(arrived.columns).toEqual(expected.columns);
  for (const view of viewsOf(arrived)) expect(view.buffer).toBe(arrived.packed);
});
