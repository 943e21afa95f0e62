import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DuckDBTimestampTZValue } from '../load/duckdb.ts';
import { type LiveFile, partitionId } from '../load/index.ts';
import { queryRows, quoteLiteral } from './duckdb.ts';
import { traceHeldFiles } from './held-files.ts';
import { CONFIRMATIONS, type LakeSources } from './lake-sources.ts';

/**
 * `_lake.snapshot_confirmations`: every time an unchanged snapshot was confirmed, which the models read
 * as a full snapshot at that time (`withLake`). Confirmations come from two places in the lake: the
 * commit log's state (`pending`: not yet folded, a few per partition) and the Parquet files folding
 * moves them into. A year of 15-minute runs is millions of them, so a build does not copy them all
 * again: it records which files the table holds (`_lake.confirmation_files`), follows the lake's merges
 * of them (a merged file whose inputs are all held is held), reads only new files, and replaces the
 * pending rows. A held file that no live file accounts for (merged with one never read, or a lake begun
 * again) means the table is built whole, which is always correct.
 */

/** The confirmation files whose rows the table holds (merged ones standing for their inputs). */
const HELD = '_lake.confirmation_files';

export type ConfirmationsSync =
  | { kind: 'whole'; why: string; rows: number }
  | { kind: 'appended'; files: number; rows: number };

export async function syncConfirmations(db: DuckDBConnection, lake: LakeSources): Promise<ConfirmationsSync> {
  await db.run('create schema if not exists _lake');
  const live = confirmationFiles(lake);
  if (!(await hasCurrentShape(db))) return buildWhole(db, lake, live, 'not built by this version yet');
  const held = await queryRows(db, `select path from ${HELD}`);
  const { fresh, gone } = traceHeldFiles(
    held.map((r) => String(r.path)),
    [...live.keys()],
  );
  if (gone.length > 0)
    return buildWhole(
      db,
      lake,
      live,
      `a merge took ${gone.length} file(s) it held together with ones it never read`,
    );

  await db.run(`delete from ${CONFIRMATIONS} where pending`);
  const pending = await appendPending(db, lake);
  for (const file of fresh) await insertFile(db, lake, file, live.get(file) as string);
  await recordHeld(db, live);
  return { kind: 'appended', files: fresh.length, rows: pending + sumRows(fresh) };
}

async function buildWhole(
  db: DuckDBConnection,
  lake: LakeSources,
  live: ReadonlyMap<LiveFile, string>,
  why: string,
): Promise<ConfirmationsSync> {
  await db.run(
    `create or replace table ${CONFIRMATIONS} (stream varchar, "partition" varchar, snapshot_at timestamptz, confirmed_at timestamptz, pending boolean)`,
  );
  const pending = await appendPending(db, lake);
  for (const [file, stream] of live) await insertFile(db, lake, file, stream);
  await recordHeld(db, live);
  return { kind: 'whole', why, rows: pending + sumRows([...live.keys()]) };
}

/** Every stream's live confirmation files, each with its stream. */
function confirmationFiles(lake: LakeSources): Map<LiveFile, string> {
  const files = new Map<LiveFile, string>();
  for (const [stream, state] of lake.streams)
    for (const file of state.files) if (file.table === 'confirmations') files.set(file, stream);
  return files;
}

/** Whether the table has the `pending` column and its file record exists (a warehouse of before has neither). */
async function hasCurrentShape(db: DuckDBConnection): Promise<boolean> {
  const [row] = await queryRows(
    db,
    `select count(*) filter (where table_name = 'snapshot_confirmations' and column_name = 'pending') as pending,
            count(*) filter (where table_name = 'confirmation_files') as held
     from information_schema.columns where table_schema = '_lake'`,
  );
  return Number(row?.pending) > 0 && Number(row?.held) > 0;
}

/** The confirmations still in the commit log's state, marked pending; returns how many. */
async function appendPending(db: DuckDBConnection, lake: LakeSources): Promise<number> {
  const appender = await db.createAppender('snapshot_confirmations', '_lake');
  let rows = 0;
  for (const [stream, state] of lake.streams)
    for (const p of state.partitions.values())
      for (const [confirmedAt, snapshotAt] of p.confirmations) {
        appender.appendVarchar(stream);
        appender.appendVarchar(partitionId(p.partition));
        appender.appendTimestampTZ(new DuckDBTimestampTZValue(BigInt(snapshotAt) * 1000n));
        appender.appendTimestampTZ(new DuckDBTimestampTZValue(BigInt(confirmedAt) * 1000n));
        appender.appendBoolean(true);
        appender.endRow();
        rows++;
      }
  appender.closeSync();
  return rows;
}

/** A confirmation file's rows (folded: not pending). */
async function insertFile(db: DuckDBConnection, lake: LakeSources, file: LiveFile, stream: string) {
  await db.run(
    `insert into ${CONFIRMATIONS} select ${quoteLiteral(stream)}, "partition", snapshotAt, confirmedAt, false
     from read_parquet(${quoteLiteral(join(lake.lakeDir, ...file.path.split('/')))})`,
  );
}

/** After a sync the table holds exactly the live files. */
async function recordHeld(db: DuckDBConnection, live: ReadonlyMap<LiveFile, string>) {
  await db.run(`create or replace table ${HELD} (path varchar)`);
  const paths = [...live.keys()].map((f) => `(${quoteLiteral(f.path)})`);
  if (paths.length > 0) await db.run(`insert into ${HELD} values ${paths.join(', ')}`);
}

const sumRows = (files: readonly LiveFile[]) => files.reduce((n, f) => n + f.rows, 0);
