import { describe, expect, it } from 'vitest';
import { type Item, pageFor, pagesOf, walkListing } from '../helpers/listing.ts';

/**
 * A newest-first walk meets a record it committed before that now fails its schema (the source added a
 * status the schema does not know, say). The walk still knows where it is: the head it stopped at last
 * time, or a record still open, counts as met though rejected.
 */

/** Nine records, newest first, three to a page: r8 (the newest) and r5 still open, the rest done. */
function listing(edit: (items: Item[]) => void = () => {}) {
  const items: Item[] = Array.from({ length: 9 }, (_, i) => {
    const n = 8 - i;
    return { id: `r${n}`, status: n === 8 || n === 5 ? 'open' : 'done' };
  });
  edit(items);
  return pagesOf(items);
}

/** One walk of the pages after `committed`. */
const walk = (pages: ReturnType<typeof listing>, committed?: Record<string, unknown>) =>
  walkListing(pageFor(pages), committed);

describe('a newest-first walk over records it committed that now fail their schema', () => {
  it('stops at its head as before when nothing failed', async () => {
    const first = await walk(listing());
    expect(first.appended).toHaveLength(9);
    expect(first.checkpoint).toMatchObject({ head: '["r8"]' });
    expect(Object.keys(first.checkpoint.open as object).sort()).toEqual(['["r5"]', '["r8"]']);
    // r5, still open, is on the second page: the walk reads down to it, and no further.
    const again = await walk(listing(), first.checkpoint);
    expect(again).toMatchObject({ appended: [], rejected: 0, requests: 2 });
  });

  it('counts an open record that fails as met: the walk does not read on to the end for it', async () => {
    const first = await walk(listing());
    const spoilt = listing((items) => {
      (items[3] as Item).status = 'gone';
    });
    const again = await walk(spoilt, first.checkpoint);
    expect(again).toMatchObject({ appended: [], rejected: 1, requests: 2 });
    // Still open with the version committed: valid again, and changed, it is appended.
    expect(Object.keys(again.checkpoint.open as object).sort()).toEqual(['["r5"]', '["r8"]']);
    const back = await walk(
      listing((items) => {
        (items[3] as Item).status = 'done';
      }),
      again.checkpoint,
    );
    expect(back.appended).toEqual(['r5']);
  });

  it('passes its head though the head fails: nothing below it is appended again', async () => {
    const first = await walk(listing());
    const headGone = listing((items) => {
      (items[0] as Item).status = 'gone';
    });
    const again = await walk(headGone, first.checkpoint);
    expect(again).toMatchObject({ appended: [], rejected: 1, requests: 2 });
    // The newest valid record is the head now; r8 stays open, and is met again as the walk goes by.
    expect(again.checkpoint).toMatchObject({ head: '["r7"]' });
    expect(Object.keys(again.checkpoint.open as object).sort()).toEqual(['["r5"]', '["r8"]']);
    const later = await walk(headGone, again.checkpoint);
    expect(later).toMatchObject({ appended: [], rejected: 1, requests: 2 });
  });

  it('appends what was listed since above a head that fails', async () => {
    const first = await walk(listing());
    const pages = listing((items) => {
      (items[0] as Item).status = 'gone';
      items.unshift({ id: 'r9', status: 'done' });
      items.pop();
    });
    const again = await walk(pages, first.checkpoint);
    expect(again.appended).toEqual(['r9']);
    expect(again.checkpoint).toMatchObject({ head: '["r9"]' });
  });
});
