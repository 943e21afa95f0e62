import { dirname, join } from 'node:path';
import { hasConfirmations, type LiveFile, readLakeState, type StreamState } from '../load/index.ts';
import { quoteLiteral } from './duckdb.ts';
import { replaceLakeRefs } from './templates.ts';

/** What the models read of the lake: each stream's committed files, as the commit log names them. */
export interface LakeSources {
  lakeDir: string;
  streams: Map<string, StreamState>;
}

/** `catalog`: the lake's commit log is in this PostgreSQL catalog, not beside it. */
export async function lakeSources(lakeDir: string, catalog?: string): Promise<LakeSources> {
  return { lakeDir, streams: await readLakeState(dirname(lakeDir), catalog) };
}

/** A stream's live data files (not its rejects). */
export const dataFilesOf = (lake: LakeSources, stream: string): LiveFile[] =>
  (lake.streams.get(stream)?.files ?? []).filter((f) => f.table === 'data');

/** Unchanged snapshots, recorded without rows: the rows they repeat are read again at these times (confirmations.ts). */
export const CONFIRMATIONS = '_lake.snapshot_confirmations';

/** What an incremental build reads of a stream: its new files, and confirmations newer than a time (ms). */
export interface StreamDelta {
  files: readonly LiveFile[];
  confirmedAfter: number | undefined;
}

/**
 * `{{ lake('stream') }}` → exactly the stream's committed Parquet files (never a folder glob, which could
 * see a file mid-move), Hive folder values as text. A snapshot stream's rows are read again at every
 * time an unchanged answer confirmed them (stamped with that time, `_snapshot_at` and `_extracted_at`),
 * so a model sees one full snapshot per observation, as if each had been stored whole. `delta` narrows a
 * stream to what is new: its new files, and the confirmations after a time (of rows in any file).
 */
export function withLake(sql: string, lake: LakeSources, delta?: ReadonlyMap<string, StreamDelta>): string {
  return replaceLakeRefs(sql, (stream) => {
    const read = (files: readonly LiveFile[]) =>
      `read_parquet([${files.map((f) => quoteLiteral(join(lake.lakeDir, ...f.path.split('/')))).join(', ')}], ` +
      'hive_partitioning = true, hive_types_autocast = false, union_by_name = true)';
    const narrowed = delta?.get(stream);
    const all = dataFilesOf(lake, stream);
    if (!hasConfirmations(lake.streams.get(stream))) return read(narrowed?.files ?? all);
    const after = narrowed?.confirmedAfter;
    const stored = narrowed ? narrowed.files : all;
    return `(
      ${stored.length > 0 ? `select * from ${read(stored)}` : `select * from ${read(all)} where false`}
      union all by name
      select rows.* replace (
        confirmations.confirmed_at as _snapshot_at,
        confirmations.confirmed_at as _extracted_at
      )
      from ${read(all)} as rows
      inner join ${CONFIRMATIONS} as confirmations
        on confirmations.stream = ${quoteLiteral(stream)}
        and confirmations."partition" = rows._partition
        and confirmations.snapshot_at = rows._snapshot_at
      ${narrowed ? `where confirmations.confirmed_at > ${after === undefined ? "'-infinity'::timestamptz" : `to_timestamp(${after} / 1000)`}` : ''}
    )`;
  });
}
