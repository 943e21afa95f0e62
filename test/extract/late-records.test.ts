import { describe, expect, it } from 'vitest';
import { useEmulator, walk } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { duplicateRows, queryLake, streamTable } from '../helpers/lake.ts';

/**
 * An ICM message whose source transaction was not indexed is known only once it is delivered, and its
 * only timestamp is the delivery's: the listing (ordered by timestamp, descending) shows it there, at
 * the top, not at a send time nobody indexed. Listed by its send time it would appear below the head of
 * a newest-first walk that had passed that time already, and never be read.
 */

const emulator = useEmulator();

/**
 * The first message from now on that is delivered with its source not indexed while a newer message
 * of the same address is listed already: k, that address, and the newer message j.
 */
function lateMessage() {
  const icm = emulator.truth.evm.icm('fuji');
  for (let k = icm.count(Math.floor(emulator.clock.now())); ; k++) {
    if (!icm.exists(k)) continue;
    const delivered = icm.deliveredAt(k);
    const m = icm.message(k, delivered);
    if (m.status !== 'delivered_source_not_indexed') continue;
    for (const address of [m.from, m.to])
      for (let j = k + 1; icm.sentAt(j) < delivered; j++)
        if (icm.exists(j) && icm.involves(j, address) && icm.visible(j, delivered - 1))
          return { k, j, address, messageId: m.messageId, delivered };
  }
}

describe('an ICM message whose source was not indexed', () => {
  it('is listed by its delivery time, above the messages sent after it, page by page', async () => {
    const icm = emulator.truth.evm.icm('fuji');
    const late = lateMessage();
    const at = late.delivered + 60;
    emulator.advance(at - Math.floor(emulator.clock.now()));
    // One message a page, so a page boundary falls on each side of the late one.
    const { items } = await walk(
      `${emulator.url}/v1/icm/addresses/${late.address}/messages?network=fuji&pageSize=1`,
      'messages',
    );
    const ids = items.map((m) => m.messageId as string);
    const idOf = (k: number) => icm.message(k, at).messageId;
    expect(ids).toEqual([...icm.indexesDesc(late.address, at)].map(idOf));
    expect(ids.indexOf(late.messageId)).toBeLessThan(ids.indexOf(idOf(late.j)));
    // Ordered by timestamp, descending: the send's, or the delivery's when that is all there is.
    const times = items.map((m) => Number((m.sourceTransaction ?? m.destinationTransaction).timestamp));
    expect(times.every((t, i) => i === 0 || (times[i - 1] as number) >= t)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is read by the run after its delivery, though a newer message was read before it', async () => {
    const icm = emulator.truth.evm.icm('fuji');
    const late = lateMessage();
    const w = demoWorkspace(emulator, (p) => {
      p.streams = ['icm_messages'];
      p.icm = { addresses: [late.address] };
    });
    const ids = () =>
      queryLake(`select distinct messageId from ${streamTable(w.dataDir, 'icm_messages')}`).then((rows) =>
        rows.map((r) => String(r.messageId)).sort(),
      );
    const truth = () => {
      const now = Math.floor(emulator.clock.now());
      return [...icm.indexesDesc(late.address, now)].map((k) => icm.message(k, now).messageId).sort();
    };

    // A second before the delivery: message j, sent after k, is read; k is not listed yet.
    emulator.advance(late.delivered - 1 - Math.floor(emulator.clock.now()));
    expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
    const before = await ids();
    expect(before).toContain(icm.message(late.j, late.delivered - 1).messageId);
    expect(before).not.toContain(late.messageId);

    // Delivered: listed now, and read by the next run.
    emulator.advance(60);
    expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
    const after = await ids();
    expect(after).toContain(late.messageId);
    expect(after).toEqual(truth());
    const [row] = await queryLake(
      `select status, sourceTransaction is null as sourceless from ${streamTable(w.dataDir, 'icm_messages')} where messageId = '${late.messageId}'`,
    );
    expect(row).toEqual({ status: 'delivered_source_not_indexed', sourceless: true });
    expect(await duplicateRows(w.dataDir, 'icm_messages')).toBe(0);
  });
});
