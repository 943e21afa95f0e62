import type { LiveFile } from '../load/index.ts';

/** What a warehouse table holds of a set of lake files, set against the files the lake names now. */
export interface HeldTrace {
  /** Live files whose rows the table does not hold yet. */
  fresh: LiveFile[];
  /** Files the table holds that the lake no longer names, and no merged live file accounts for. */
  gone: string[];
}

/**
 * Follows a table's record of the lake files it holds (`held`, paths) to the files the lake names now
 * (`live`). A merge replaces files by one with the same rows (a compaction of data files, a merge of
 * confirmation files), so a merged file whose inputs are all held is held too; one that merged a file
 * never held is fresh, and the held inputs it took are gone: the table cannot tell their rows apart from
 * the new ones, and the caller builds it whole.
 */
export function traceHeldFiles(held: Iterable<string>, live: readonly LiveFile[]): HeldTrace {
  const holds = new Set(held);
  let fresh = live.filter((f) => !holds.has(f.path));
  // A merge of merges: repeat until no merged file is left whose inputs are all held.
  for (let changed = true; changed; ) {
    changed = false;
    for (const file of fresh)
      if (file.replaces?.every((p) => holds.has(p))) {
        for (const p of file.replaces) holds.delete(p);
        holds.add(file.path);
        changed = true;
      }
    fresh = fresh.filter((f) => !holds.has(f.path));
  }
  const livePaths = new Set(live.map((f) => f.path));
  return { fresh, gone: [...holds].filter((p) => !livePaths.has(p)) };
}
