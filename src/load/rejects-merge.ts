import { mergeGroups } from './compact.ts';
import { LakeCorruptError } from './errors.ts';
import { seqText } from './layout.ts';
import { mergeLakeFiles } from './merge.ts';
import type { StreamState } from './state.ts';
import { folderOf, type LakeStorage } from './storage.ts';

/**
 * Rejects files (`_rejects/stream=<s>/network=<n>/`) are written by every flush that refused a record.
 * An upstream change that every run trips over (a new enum value, a field turned null) writes one per
 * partition per run: a year of cron would leave tens of thousands of tiny files, each named in the
 * stream's state, read at every open. Compaction merges data files into the stream's next generation of
 * folders; rejects live outside them, so they are merged where they are, when the commit log folds, as
 * snapshot confirmations are (confirmations.ts): by folder and size tier, as compaction picks data files
 * (`mergeGroups`), so a reject is rewritten a handful of times in its life. The folded state names the
 * merged file (and what it `replaces`); the caller deletes the replaced files once that state is durable,
 * and files no state names are removed when the lake opens.
 */

const mergedName = (seq: number, n: number) => `part-${seqText(seq)}-m${n}.parquet`;

/**
 * Merges the stream's small rejects files that are due, updating `state` in place. Returns the files the
 * new state no longer names, to delete once it is durable.
 */
export async function mergeRejects(storage: LakeStorage, state: StreamState): Promise<string[]> {
  const groups = mergeGroups(state.files, 'rejects', 'due');
  const replaced: string[] = [];
  for (const [n, group] of groups.entries()) {
    const sources = group.files.map((f) => f.path);
    const path = `${group.folder}/${mergedName(state.seq, n)}`;
    const written = await mergeLakeFiles(storage, sources, path);
    const rows = group.files.reduce((sum, f) => sum + f.rows, 0);
    if (written.rows !== rows)
      throw new LakeCorruptError(
        `merging ${sources.length} rejects files gave ${written.rows} rows, not ${rows}`,
        path,
      );
    const merged = new Set(sources);
    state.files = state.files.filter((f) => !merged.has(f.path));
    state.files.push({ path, table: 'rejects', seq: state.seq, replaces: sources, ...written });
    replaced.push(...sources);
  }
  for (const folder of new Set(groups.map((g) => g.folder))) await storage.sync(folder);
  return replaced;
}

/** Deletes rejects files the state does not name: a merge whose fold never committed, or files it replaced. */
export async function removeStrayRejects(storage: LakeStorage, state: StreamState): Promise<void> {
  const live = new Set(state.files.filter((f) => f.table === 'rejects').map((f) => f.path));
  for (const folder of new Set([...live].map(folderOf)))
    for (const name of await storage.list(folder))
      if (!live.has(`${folder}/${name}`)) await storage.remove(`${folder}/${name}`);
}
