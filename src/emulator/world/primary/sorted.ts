/** Number of leading items with `key(item) <= bound` in an array ascending by `key`. */
export function countUpTo<T>(items: readonly T[], key: (item: T) => number, bound: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(items[mid] as T) <= bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Number of leading items with `key(item) < bound` in an array ascending by `key`. */
export function countBelow<T>(items: readonly T[], key: (item: T) => number, bound: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(items[mid] as T) < bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const BUCKET = 256;

/**
 * A sorted multiset kept as a list of sorted buckets of at most 2·BUCKET items: insert and delete cost
 * O(log n + BUCKET), and a walk from any point in either direction costs O(log n) to start and O(1) a
 * step. Used for indexes that change in the middle (unspent outputs, outputs by amount).
 */
export interface SortedList<T> {
  readonly size: number;
  insert(item: T): void;
  /** Removes `item` (found by the order, then identity); false if absent. */
  delete(item: T): boolean;
  /** Items after `probe` (strictly when `strict`) in direction `dir`; every item when `probe` is undefined. */
  walk(probe: T | undefined, dir: 1 | -1, strict: boolean): Generator<T>;
}

export function createSortedList<T>(cmp: (a: T, b: T) => number, initial: T[] = []): SortedList<T> {
  const buckets: T[][] = [];
  const sorted = [...initial].sort(cmp);
  for (let i = 0; i < sorted.length; i += BUCKET) buckets.push(sorted.slice(i, i + BUCKET));
  let size = sorted.length;

  /** The first bucket whose last item is >= probe (or > probe when `strict`); buckets.length if none. */
  const bucketOf = (probe: T, strict: boolean): number => {
    let lo = 0;
    let hi = buckets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const bucket = buckets[mid] as T[];
      const c = cmp(bucket[bucket.length - 1] as T, probe);
      if (c < 0 || (strict && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  /** In a bucket, the first index whose item is >= probe (> when `strict`). */
  const indexIn = (bucket: readonly T[], probe: T, strict: boolean): number => {
    let lo = 0;
    let hi = bucket.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = cmp(bucket[mid] as T, probe);
      if (c < 0 || (strict && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  return {
    get size() {
      return size;
    },
    insert(item) {
      size++;
      if (buckets.length === 0) {
        buckets.push([item]);
        return;
      }
      const b = Math.min(bucketOf(item, true), buckets.length - 1);
      const bucket = buckets[b] as T[];
      bucket.splice(indexIn(bucket, item, true), 0, item);
      if (bucket.length > 2 * BUCKET) buckets.splice(b + 1, 0, bucket.splice(BUCKET));
    },
    delete(item) {
      for (let b = bucketOf(item, false); b < buckets.length; b++) {
        const bucket = buckets[b] as T[];
        for (let i = indexIn(bucket, item, false); i < bucket.length; i++) {
          if (bucket[i] === item) {
            bucket.splice(i, 1);
            if (bucket.length === 0) buckets.splice(b, 1);
            size--;
            return true;
          }
          if (cmp(bucket[i] as T, item) !== 0) return false;
        }
      }
      return false;
    },
    *walk(probe, dir, strict) {
      if (dir === 1) {
        let b = probe === undefined ? 0 : bucketOf(probe, strict);
        let i = probe === undefined || b >= buckets.length ? 0 : indexIn(buckets[b] as T[], probe, strict);
        for (; b < buckets.length; b++, i = 0) {
          const bucket = buckets[b] as T[];
          for (; i < bucket.length; i++) yield bucket[i] as T;
        }
      } else {
        // The last item < probe (<= probe when not strict) is just before the first >= probe (> probe).
        let b =
          probe === undefined ? buckets.length - 1 : Math.min(bucketOf(probe, !strict), buckets.length - 1);
        let i: number | undefined =
          probe === undefined || b < 0 ? undefined : indexIn(buckets[b] as T[], probe, !strict) - 1;
        for (; b >= 0; b--, i = undefined) {
          const bucket = buckets[b] as T[];
          for (let k = i ?? bucket.length - 1; k >= 0; k--) yield bucket[k] as T;
        }
      }
    },
  };
}

/**
 * Merges walks that are each sorted in direction `dir` by `cmp` into one, dropping items equal
 * (by `cmp`) to the one just yielded: the union of several per-address indexes.
 */
export function* mergeWalks<T>(walks: Iterator<T>[], cmp: (a: T, b: T) => number, dir: 1 | -1): Generator<T> {
  const heads = walks.map((w) => w.next());
  let last: T | undefined;
  let has = false;
  for (;;) {
    let best = -1;
    for (let k = 0; k < heads.length; k++) {
      const h = heads[k] as IteratorResult<T>;
      if (h.done) continue;
      if (best < 0 || cmp(h.value, (heads[best] as IteratorResult<T>).value) * dir < 0) best = k;
    }
    if (best < 0) return;
    const item = (heads[best] as IteratorYieldResult<T>).value;
    heads[best] = (walks[best] as Iterator<T>).next();
    if (has && cmp(item, last as T) === 0) continue;
    has = true;
    last = item;
    yield item;
  }
}
