import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FinalError, ListingLoopError, RefusedTokensError } from '../../src/extract/errors.ts';
import { defineStream, type HttpPageRequest, httpGet } from '../../src/extract/stream.ts';
import { type Item, type Page, pageFor, pagesOf, walkListing, walkStream } from '../helpers/listing.ts';

/**
 * A source that misbehaves in ways a year of cron meets once or twice: a page token that leads back to
 * a page already read, tokens the service never takes, an empty answer, pages that overlap. A walk
 * ends, and loses nothing it knew, in each case.
 */

/** `count` records, newest first, `size` to a page; every third one (r2, r5, …) still open. */
function listing(count: number, size = 3): Page[] {
  const items = Array.from({ length: count }, (_, i) => {
    const n = count - 1 - i;
    return { id: `r${n}`, status: n % 3 === 2 ? 'open' : 'done' };
  });
  return pagesOf(items, size);
}

/** `count` records, newest first, none still open: a walk reads down to its head and no further. */
const finished = (count: number): Item[] =>
  Array.from({ length: count }, (_, i) => ({ id: `r${count - 1 - i}`, status: 'done' }));

/**
 * Records arriving on a listing with times, as the real ones have: `arrive('x', 3)` gives x3 x2 x1,
 * newest first, each newer than all before; `open` names one still open.
 */
function arrivals() {
  let clock = 1_000;
  return (prefix: string, count: number, open?: string): Item[] => {
    clock += count + 1;
    return Array.from({ length: count }, (_, i) => {
      const id = `${prefix}${count - i}`;
      return { id, status: id === open ? 'open' : 'done', t: clock - i };
    });
  };
}

/** A source listing `items`, three to a page. */
const paged = (items: Item[]) => pageFor(pagesOf(items));

const refused = () =>
  new FinalError(
    'the service rejected the request parameters: Invalid pageToken',
    { request: 'GET /v1/test' },
    400,
  );

describe('a newest-first walk over a source that misbehaves', () => {
  it('stops with ListingLoopError when a page token leads back to a page already read', async () => {
    const pages = listing(12);
    (pages[2] as Page).nextPageToken = 't1'; // page 3 names page 2 again
    const { error, requests, appended } = await walkListing(pageFor(pages));
    expect(error).toBeInstanceOf(ListingLoopError);
    expect((error as Error).message).toMatch(/a page token the walk had already followed: the listing loops/);
    expect(requests).toBe(3);
    // What it read before the loop was handed on (the runner commits it).
    expect(appended).toEqual(['r11', 'r10', 'r9', 'r8', 'r7', 'r6', 'r5', 'r4', 'r3']);
  });

  it('reads the same tokens again after a token was refused, without taking that for a loop', async () => {
    const pages = listing(12);
    const first = await walkListing(pageFor(pages));
    // A later run carries on from page 2's token, which has expired: it passes again from the top,
    // where the source hands out that same token again, and ends.
    const expired = { ...(first.checkpoint as object), window: undefined };
    let refusedOnce = false;
    const again = await walkListing(
      (token) => {
        if (token === 't1' && !refusedOnce) {
          refusedOnce = true;
          throw refused();
        }
        return pageFor(pages)(token);
      },
      {
        ...expired,
        window: {
          pageToken: 't1',
          top: '["r11"]',
          bottom: '["r9"]',
          passedHead: true,
          seenOpen: [],
          newOpen: {},
        },
      },
    );
    expect(again.error).toBeUndefined();
    expect(refusedOnce).toBe(true);
  });

  it('after a token refused mid-walk, passes again from the top and appends each new record once', async () => {
    const first = await walkListing(pageFor(listing(12)));
    // Six records arrive above the head (r11); the walk reads the first page, then the second page's
    // token is refused once, and it passes again from the top, skipping what it read, down to the head.
    const pages = listing(18);
    let refusedOnce = false;
    const again = await walkListing((token) => {
      if (token === 't1' && !refusedOnce) {
        refusedOnce = true;
        throw refused();
      }
      return pageFor(pages)(token);
    }, first.checkpoint);
    expect(refusedOnce).toBe(true);
    expect(again.error).toBeUndefined();
    expect(again.appended).toEqual(['r17', 'r16', 'r15', 'r14', 'r13', 'r12']);
    // It met its head and the records still open below it, so it still knows them.
    expect(Object.keys(again.checkpoint?.open as object).sort()).toEqual(
      ['r11', 'r14', 'r17', 'r2', 'r5', 'r8'].map((id) => `["${id}"]`),
    );
  });

  it.each([
    ['its top', ['n5'], ['n2', 'n4', 'n3', 'n2', 'n1', 'n0']],
    ['its top and its bottom', ['n5', 'n3'], ['n2', 'n1', 'n4', 'n2', 'n1', 'n0']],
  ])(
    'after a refused token, a stretch read before whose %s is no longer listed: the history is not appended again',
    async (_, gone, taken) => {
      const history = finished(30);
      const first = await walkListing(pageFor(pagesOf(history)));
      const arrived = finished(6).map((r) => ({ ...r, id: r.id.replace('r', 'n') }));
      // The run reads one page (n5 n4 n3) and stops. A day later its token has expired, and the top of
      // the stretch it read (with its bottom, in the second case) is no longer listed.
      const stopped = await walkListing(pageFor(pagesOf([...arrived, ...history])), first.checkpoint, 1);
      expect(stopped.appended).toEqual(['n5', 'n4', 'n3']);
      const listed = pagesOf([...arrived.filter((r) => !gone.includes(r.id)), ...history]);
      const again = await walkListing(refusedFirst(pageFor(listed)), stopped.checkpoint);
      expect(again.error).toBeUndefined();
      // n4 was inside the stretch, past its missing top, and n3 its bottom: taken again. Nothing of
      // the history is. The page read last, read again first, lists n2 after n3 (n5's delisting moved
      // it up), or after n4 where n3 is gone: what follows is taken before the token is refused.
      expect(again.appended).toEqual(taken);
      expect(again.checkpoint).toMatchObject({ head: '["n4"]' });
    },
  );

  it('after a refused token, a stretch read before whose bottom is no longer listed ends after its last keys', async () => {
    const history = finished(12);
    const first = await walkListing(pageFor(pagesOf(history)));
    const x = ['x1', 'x2', 'x3'].map((id) => ({ id, status: 'done' }));
    const n = ['n1', 'n2'].map((id) => ({ id, status: 'done' }));
    // Five records arrive; the run reads one page (x1 x2 x3) and stops.
    const stopped = await walkListing(pageFor(pagesOf([...x, ...n, ...history])), first.checkpoint, 1);
    expect(stopped.appended).toEqual(['x1', 'x2', 'x3']);
    // A day later its token has expired, and x3, the bottom of the stretch it read, is delisted.
    const listed = pagesOf([...x.slice(0, 2), ...n, ...history]);
    const again = await walkListing(refusedFirst(pageFor(listed)), stopped.checkpoint);
    expect(again.error).toBeUndefined();
    expect(again.appended).toEqual(['n1', 'n2']);
  });

  it('after a refused token, records from above a stretch on a carried page do not end it: nothing is lost', async () => {
    // Times as the real listings have them: a carried offset token that records listed since pushed
    // back shows records newer than the stretch's last keys, which cannot be the records after it.
    const arrive = arrivals();
    const h = arrive('h', 12, 'h9');
    const first = await walkListing(paged(h));
    const x = arrive('x', 3);
    // Reads x3 x2 x1, then h12 (the head) h11 h10 for the open h9, and stops.
    const second = await walkListing(paged([...x, ...h]), first.checkpoint, 2);
    const withY = [...arrive('y', 1), ...x, ...h];
    // Refused: passes again from the top, skipping the stretch x3..h10, and stops inside its last keys.
    const third = await walkListing(refusedFirst(paged(withY), 't2'), second.checkpoint, 2);
    expect(third.checkpoint?.window).toMatchObject({ skipping: true, inEnds: true });
    // Nine records arrive: the carried token (an offset) now lists z3 z2 z1, above the stretch.
    const withZ = [...arrive('z', 9), ...withY];
    const fourth = await walkListing(refusedFirst(paged(withZ), 't3'), third.checkpoint);
    const fifth = await walkListing(paged(withZ), fourth.checkpoint);
    const appended = [...third.appended, ...fourth.appended, ...fifth.appended];
    expect(withZ.filter((r) => r.id.startsWith('z') && !appended.includes(r.id))).toEqual([]);
  });

  it('a carried page of records listed since, all above its top, is not the bottom of a stretch after a refused token', async () => {
    const arrive = arrivals();
    const h = arrive('h', 9, 'h1');
    const first = await walkListing(paged(h));
    const x = arrive('x', 3);
    // Reads x3 x2 x1, then h9 (the head) h8 h7 on its way to the open h1, and stops.
    const second = await walkListing(paged([...x, ...h]), first.checkpoint, 2);
    expect(second.checkpoint?.window).toMatchObject({ top: '["x3"]', bottom: '["h7"]', passedHead: true });
    // Nine records arrive: the carried token (an offset) lists y3 y2 y1, newer than the walk's top x3.
    // The next token is refused, and the pass from the top skips what the earlier pass read.
    const listed = [...arrive('y', 9), ...x, ...h];
    const third = await walkListing(refusedFirst(paged(listed), 't3'), second.checkpoint);
    expect(third.error).toBeUndefined();
    const appended = [...first.appended, ...second.appended, ...third.appended];
    expect(listed.filter((r) => !appended.includes(r.id)).map((r) => r.id)).toEqual([]);
    expect(third.appended.filter((id) => id.startsWith('y'))).toEqual([
      'y9',
      'y8',
      'y7',
      'y6',
      'y5',
      'y4',
      'y3',
      'y2',
      'y1',
    ]);
  });

  it('after a refused token, a stretch whose bottom starts late (a pending delegation) is not appended again', async () => {
    // Sorted by acceptance, timed by start (delegators): r59 (newest) to r0, an hour apart, but r18, where
    // the first run stops, starts two weeks after it was accepted.
    const hour = 3_600;
    const items: Item[] = Array.from({ length: 60 }, (_, i) => {
      const n = 59 - i;
      return { id: `r${n}`, status: 'done', t: 1_700_000_000 + n * hour + (n === 18 ? 336 * hour : 0) };
    });
    const first = await walkListing(paged(items), undefined, 14);
    expect(first.appended.at(-1)).toBe('r18');
    // A day later one delegation is new, and the tokens of the day before are refused (expired).
    const listed = [{ id: 'n1', status: 'done', t: 1_800_000_000 }, ...items];
    const expired = new Set(['t14', 't13']);
    const second = await walkListing((token) => {
      if (token && expired.delete(token)) throw refused();
      return paged(listed)(token);
    }, first.checkpoint);
    expect(second.error).toBeUndefined();
    expect(second.appended.filter((id) => first.appended.includes(id))).toEqual([]);
    expect(second.appended).toEqual(['n1', ...items.slice(42).map((r) => r.id)]);
  });

  it('after a refused token, a key kept below the head listed above a stretch is passed only once the next page is read', async () => {
    const history = finished(12);
    const first = await walkListing(pageFor(pagesOf(history)));
    const [r11, r10, ...rest] = history as [Item, Item, ...Item[]];
    const x = ['x1', 'x2', 'x3'].map((id) => ({ id, status: 'done' }));
    const n = { id: 'n', status: 'done' };
    // Four records arrive in a tie with r11 and r10; the run reads one page (x1 x2 x3) and stops.
    const stopped = await walkListing(pageFor(pagesOf([...x, n, r11, r10, ...rest])), first.checkpoint, 1);
    // A day later the token has expired, and the tie is listed in another order: r10 first.
    const listed = pagesOf([r10, ...x, n, r11, ...rest]);
    const again = await walkListing(refusedFirst(pageFor(listed)), stopped.checkpoint);
    expect(again.error).toBeUndefined();
    expect(again.appended).toContain('n');
  });

  it('after a refused token, a stretch ended at its bottom listed above the head does not take the head for passed', async () => {
    const history = [11, 10, 9, 8, 7].map((k) => ({ id: `r${k}`, status: 'done' }));
    history.push({ id: 'o1', status: 'open' }, { id: 'o2', status: 'open' });
    history.push(...finished(7));
    const first = await walkListing(pageFor(pagesOf(history)));
    const x = ['x1', 'x2', 'x3'].map((id) => ({ id, status: 'done' }));
    // Three records arrive; the run reads down past the head to o1, still open, and stops there.
    const stopped = await walkListing(pageFor(pagesOf([...x, ...history])), first.checkpoint, 3);
    expect(stopped.checkpoint?.window).toMatchObject({ bottom: '["o1"]', passedHead: true });
    // o1 settles and is listed first (a listing by last change); y1 and y2 arrive. The token expires.
    const listed = pagesOf([
      { id: 'o1', status: 'done' },
      { id: 'y1', status: 'done' },
      { id: 'y2', status: 'done' },
      ...x,
      ...history.filter((r) => r.id !== 'o1'),
    ]);
    const again = await walkListing(refusedFirst(pageFor(listed)), stopped.checkpoint);
    expect(again.error).toBeUndefined();
    expect(again.appended).toEqual(expect.arrayContaining(['y1', 'y2']));
  });

  it("gives up with the service's message when it refuses the token after every pass from the top", async () => {
    const pages = listing(12);
    const { error, requests } = await walkListing((token) => {
      if (token) throw refused();
      return pageFor(pages)(token);
    });
    expect(error).toBeInstanceOf(RefusedTokensError);
    expect((error as Error).message).toMatch(
      /refused this listing's page token again after 3 passes.*Invalid pageToken/,
    );
    // The first page and a refused token, four times: not thousands.
    expect(requests).toBe(8);
  });

  it('keeps its head and the records still open through an empty answer', async () => {
    const pages = listing(12);
    const first = await walkListing(pageFor(pages));
    const open = first.checkpoint?.open as Record<string, string>;
    expect(Object.keys(open).sort()).toEqual(['["r11"]', '["r2"]', '["r5"]', '["r8"]']);
    const empty = await walkListing(() => ({ items: [] }), first.checkpoint);
    expect(empty.error).toBeUndefined();
    expect(empty.checkpoint).toMatchObject({ head: '["r11"]', open });
    // The listing is back: the open records are read again (down to the oldest of them), nothing new.
    const back = await walkListing(pageFor(pages), empty.checkpoint);
    expect(back).toMatchObject({ appended: [], requests: 4 });
  });

  it('passes its head though the head is no longer listed: nothing below it is appended again', async () => {
    const items = finished(12);
    const first = await walkListing(pageFor(pagesOf(items)));
    expect(first.checkpoint?.belowHead).toEqual(items.slice(1).map((r) => `["${r.id}"]`));
    // The head is delisted (re-indexed, say) and a record arrives: the walk passes at r10, below it.
    const since = [{ id: 'r12', status: 'done' }, ...items.slice(1)];
    const again = await walkListing(pageFor(pagesOf(since)), first.checkpoint);
    // Two pages: the second is read to see that it does not list the head either.
    expect(again).toMatchObject({ appended: ['r12'], requests: 2 });
    expect(again.checkpoint).toMatchObject({ head: '["r12"]' });
  });

  it('keeps its top keys through quiet runs that read a page: four records delisted at once are passed', async () => {
    let items = finished(12);
    let committed = (await walkListing(pageFor(pagesOf(items)))).checkpoint;
    for (const n of [12, 13]) {
      items = [{ id: `r${n}`, status: 'done' }, ...items];
      const run = await walkListing(pageFor(pagesOf(items)), committed);
      expect(run).toMatchObject({ appended: [`r${n}`], requests: 1 });
      committed = run.checkpoint;
    }
    // r13 down to r10 gone, more than one page: r9 was met by the first run alone, and is still known.
    const after = await walkListing(pageFor(pagesOf(items.slice(4))), committed);
    expect(after).toMatchObject({ appended: [], requests: 2 });
    expect(after.checkpoint).toMatchObject({ head: '["r9"]' });
  });

  it('passes a page that lists the head at the head: a record listed since, below a key kept under it, is taken', async () => {
    const items = finished(12);
    const first = await walkListing(pageFor(pagesOf(items)));
    // n1 arrives with the sort value of r11 and r10, and the source lists that tie in another order.
    const tie = [items[1] as Item, { id: 'n1', status: 'done' }, items[0] as Item, ...items.slice(2)];
    const again = await walkListing(pageFor(pagesOf(tie)), first.checkpoint);
    // r10, a key kept below the head, is known committed: it is not appended again.
    expect(again.appended).toEqual(['n1']);
  });

  it('reads the next page before passing at a key kept below the head: a tie may straddle two pages', async () => {
    const items = finished(12);
    const first = await walkListing(pageFor(pagesOf(items)));
    // n1 arrives with the sort value of r11, r10 and r9, listed in another order: r10, r9 and n1 fill
    // the first page, and the head r11 opens the second.
    const tie = [items[1], items[2], { id: 'n1', status: 'done' }, items[0], ...items.slice(3)] as Item[];
    const again = await walkListing(pageFor(pagesOf(tie)), first.checkpoint);
    expect(again).toMatchObject({ appended: ['n1'], requests: 2, error: undefined });
    expect(again.checkpoint).toMatchObject({ head: '["r10"]' });
    // A quiet run after it reads one page.
    expect(await walkListing(pageFor(pagesOf(tie)), again.checkpoint)).toMatchObject({
      appended: [],
      requests: 1,
    });
  });

  it.each([
    ['fails (the quota spent)', () => new Error('quota spent')],
    ['is refused (an expired token)', refused],
  ])(
    'does not pass at a key kept below the head when the next page %s: the new record is taken',
    async (_, error) => {
      const items = finished(12);
      const first = await walkListing(pageFor(pagesOf(items)));
      const tie = [items[1], items[2], { id: 'n1', status: 'done' }, items[0], ...items.slice(3)] as Item[];
      let failed = false;
      const answer = (token: string | undefined) => {
        if (token === 't1' && !failed) {
          failed = true;
          throw error();
        }
        return pageFor(pagesOf(tie))(token);
      };
      // The run fails there with its window kept, or passes again from the top: either way n1 is
      // committed by the end of the next run, not lost behind a head moved to r10.
      const again = await walkListing(answer, first.checkpoint);
      const next = await walkListing(pageFor(pagesOf(tie)), again.checkpoint);
      expect([...again.appended, ...next.appended]).toContain('n1');
      expect(next.checkpoint).toMatchObject({ head: '["r10"]' });
    },
  );

  describe('a run carried on by an offset token', () => {
    const items = finished(12);
    const news: Item[] = ['n5', 'n4', 'n3', 'n2', 'n1', 'n0'].map((id) => ({ id, status: 'done' }));
    /** Six records arrive; the run stops after its first page (n5, n4, n3), carrying its page token. */
    async function stopped() {
      const first = await walkListing(pageFor(pagesOf(items)));
      const run = await walkListing(pageFor(pagesOf([...news, ...items])), first.checkpoint, 1);
      expect(run.appended).toEqual(['n5', 'n4', 'n3']);
      return run.checkpoint;
    }

    it('reads its last page again: records delisted above the token do not carry it past records never read', async () => {
      // n5 and n4 are delisted: the carried token (an offset) now lists from r11 on, past n2 and n1. The
      // first page, read again, lists n3 first: what follows it is next.
      const delisted = pageFor(pagesOf([...news.slice(2), ...items]));
      const next = await walkListing(delisted, await stopped(), 1);
      expect(next.appended).toEqual(['n2', 'n1']);
    });

    it('goes by the records it read where records listed since moved them onto the carried page', async () => {
      const arrived: Item[] = [
        { id: 'a1', status: 'done' },
        { id: 'a0', status: 'done' },
      ];
      // The carried token now lists n4, n3, n2: n2 alone is new to this walk. The pass from the top
      // that follows takes a1 and a0.
      const listed = pageFor(pagesOf([...arrived, ...news, ...items]));
      const next = await walkListing(listed, await stopped());
      expect(next.appended).toEqual(['n2', 'n1', 'n0', 'a1', 'a0']);
    });

    it('having found its place, does not pass down to its top alone: its top delisted, the history is not read again', async () => {
      // n5, the walk's top, is delisted by the next run (re-indexed); n3, its bottom, is still listed.
      const listed = pageFor(pagesOf([...news.slice(1), ...items]));
      const next = await walkListing(listed, await stopped());
      expect(next.appended).toEqual(['n2', 'n1', 'n0']);
      // The page read again, the carried page, and the pass from the top down to a key kept below n5.
      expect(next.requests).toBe(4);
    });

    it('with its bottom delisted too, passes from the top down to its top alone', async () => {
      // n5, n4 and n3 are delisted: no page lists the bottom again, and the carried token lists from r11
      // on. The pass from the top that follows does not stop at a key kept below n5: it reads down to
      // n5 (gone, so the whole listing), and takes n2 and n1.
      const delisted = pageFor(pagesOf([...news.slice(3), ...items]));
      const checkpoint = await stopped();
      const next = await walkListing(delisted, checkpoint);
      expect(next.appended).toEqual(expect.arrayContaining(['n2', 'n1', 'n0']));
      // The same, with that run stopped once the carried walk ended: the next run's pass looks for n5.
      const carried = await walkListing(delisted, checkpoint, 1);
      expect(carried.appended).not.toContain('n2');
      const after = await walkListing(delisted, carried.checkpoint);
      expect(after.appended).toEqual(expect.arrayContaining(['n2', 'n1']));
    });
  });

  it('does not take a record that still changes for a mark of its place: changed, it may be listed higher', async () => {
    const items = finished(12);
    (items[1] as Item).status = 'open'; // r10, just below the head
    const first = await walkListing(pageFor(pagesOf(items)));
    expect(first.checkpoint?.belowHead).not.toContain('["r10"]');
    // Listed by last change: r10, done now, comes first, above two records listed since.
    const since = [
      { id: 'r10', status: 'done' },
      { id: 'r13', status: 'done' },
      { id: 'r12', status: 'done' },
      items[0] as Item,
      ...items.slice(2),
    ];
    const again = await walkListing(pageFor(pagesOf(since)), first.checkpoint);
    expect(again.appended).toEqual(['r10', 'r13', 'r12']);
  });

  it('takes a record listed on two overlapping pages once', async () => {
    const pages = listing(12);
    // Offset paging while a record arrived: each page starts with the last record of the page before.
    for (let p = 1; p < pages.length; p++)
      (pages[p] as Page).items.unshift((pages[p - 1] as Page).items.at(-1) as Item);
    const { appended } = await walkListing(pageFor(pages));
    expect(appended).toEqual(Array.from({ length: 12 }, (_, i) => `r${11 - i}`));
  });
});

type Point = { id: string; t: number };

/** Twelve records in ascending time (t = 100, 110, …), three to a page, from any cursor. */
const ascending = Array.from({ length: 12 }, (_, i) => ({ id: `p${i}`, t: 100 + 10 * i }));

const cursorStream = defineStream({
  name: 'test_ascending',
  description: 'an ascending listing',
  strategy: 'cursor',
  schema: z.object({ id: z.string(), t: z.number() }),
  primaryKey: ['id'],
  cursorOf: (r) => r.t,
  partitions: () => [{ network: 'fuji' }],
  request: (_p, _partition, cursor) =>
    httpGet({ service: 'data', route: '/v1/asc', params: {}, query: { from: String(cursor ?? 0) } }),
  records: (body) => (body as { items: Point[] }).items,
});

/** One walk of the listing `items` (from the request's cursor on), paged by three, after `committed`. */
const walkAscending = (items: Point[], committed?: Record<string, unknown>) =>
  walkStream(
    cursorStream,
    (token, request) => {
      const from = Number((request as HttpPageRequest).query.from);
      const listed = items.filter((r) => r.t >= from);
      const start = token ? Number(token.slice(1)) : 0;
      return {
        items: listed.slice(start, start + 3),
        ...(start + 3 < listed.length ? { nextPageToken: `t${start + 3}` } : {}),
      };
    },
    committed,
  );

describe('an ascending (cursor) walk over a source that misbehaves', () => {
  it('keeps a record listed after a newer one, once, and reads nothing again next time', async () => {
    // Each pair of neighbours swapped: p1 before p0, p3 before p2, …
    const swapped = ascending.map((_, i) => ascending[i % 2 === 0 ? i + 1 : i - 1] as Point);
    const first = await walkAscending(swapped);
    expect([...first.appended].sort()).toEqual(ascending.map((r) => r.id).sort());
    expect(first.checkpoint).toMatchObject({ cursor: 210 });
    const again = await walkAscending(swapped, first.checkpoint);
    expect(again.appended).toEqual([]);
  });

  it('takes a record listed on two overlapping pages once', async () => {
    const items = [...ascending];
    // The fourth record listed again after the fifth (a page boundary that slipped back by one).
    items.splice(5, 0, items[3] as Point);
    const { appended } = await walkAscending(items);
    expect(appended).toEqual(ascending.map((r) => r.id));
  });
});

/** `answer`, but the first page token asked for (or `token`) is refused once, as an expired one. */
function refusedFirst(answer: (token: string | undefined) => Page, token?: string) {
  let refusedOnce = false;
  return (asked: string | undefined) => {
    if (asked && !refusedOnce && (token === undefined || asked === token)) {
      refusedOnce = true;
      throw refused();
    }
    return answer(asked);
  };
}
