import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isRejectedPageToken, RefusedTokensError } from '../errors.ts';
import { historyEnd, historyStart } from '../pipeline.ts';
import { keyOf, type NewestFirstStream, type PageRequest } from '../stream.ts';
import { canonicalJson } from './canonical-json.ts';
import {
  anyRecord,
  checkRecords,
  createPager,
  newestField,
  newestOf,
  nextTokenOf,
  type Walk,
  type WalkContext,
  type WalkStep,
} from './walk.ts';

/** Passes from the top after a refused page token, in one run, before the walk gives up. */
const MAX_PASSES_AGAIN = 3;

/**
 * Keys a walk keeps of the top of the listing: the head and those listed just below it. A page that
 * lists the head is passed at the head, as ever; one that does not is passed at the first of the keys
 * below it, so a head no longer listed (delisted, re-indexed, its key changed) does not send the walk
 * down the whole history, appending it all again. Only final records the walk knows it committed are
 * kept below the head: one that still changes might be listed higher once it has (a listing sorted by
 * its last change), and met at the top it would end the walk before the records listed since.
 */
const TOP_KEYS = 16;

/** Keys a walk keeps of the oldest end of a stretch it read, to end it where its bottom is gone. */
const STRETCH_ENDS = 4;

/**
 * A stretch of the listing a walk has read, by the keys of its newest and its oldest record, of the last
 * few it handled (`ends`, the bottom last), and the oldest time it met (`bottomAt`).
 */
const Stretch = z.object({
  top: z.string(),
  bottom: z.string(),
  bottomAt: z.number().optional(),
  ends: z.array(z.string()).optional(),
});

/**
 * Where a newest-first listing stands after a run: `head` is the newest committed record, `headAt` its
 * time, `belowHead` the keys listed next below it (newest first), `since` its sort value (for listings
 * that take a lower bound), and `open` the records that could still change, with a hash of the version
 * committed. A walk in progress (`window`) remembers its page token, the newest record its pass met
 * (`top`) and the first few (`tops`), the last one it handled (`bottom`) and the last few (`lasts`),
 * the oldest time it met (`bottomAt`), the token of the page it read last (`at`, '' for the first
 * page) and whether a run that carried it on could not find its place again (`lostPlace`; see
 * `resumeAt`), and what it learned so far. After a refused token a walk passes again from the top:
 * `skip` holds, newest first, the stretches earlier passes read that this one has not gone by yet
 * (`skipping`: it is inside the first; `inEnds`: among its last keys). `topAlone`: the walk ended
 * carried on from a page token, its place lost, and the next pass from the top looks for the head
 * alone (see walkNewestFirst).
 */
const NewestFirstCheckpoint = z.object({
  head: z.string().optional(),
  headAt: z.number().optional(),
  belowHead: z.array(z.string()).optional(),
  topAlone: z.boolean().optional(),
  since: z.number().optional(),
  open: z.record(z.string(), z.string()).default({}),
  window: z
    .object({
      since: z.number().optional(),
      pageToken: z.string(),
      at: z.string().optional(),
      top: z.string(),
      topSince: z.number().optional(),
      topAt: z.number().optional(),
      bottom: z.string(),
      bottomAt: z.number().optional(),
      lasts: z.array(z.string()).default([]),
      tops: z.array(z.string()).default([]),
      passedHead: z.boolean(),
      seenOpen: z.array(z.string()),
      newOpen: z.record(z.string(), z.string()),
      skip: z.array(Stretch).default([]),
      skipping: z.boolean().default(false),
      inEnds: z.boolean().default(false),
      lostPlace: z.boolean().optional(),
    })
    .optional(),
});
type NewestFirstCheckpoint = z.output<typeof NewestFirstCheckpoint>;
type Window = NonNullable<NewestFirstCheckpoint['window']>;
type Checked = ReturnType<typeof checkRecords<z.ZodObject>>;

const versionOf = (record: unknown) =>
  createHash('sha256').update(canonicalJson(record)).digest('base64url').slice(0, 16);

export async function* walkNewestFirst(ctx: WalkContext): Walk {
  let checkpoint = ctx.checkpoint;
  for (;;) {
    const end = yield* walkOnce({ ...ctx, checkpoint });
    // A walk carried on by an earlier run's page token ends at the top that run met: what the source
    // listed since sits above it, so one fresh pass follows, down to that top. Without it a run ends
    // "ok" with the lake behind the source until the run after. A walk that began at the top (a new
    // one, or one whose token was refused) has read it already.
    if (end.fromTop) return;
    // Where a run that carried the walk on could not find its place again (see resumeAt), that pass
    // looks for the top alone (`topAlone`, in this run or the next if this one stops first): records
    // above the token delisted since may have carried it past records never read (offset paging), and
    // only a pass down to the top itself finds them again.
    checkpoint = end.checkpoint;
  }
}

/** One walk from the checkpoint: whether it read the listing from its top in this run, and where it ended. */
async function* walkOnce(
  ctx: WalkContext,
): AsyncGenerator<WalkStep, { fromTop: boolean; checkpoint: Record<string, unknown> }, void> {
  const stream = ctx.stream as NewestFirstStream<z.ZodObject>;
  const state = NewestFirstCheckpoint.parse(ctx.checkpoint ?? {});
  const { head, open } = state;
  // Open keys too are left out: a checkpoint of 1a94e86 kept some below its head.
  const below = new Set(
    head === undefined || state.topAlone ? [] : (state.belowHead ?? []).filter((k) => !(k in open)),
  );
  const heads = new Set(head === undefined ? below : [head, ...below]);
  /** The head alone, as a set of marks (`marksHere`). */
  const headOnly: ReadonlySet<string> = new Set(head === undefined ? [] : [head]);
  const openKeys = Object.keys(open);
  let window: Window | undefined = state.window;
  let first = state.window === undefined;
  let fromTop = first;
  // The pipeline's window [start, end): a walk stops at the first record older than start (once the
  // records still open are re-read) and skips those from end on. A partition read before goes down to
  // its head whatever start says: a rolling start ("7d") that passed the head while no run ran (a
  // machine off for longer than the window) would otherwise leave a hole no later run fills. A head
  // whose time is not known (a checkpoint of an older avalake) is walked down to, with no floor.
  const start = stream.timeOf ? historyStart(ctx.pipeline) : undefined;
  const floor =
    start === undefined || head === undefined
      ? start
      : state.headAt === undefined
        ? undefined
        : Math.min(start, state.headAt);
  const ceiling = stream.timeOf ? historyEnd(ctx.pipeline) : undefined;
  const pager = createPager(ctx.fetchPage);
  const readPage = async (request: PageRequest, pageToken: string | undefined) => {
    const body = await pager.fetch(request, pageToken);
    return { body, checked: checkRecords(stream, body) };
  };
  /** The next page, read before this one was passed (see `marksHere`), and its records checked. */
  let peeked: { pageToken: string; read: ReturnType<typeof readPage> } | undefined;
  let passes = 0;
  /** A walk carried on: the page it read last, read again first (see `resumeAt`). */
  let resumeFrom = state.window?.pageToken ? state.window.at : undefined;
  /** Where the walk stopped, which the first page read goes by before the walk takes its records. */
  let seek = state.window?.pageToken ? stopOf(state.window) : undefined;
  /** Whether this pass has met the head (see the end of a stretch at its bottom). */
  let headMet = false;
  /** Keys appended from the page before this one (see `takenNow`). */
  let takenBefore = new Set<string>();
  // A page can end the walk only through a record that is the head, still open, at either end of a
  // stretch to skip, or below the floor: a page with none of them is followed by the next one.
  const mayEndAt = (records: readonly unknown[], w: Window | undefined) => {
    const stretchEnds = new Set(w?.skip.flatMap((s) => [s.top, s.bottom]));
    // Keys only when there is one to meet: a first walk (no head, nothing open) tests times alone.
    const byKey = heads.size > 0 || openKeys.length > 0 || stretchEnds.size > 0;
    return anyRecord(records, (record) => {
      if (floor !== undefined) {
        const time = stream.timeOf?.(record);
        if (time !== undefined && !(time >= floor)) return true;
      }
      if (!byKey) return false;
      const key = keyOf(stream.primaryKey, record);
      return heads.has(key) || key in open || stretchEnds.has(key);
    });
  };

  for (;;) {
    const since = window ? window.since : state.since;
    const request = stream.request(ctx.pipeline, ctx.partition, since);
    const pageToken = window?.pageToken || undefined;
    let body: unknown;
    let checked: Checked | undefined;
    /** The token of the page read now ('' for the first), which the window keeps as `at`. */
    let readAt = pageToken ?? '';
    /** Where the first page of a walk carried on lists its stop (see `placeOf`). */
    let place: Place | undefined;
    try {
      const from = resumeFrom;
      resumeFrom = undefined;
      const resumed =
        from !== undefined && seek !== undefined
          ? await resumeAt(stream, readPage(request, from || undefined), seek)
          : undefined;
      if (resumed) {
        ({ body, checked, place } = resumed);
        readAt = from as string;
      } else if (pageToken !== undefined && peeked?.pageToken === pageToken)
        ({ body, checked } = await peeked.read);
      else body = await pager.fetch(request, pageToken);
    } catch (error) {
      if (window?.pageToken && isRejectedPageToken(error)) {
        // A token refused once has expired (they live 24 hours). Refused again and again, each time
        // after a pass from the top, the service takes none of them: the walk would loop for ever.
        if (++passes > MAX_PASSES_AGAIN) throw new RefusedTokensError(MAX_PASSES_AGAIN, error);
        pager.restart();
        peeked = undefined;
        seek = undefined;
        // The new pass knows what was read by its stretches to skip, which must meet their keys.
        takenBefore = new Set();
        window = passAgain(window);
        first = true;
        headMet = false;
        fromTop = true;
        continue;
      }
      throw error;
    }
    peeked = undefined;
    const nextToken = nextTokenOf(body);
    if (nextToken && !mayEndAt(stream.records(body), window)) await pager.ahead(request, nextToken);
    const { valid, rejects, rejected } = checked ?? checkRecords(stream, body);
    // A walk carried on goes by what it read before: the records of its first page down to its bottom (or
    // the last of its last keys listed) were handled by it, or listed since above its top (the pass from
    // the top reads those).
    if (seek !== undefined) place ??= placeOf(stream, seek, valid);
    const through = place?.index ?? -1;
    const lostPlace = seek !== undefined && through < 0;
    seek = undefined;
    const append: Record<string, unknown>[] = [];
    const w: Window = window ?? {
      ...(since !== undefined ? { since } : {}),
      pageToken: '',
      top: '',
      bottom: '',
      lasts: [],
      tops: [],
      passedHead: false,
      seenOpen: [],
      newOpen: {},
      skip: [],
      skipping: false,
      inEnds: false,
    };
    if (lostPlace) w.lostPlace = true;
    const seenOpen = new Set(w.seenOpen);
    const takenNow = new Set<string>();
    /** Appends a record, taken once this page, with its version where it may still change. */
    const take = (record: Record<string, unknown>, key: string, newest: boolean) => {
      append.push(record);
      takenNow.add(key);
      trackOpen(stream, record, key, w, newest);
    };
    // Where the head is listed, the head alone passes the walk: records around it may have swapped
    // places (equal sort values), and a record listed since may sit below a key that was below the head.
    // A page that lists keys below the head but not the head is passed at the first of them only if the
    // next page does not list the head either: that tie may straddle two pages.
    let marksHere = headOnly;
    if (below.size > 0 && !w.passedHead && !listsAnyOf(stream, headOnly, valid, rejected)) {
      marksHere = heads;
      if (nextToken && listsAnyOf(stream, below, valid, rejected)) {
        const read = readPage(request, nextToken);
        read.catch(() => undefined);
        peeked = { pageToken: nextToken, read };
        const next = await read.catch(() => undefined);
        // A page that could not be read may list the head: the walk goes on to it, and its failure
        // (a spent quota, a refused token) is the walk's there, the window kept, nothing passed.
        if (!next || listsAnyOf(stream, headOnly, next.checked.valid, next.checked.rejected))
          marksHere = headOnly;
      }
    }
    let belowFloor = false;
    // A listed record that fails its schema is not appended, but it was listed all the same: the head,
    // or a record still open (above the head too: the head is the newest valid record), counts as met,
    // else the walk would read on to the listing's end every run looking for it. One still open stays
    // open with the version committed, so a run that finds it valid again appends it. Inside a stretch
    // to skip, the stretch's own keys lead.
    let nextRejected = 0;
    const meetRejected = (before: number) => {
      for (; rejected[nextRejected]?.before === before; nextRejected++) {
        const key = w.skip.length > 0 ? undefined : rawKeyOf(stream, rejected[nextRejected]?.record);
        if (key === undefined) continue;
        if (!w.passedHead && marksHere.has(key)) w.passedHead = true;
        if (key in open) {
          seenOpen.add(key);
          w.newOpen[key] ??= open[key] as string;
        }
      }
    };

    for (let index = 0; index < valid.length; index++) {
      meetRejected(index);
      if (index <= through) continue;
      const record = valid[index] as Record<string, unknown>;
      const key = keyOf(stream.primaryKey, record);
      // Pages that overlap (offset paging while records arrive) list a record twice: it is taken once.
      if (takenNow.has(key) || takenBefore.has(key)) continue;
      if (key === head) headMet = true;
      const newest = first;
      first = false;
      const time = stream.timeOf?.(record);
      if (ceiling !== undefined && time !== undefined && time >= ceiling) continue;
      let stretch = w.skip[0];
      // One of the last few handled, listed again, is no record after the stretch. (Records from above
      // it that a carried offset token shows again are gone by first: see resumeAt.)
      const pastEnds = w.inEnds && !stretch?.ends?.includes(key) && !w.lasts.includes(key);
      // Older than every record the stretch's pass met, a record is after the stretch, though neither its
      // bottom nor its last keys are listed any more. (Where the listing's order is not its records'
      // times, the stretch may end early, and what is left of it is appended again: rows, not losses.)
      const pastBottom =
        w.skipping && time !== undefined && stretch?.bottomAt !== undefined && time < stretch.bottomAt;
      if (stretch && (pastEnds || pastBottom)) {
        // Past the last keys of the stretch without meeting its bottom (no longer listed): it ended
        // there, and this record is the first after it.
        leaveStretches(w, 'first');
        stretch = w.skip[0];
      }
      const atHead = w.skipping ? key === head : marksHere.has(key);
      if (stretch && key !== stretch.top && !w.passedHead && atHead) {
        // The head (or, outside a stretch, a key kept below it) met before the walk passed it: the
        // passes that read the stretches stopped above the head, so those still ahead lie above it,
        // their ends no longer listed. The walk goes on as any other does at its head, instead of
        // taking all below it for new (or, inside a stretch, for read).
        leaveStretches(w, 'all');
        stretch = undefined;
      }
      if (stretch) {
        // Above a stretch read before, a record was listed since: new. Inside it, one handled already.
        passBy(stream, record, key, time, w);
        if (w.skipping || key === stretch.top || key === stretch.bottom) {
          // A stretch whose top is no longer listed ends at its bottom all the same (what lay inside it
          // was taken again), rather than never.
          // Its bottom met above the stretch and above the head (a tie in another order, a record that
          // changed): what follows it is above the head, whatever the pass before had passed.
          const bottomFirst = !w.skipping && key !== stretch.top;
          if (bottomFirst && w.passedHead && !headMet) w.passedHead = false;
          // Met before its top, the bottom may be no record the stretch's pass read: a carried offset
          // token, pushed back by records listed since, showed that pass records from above its top,
          // and it took the last for its bottom without appending it. Appended again, it costs a row.
          if (bottomFirst && !heads.has(key)) take(record, key, newest);
          if (key === stretch.bottom) leaveStretches(w, 'first');
          else {
            w.skipping = true;
            w.inEnds ||= stretch.ends?.includes(key) === true;
          }
          if (heads.has(key)) gatherTop(stream, record, key, w);
        } else {
          take(record, key, newest);
          gatherTop(stream, record, key, w);
        }
        continue;
      }
      if (floor !== undefined && time !== undefined && time < floor && !(key in open)) {
        // Below the window; the walk goes on only to re-read records still open (a rolling window
        // may have passed them), and appends nothing new down there.
        if (seenOpen.size >= openKeys.length) {
          belowFloor = true;
          break;
        }
        continue;
      }
      passBy(stream, record, key, time, w);
      if (!w.passedHead && marksHere.has(key)) w.passedHead = true;
      if (!w.passedHead) {
        // A key kept below the head is of a final record committed: listed above the head (a tie in
        // another order), it is not appended again.
        if (!below.has(key)) take(record, key, newest);
        gatherTop(stream, record, key, w);
      } else if (heads.has(key)) {
        gatherTop(stream, record, key, w);
      }
      if (w.passedHead && key in open) {
        seenOpen.add(key);
        const version = versionOf(record);
        if (version !== open[key]) {
          append.push(record);
          takenNow.add(key);
        }
        trackOpen(stream, record, key, w, newest, version);
      }
    }

    if (!belowFloor) meetRejected(valid.length);
    takenBefore = takenNow;
    w.seenOpen = [...seenOpen];
    const reached = newestField(newestOf(append.map((r) => stream.timeOf?.(r))));
    const caughtUp = w.skip.length === 0 && w.passedHead && openKeys.every((k) => seenOpen.has(k));
    if (!nextToken || caughtUp || belowFloor) {
      // A pass from the top that met records has looked for the top; an empty one has not.
      const topAlone = fromTop ? state.topAlone === true && !w.top : w.lostPlace === true;
      const checkpoint = { ...finish(state, w), ...(topAlone ? { topAlone } : {}) };
      yield { append, rejects, ...reached, checkpoint };
      return { fromTop, checkpoint };
    }
    window = { ...w, pageToken: nextToken, at: readAt };
    yield {
      append,
      rejects,
      ...reached,
      checkpoint: {
        ...headOf(state),
        ...(state.topAlone ? { topAlone: true } : {}),
        ...sinceOf(state),
        open,
        window,
      },
    };
  }
}

/**
 * The walk after a refused token: a new pass from the top, which skips what this walk has read. The
 * pass that stopped read from its top to its bottom, in one piece with the stretch it stopped in; the
 * stretches below it are still ahead. Between them lie records listed since, not read yet.
 */
function passAgain(w: Window): Window {
  const [inside, ...below] = w.skip;
  const bottom = w.skipping && inside ? inside.bottom : w.bottom;
  // Stopped inside a stretch: the stretch it joins met the older times. (One of an older avalake has
  // none: it ends by its keys alone.)
  const bottomAt =
    w.skipping && inside
      ? inside.bottomAt === undefined
        ? undefined
        : oldestOf(inside.bottomAt, w.bottomAt)
      : w.bottomAt;
  const ends = w.skipping && inside ? inside.ends : w.lasts;
  const ahead = w.skipping ? below : w.skip;
  const { topSince: _, topAt: __, at: ___, bottomAt: ____, lostPlace: _____, ...rest } = w;
  const stretch = {
    top: w.top,
    bottom,
    ...(bottomAt !== undefined ? { bottomAt } : {}),
    ...(ends && ends.length > 0 ? { ends } : {}),
  };
  return {
    ...rest,
    pageToken: '',
    top: '',
    bottom: '',
    lasts: [],
    tops: [],
    skip: w.top ? [stretch, ...ahead] : ahead,
    skipping: false,
    inEnds: false,
  };
}

/**
 * Where a walk carried on by a page token takes up. Offset paging counts records: records delisted above
 * the token since carry it past records never read, and records listed since above it show the walk
 * records it read. The page the walk read last (`at`), read again, tells: where it still lists the
 * walk's bottom (or, that delisted too, the last of its last keys), the records after it are the next
 * ones, and its own next token follows them. It costs a page a resumed walk, which finds nothing new
 * where tokens name records (keyset paging) or nothing was delisted. Where it lists none of them
 * (records listed since pushed them down, all delisted), undefined: the walk reads the carried token,
 * and goes by its last keys there if it lists them; where that lists none either, its place is lost.
 */
async function resumeAt(
  stream: NewestFirstStream<z.ZodObject>,
  read: Promise<{ body: unknown; checked: Checked }>,
  stop: Stop,
): Promise<{ body: unknown; checked: Checked; place: Place } | undefined> {
  // A refused token is the walk's, as the carried one's would be: both expired together.
  const { body, checked } = await read;
  const place = placeOf(stream, stop, checked.valid);
  // One of the last keys alone, last on the page, may be followed by the bottom on the next page
  // (records listed since pushed it down): the carried token's page tells.
  const placed = place.atBottom || (place.index >= 0 && place.index < checked.valid.length - 1);
  return placed ? { body, checked, place } : undefined;
}

/** Where a walk carried on stopped: its bottom, and the last few keys it handled before it. */
type Stop = { bottom: string; lasts: ReadonlySet<string> };

function stopOf(w: Window): Stop | undefined {
  return w.bottom ? { bottom: w.bottom, lasts: new Set(w.lasts) } : undefined;
}

/** Where a page lists a walk's stop: the index of the record, -1 if none, and whether it is the bottom. */
type Place = { index: number; atBottom: boolean };

/** The index of the stop's bottom, or where that is no longer listed, of the last of its last keys. */
function placeOf(stream: NewestFirstStream<z.ZodObject>, stop: Stop, records: readonly unknown[]): Place {
  let index = -1;
  for (let i = 0; i < records.length; i++) {
    const key = keyOf(stream.primaryKey, records[i] as Record<string, unknown>);
    if (key === stop.bottom) return { index: i, atBottom: true };
    if (stop.lasts.has(key)) index = i;
  }
  return { index, atBottom: false };
}

/** The walk goes by a listed record: the newest of its pass is its top (and its first top key). */
function passBy(
  stream: NewestFirstStream<z.ZodObject>,
  record: Record<string, unknown>,
  key: string,
  time: number | undefined,
  w: Window,
) {
  w.bottom = key;
  w.bottomAt = oldestOf(w.bottomAt, time);
  w.lasts.push(key);
  if (w.lasts.length > STRETCH_ENDS) w.lasts.shift();
  if (w.top) return;
  w.top = key;
  w.tops = [key];
  const topSince = stream.sinceOf?.(record);
  if (topSince !== undefined) w.topSince = topSince;
  if (time !== undefined) w.topAt = time;
}

/**
 * Keeps a key below the top, the walk knowing its record committed (appended now, or a key it kept
 * before) and final. A window of an older avalake, carried on, began with no top keys: it gathers none
 * mid-listing.
 */
function gatherTop(
  stream: NewestFirstStream<z.ZodObject>,
  record: Record<string, unknown>,
  key: string,
  w: Window,
) {
  if (w.tops.length === 0 || w.tops.length >= TOP_KEYS) return;
  if (key !== w.top && (stream.isFinal?.(record, { newest: false }) ?? true)) w.tops.push(key);
}

/** The walk is past the first of its stretches to skip, or past them all. */
function leaveStretches(w: Window, which: 'first' | 'all') {
  w.skip = which === 'all' ? [] : w.skip.slice(1);
  w.skipping = false;
  w.inEnds = false;
}

/** The older of two times, either unknown. */
function oldestOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** Whether a page lists any of `keys`, as a valid record or a rejected one. */
function listsAnyOf(
  stream: NewestFirstStream<z.ZodObject>,
  keys: ReadonlySet<string>,
  valid: readonly unknown[],
  rejected: readonly { record: unknown }[],
): boolean {
  if (keys.size === 0) return false;
  for (const record of valid)
    if (keys.has(keyOf(stream.primaryKey, record as Record<string, unknown>))) return true;
  return rejected.some((r) => keys.has(rawKeyOf(stream, r.record) ?? ''));
}

function trackOpen(
  stream: NewestFirstStream<z.ZodObject>,
  record: Record<string, unknown>,
  key: string,
  w: Window,
  newest: boolean,
  version?: string,
) {
  // The version hash costs a SHA-256 of the record: only for records that may still change.
  if (stream.isFinal && !stream.isFinal(record, { newest })) w.newOpen[key] = version ?? versionOf(record);
}

/** The key of a listed record that failed its schema, if it is a record at all. */
function rawKeyOf(stream: NewestFirstStream<z.ZodObject>, record: unknown): string | undefined {
  return typeof record === 'object' && record !== null
    ? keyOf(stream.primaryKey, record as Record<string, unknown>)
    : undefined;
}

const sinceOf = (state: NewestFirstCheckpoint) => (state.since !== undefined ? { since: state.since } : {});

const headOf = (state: NewestFirstCheckpoint) => ({
  ...(state.head !== undefined ? { head: state.head } : {}),
  ...(state.headAt !== undefined ? { headAt: state.headAt } : {}),
  ...(state.belowHead !== undefined ? { belowHead: state.belowHead } : {}),
});

/** The checkpoint after a complete walk: the new head, and the records still open. */
function finish(state: NewestFirstCheckpoint, w: Window): Record<string, unknown> {
  // A pass that met no record at all (an empty answer: the source's hiccup, or an indexer behind) says
  // nothing of the records still open: they stay open, to be read again, rather than forgotten for good.
  if (!w.top && !w.passedHead)
    return { ...headOf(state), ...sinceOf(state), open: { ...state.open, ...w.newOpen } };
  const head = w.top
    ? {
        head: w.top,
        ...(w.topAt !== undefined ? { headAt: w.topAt } : {}),
        ...belowHeadOf(w, state),
      }
    : headOf(state);
  const since = w.topSince ?? state.since;
  return { ...head, ...(since !== undefined ? { since } : {}), open: w.newOpen };
}

/**
 * The keys below the new head: those the pass met under it, then the heads before (still below it, if
 * listed), so a quiet listing read a page at a time keeps all its top keys.
 */
function belowHeadOf(w: Window, state: NewestFirstCheckpoint): { belowHead?: string[] } {
  const keys = new Set(w.tops);
  // The head before, if it was final then (it is not kept open).
  if (state.head !== undefined && !(state.head in state.open)) keys.add(state.head);
  for (const key of state.belowHead ?? []) if (!(key in state.open)) keys.add(key);
  keys.delete(w.top);
  const belowHead = [...keys].slice(0, TOP_KEYS - 1);
  return belowHead.length > 0 ? { belowHead } : {};
}
