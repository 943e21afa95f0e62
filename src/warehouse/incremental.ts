import { createHash } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { LiveFile } from '../load/index.ts';
import { queryRows, quoteIdent, quoteLiteral, withDuckDB } from './duckdb.ts';
import { type HeldTrace, traceHeldFiles } from './held-files.ts';
import { dataFilesOf, type LakeSources } from './lake-sources.ts';
import type { Model } from './models.ts';
import { withThis } from './templates.ts';

/**
 * Incremental models (`-- incremental: true`): the warehouse remembers which lake files each one holds
 * (`_lake.model_files`) and the SQL it was built with (`_lake.model_sql`). A build reads only the files
 * added since (and, for a snapshot stream, the confirmations of unchanged answers newer than the last
 * it read: `_lake.model_confirmed`), computes the model over them, and replaces the keys they bring. A
 * compaction replaces files by merged ones with the same rows: a merged file whose inputs the model holds
 * is held too. Any doubt (the SQL changed, a file gone that no merged file accounts for) means a full
 * build of that model, which is always correct.
 *
 * A table built whole over at most one stream keeps the same record (`isKeepableWhole`), so that a build
 * can keep it as it is while its SQL, its stream's files and the models it reads are unchanged.
 *
 * Marts over incremental models: an `incremental_by` one recomputes the values its source's changed rows
 * touch (`applyIncrementalBy`); an `incremental_after` one, over rows that arrive in order (snapshots),
 * extends its own rows with its source's later ones (`applyIncrementalAfter`, `_lake.model_through`).
 */

export type IncrementalPlan =
  | { kind: 'full'; why: string }
  | { kind: 'unchanged' }
  | { kind: 'delta'; files: LiveFile[]; confirmedAfter: number | undefined };

const sqlHash = (model: Model) => createHash('sha256').update(model.sql).digest('hex');

export async function ensureBookkeeping(db: DuckDBConnection) {
  await db.run('create schema if not exists _lake');
  await db.run('create table if not exists _lake.model_files (model varchar, path varchar)');
  await db.run('create table if not exists _lake.model_sql (model varchar primary key, sha256 varchar)');
  // The newest snapshot confirmation (ms) an incremental model has read again; null: none yet.
  await db.run(
    'create table if not exists _lake.model_confirmed (model varchar primary key, through_ms bigint)',
  );
  // The newest value of its source's order column an `incremental_after` model has read, as text, and
  // that column's type, to cast it back.
  await db.run(
    'create table if not exists _lake.model_through (model varchar primary key, through varchar, type varchar)',
  );
  // Models whose key is known to hold (unique, not null), with the SQL and the row count it held for.
  await db.run(
    'create table if not exists _lake.model_unique (model varchar primary key, sha256 varchar, row_count bigint)',
  );
}

/** The newest confirmation of a stream's unchanged snapshots (ms), as this build knows them. */
async function newestConfirmation(db: DuckDBConnection, stream: string): Promise<number | undefined> {
  const [row] = await queryRows(
    db,
    `select epoch_ms(max(confirmed_at)) as ms from _lake.snapshot_confirmations where stream = ${quoteLiteral(stream)}`,
  );
  return row?.ms === null || row?.ms === undefined ? undefined : Number(row.ms);
}

export async function planIncremental(
  db: DuckDBConnection,
  model: Model,
  lake: LakeSources,
  tableExists: boolean,
): Promise<IncrementalPlan> {
  const stream = model.lakeStreams[0] as string;
  if (!tableExists) return { kind: 'full', why: 'not built yet' };
  if (!(await sameSql(db, model))) return { kind: 'full', why: 'its SQL changed' };
  const [confirmed] = await queryRows(
    db,
    `select through_ms from _lake.model_confirmed where model = ${quoteLiteral(model.name)}`,
  );
  // None yet (null): every confirmation there is, is new.
  const confirmedAfter = confirmed?.through_ms == null ? undefined : Number(confirmed.through_ms);
  const newest = await newestConfirmation(db, stream);

  const { fresh, gone } = await traceHeld(db, model, lake);
  if (gone.length > 0) return { kind: 'full', why: `${gone.length} files it holds were replaced unseen` };
  const reconfirmed = newest !== undefined && newest > (confirmedAfter ?? Number.NEGATIVE_INFINITY);
  return fresh.length === 0 && !reconfirmed
    ? { kind: 'unchanged' }
    : { kind: 'delta', files: fresh, confirmedAfter };
}

/**
 * Whether a build started from an earlier warehouse (`earlier`, open) does no more model work than one
 * started from the last build (the file `last`):
 * - every incremental model can follow the lake from what it holds: no file it holds was merged by a
 *   compaction with files it never read (from the last build it would add the new files; from the
 *   earlier one it would be built whole);
 * - every model built whole over a stream that the last build could keep as it is, the earlier one can
 *   keep too (else the last build rebuilt it, and this one would rebuild it again).
 */
export async function catchesUpAsCheaply(
  earlier: DuckDBConnection,
  last: string,
  models: readonly Model[],
  lake: LakeSources,
): Promise<boolean> {
  for (const model of models.filter((m) => m.incremental))
    if ((await traceHeld(earlier, model, lake)).gone.length > 0) return false;
  const rebuilt: Model[] = [];
  for (const model of models.filter((m) => isKeepableWhole(m) && m.lakeStreams.length === 1))
    if (
      dataFilesOf(lake, model.lakeStreams[0] as string).length > 0 &&
      !(await keepsWhole(earlier, model, lake))
    )
      rebuilt.push(model);
  if (rebuilt.length === 0) return true;
  return withDuckDB(
    last,
    async (db) => {
      for (const model of rebuilt) if (await keepsWhole(db, model, lake)) return false;
      return true;
    },
    { readOnly: true },
  );
}

/**
 * Whether a model built whole can stay as an earlier build left it (see `keepsWhole`): a table over at
 * most one lake stream (the newest confirmation it read is one number), not incremental in any way, and
 * not reading the build's own record of the lake (`_lake.partitions`, rewritten by every build). The
 * functions of `_lake` (functions.ts) are no such record: a name followed by `(` is a call.
 */
export const isKeepableWhole = (model: Model): boolean =>
  model.materialized === 'table' &&
  !model.incremental &&
  !model.incrementalBy &&
  !model.incrementalAfter &&
  model.lakeStreams.length <= 1 &&
  !READS_LAKE_RECORD.test(model.sql);

const READS_LAKE_RECORD = /\b_lake\.\w+\b(?!\s*\()/;

/**
 * Whether a keepable whole model (`isKeepableWhole`) built earlier has the same inputs now: the same SQL,
 * the same rows of its stream (the same files, followed through compactions), no newer confirmation of
 * an unchanged snapshot. What it reads from other models is the caller's to check (they must be unchanged).
 */
export async function keepsWhole(db: DuckDBConnection, model: Model, lake: LakeSources): Promise<boolean> {
  if (model.lakeStreams.length === 0) return sameSql(db, model);
  // What an incremental model with nothing to add would be: the same SQL, files and confirmations.
  return (await planIncremental(db, model, lake, true)).kind === 'unchanged';
}

/** What a model holds of its stream's live files (`_lake.model_files`), followed through merges. */
async function traceHeld(db: DuckDBConnection, model: Model, lake: LakeSources): Promise<HeldTrace> {
  const held = await queryRows(
    db,
    `select path from _lake.model_files where model = ${quoteLiteral(model.name)}`,
  );
  return traceHeldFiles(
    held.map((r) => String(r.path)),
    dataFilesOf(lake, model.lakeStreams[0] as string),
  );
}

/**
 * What the models of one build hand each other lives in an in-memory database attached for the build:
 * models are built on connections of their own, and every connection of the build sees it (a temp table
 * is its connection's alone), while nothing of it is written to the warehouse file.
 */
const SCRATCH = '__build';

export async function attachScratch(db: DuckDBConnection) {
  await db.run(`attach ':memory:' as ${SCRATCH}`);
}

export async function detachScratch(db: DuckDBConnection) {
  await db.run(`detach ${SCRATCH}`);
}

/** The rows a build changed in an incremental model (old versions and new), for the models built on it. */
export const changedRowsOf = (model: string) => `${SCRATCH}.main.${quoteIdent(changedTable(model))}`;

const changedTable = (model: string) => `changed_${model}`;

/**
 * Adds `delta` (the model computed over new files) to the model: its keys replace the old versions. The
 * replaced and the new rows are kept, for this build, in `changedRowsOf(model)`. (`__delta` is a temp
 * table: one model's own, on the connection building it.) Returns whether the delta's own keys hold
 * (unique, not null): then a table whose key held before still does.
 */
export async function applyDelta(db: DuckDBConnection, model: Model, deltaSql: string): Promise<boolean> {
  const table = quoteIdent(model.name);
  const changed = changedRowsOf(model.name);
  await db.run(`create or replace temp table __delta as\n${deltaSql}`);
  const holds = (await keyBreaches(db, model, '__delta')) === 0;
  const on = model.unique.map((k) => `${table}.${quoteIdent(k)} = __delta.${quoteIdent(k)}`).join(' and ');
  await db.run(
    `create or replace table ${changed} as select ${table}.* from ${table} semi join __delta on ${on}`,
  );
  await db.run(`delete from ${table} using __delta where ${on}`);
  await db.run(`insert into ${table} by name select * from __delta`);
  await db.run(`insert into ${changed} by name select * from __delta`);
  await db.run('drop table __delta');
  return holds;
}

/** How many keys of a relation break the model's key: repeated, or with a null part. */
export async function keyBreaches(db: DuckDBConnection, model: Model, relation: string): Promise<number> {
  if (model.unique.length === 0) return 0;
  const key = model.unique.map(quoteIdent).join(', ');
  const nulls = model.unique.map((k) => `${quoteIdent(k)} is null`).join(' or ');
  const [row] = await queryRows(
    db,
    `select (select count(*) from (select 1 from ${relation} group by ${key} having count(*) > 1))
          + (select count(*) from ${relation} where ${nulls}) as n`,
  );
  return Number(row?.n);
}

/**
 * Whether a model's key holds after a delta whose own keys held (`deltaHolds`): yes when it was recorded
 * holding before (for this SQL), as replacing rows by key keeps it; else told by checking the whole
 * table, once (the first extension after a build whole, or after one that broke it).
 */
export async function keyHoldsAfterDelta(
  db: DuckDBConnection,
  model: Model,
  deltaHolds: boolean,
): Promise<boolean> {
  if (!deltaHolds) return false;
  const [held] = await queryRows(
    db,
    `select sha256 from _lake.model_unique where model = ${quoteLiteral(model.name)}`,
  );
  if (held?.sha256 === sqlHash(model)) return true;
  return (await keyBreaches(db, model, `main.${quoteIdent(model.name)}`)) === 0;
}

/**
 * Records whether the model's key holds, with its SQL and row count, for the tests (`uniqueKeyHolds`):
 * they then need not group the whole table every run.
 */
export async function recordUnique(db: DuckDBConnection, model: Model, holds: boolean) {
  const name = quoteLiteral(model.name);
  await db.run(`delete from _lake.model_unique where model = ${name}`);
  if (holds)
    await db.run(
      `insert into _lake.model_unique select ${name}, ${quoteLiteral(sqlHash(model))}, count(*) from main.${quoteIdent(model.name)}`,
    );
}

/**
 * Whether the build recorded the model's key as holding, for its SQL of now and the rows it has now (a
 * count that moved means someone wrote to the warehouse by hand). A warehouse older than the record says no.
 */
export async function uniqueKeyHolds(db: DuckDBConnection, model: Model): Promise<boolean> {
  try {
    const [row] = await queryRows(
      db,
      `select u.sha256, u.row_count = (select count(*) from main.${quoteIdent(model.name)}) as same_rows
       from _lake.model_unique as u where u.model = ${quoteLiteral(model.name)}`,
    );
    return row?.sha256 === sqlHash(model) && row?.same_rows === true;
  } catch {
    return false;
  }
}

/** An incremental model with nothing new changed nothing. */
export async function noChanges(db: DuckDBConnection, model: Model) {
  await db.run(
    `create or replace table ${changedRowsOf(model.name)} as select * from ${quoteIdent(model.name)} limit 0`,
  );
}

/**
 * Builds a `compare_to_last` model whole beside the table the last build left (`sql`, its select), and
 * keeps that table if the rows are the same (the same columns, the same rows, duplicates counted):
 * 'unchanged'. Otherwise the new rows replace it: 'full'.
 */
export async function rebuildUnlessSame(
  db: DuckDBConnection,
  model: Model,
  sql: string,
): Promise<'full' | 'unchanged'> {
  const table = quoteIdent(model.name);
  await db.run(`create or replace temp table __rebuilt as\n${sql}`);
  try {
    const columns = async (relation: string) =>
      JSON.stringify(
        (await queryRows(db, `describe ${relation}`)).map((c) => [c.column_name, c.column_type]),
      );
    if ((await columns(`main.${table}`)) === (await columns('temp.__rebuilt'))) {
      const [differ] = await queryRows(
        db,
        `select (select count(*) from (from main.${table} except all from temp.__rebuilt))
              + (select count(*) from (from temp.__rebuilt except all from main.${table})) as n`,
      );
      if (Number(differ?.n) === 0) {
        await noChanges(db, model);
        return 'unchanged';
      }
    }
    await db.run(`drop table main.${table}`);
    await db.run(`create table main.${table} as from temp.__rebuilt`);
    return 'full';
  } finally {
    await db.run('drop table if exists temp.__rebuilt');
  }
}

/**
 * Rebuilds only the rows of an `incremental_by` model whose column values its source's changed rows
 * touch: those are deleted and computed again (the model's SQL, filtered to them). 'unchanged' when the
 * source changed nothing.
 */
export async function applyIncrementalBy(
  db: DuckDBConnection,
  model: Model & { incrementalBy: NonNullable<Model['incrementalBy']> },
  sql: string,
): Promise<'incremental' | 'unchanged'> {
  const { column, expression, source } = model.incrementalBy;
  const table = quoteIdent(model.name);
  await db.run(
    `create or replace temp table __touched as select distinct ${expression} as value from ${changedRowsOf(source)}`,
  );
  const [touched] = await queryRows(db, 'select count(*) as n from __touched');
  if (Number(touched?.n) === 0) return 'unchanged';
  await db.run(`delete from ${table} where ${quoteIdent(column)} in (select value from __touched)`);
  // The source narrowed to the rows of the touched values, under its own name (DuckDB looks in temp
  // first): the model computes those values alone instead of all of them, to keep a few. It reads no
  // other model (models.ts), and its rows of a value come from those rows only.
  const narrowed = quoteIdent(source);
  await db.run(
    `create temp table ${narrowed} as select * from main.${narrowed} where ${expression} in (select value from __touched)`,
  );
  await db.run(
    `insert into ${table} by name select * from (\n${sql}\n) where ${quoteIdent(column)} in (select value from __touched)`,
  );
  await db.run(`drop table temp.${narrowed}`);
  await db.run('drop table __touched');
  return 'incremental';
}

type ExtendingModel = Model & { incrementalAfter: NonNullable<Model['incrementalAfter']> };

/** How each model an `incremental_after` model reads was built in this build (undefined: not built). */
export type ReadModes = ReadonlyMap<string, 'full' | 'incremental' | 'unchanged' | undefined>;

/**
 * Extends an `incremental_after` model by its source's rows later than the newest it read: the model's
 * SQL reads them under the source's name (DuckDB looks in temp first), the other models it reads whole,
 * and its own rows through `{{ this }}`; the rows it computes replace those of their keys (`applyDelta`).
 * Undefined when it cannot, and the model is to be built whole: nothing recorded of what it read (built
 * before this was recorded), a model it reads built whole, or a row a model it reads changed in this
 * build that is not later than that (out of order, or read again; or that model has no such column).
 */
export async function applyIncrementalAfter(
  db: DuckDBConnection,
  model: ExtendingModel,
  sql: string,
  modes: ReadModes,
  /** Records the newest value of the order column in a relation, and whether the delta's keys held. */
  record: (relation: string, holds: boolean) => Promise<void>,
): Promise<'incremental' | 'unchanged' | undefined> {
  const [read] = await queryRows(
    db,
    `select through, type from _lake.model_through where model = ${quoteLiteral(model.name)}`,
  );
  if (!read) return undefined;
  const { column: order, source } = model.incrementalAfter;
  const column = quoteIdent(order);
  const bound = `cast(${quoteLiteral(String(read.through))} as ${read.type})`;
  for (const name of model.dependsOn) {
    const mode = modes.get(name);
    if (mode !== 'incremental' && mode !== 'unchanged') return undefined;
    if (!(await changedColumns(db, name))?.includes(order)) return undefined;
    const [late] = await queryRows(
      db,
      `select count(*) as n from ${changedRowsOf(name)} where not (${column} > ${bound}) or ${column} is null`,
    );
    if (Number(late?.n) > 0) return undefined;
  }
  const narrowed = quoteIdent(source);
  await db.run(`create temp table ${narrowed} as select * from main.${narrowed} where ${column} > ${bound}`);
  try {
    const [later] = await queryRows(db, `select count(*) as n from temp.${narrowed}`);
    if (Number(later?.n) === 0) {
      await noChanges(db, model);
      return 'unchanged';
    }
    const holds = await applyDelta(db, model, withThis(sql, `main.${quoteIdent(model.name)}`));
    // All of them later than what it had read: the newest of them is the newest it has read now.
    await record(`temp.${narrowed}`, holds);
    return 'incremental';
  } finally {
    await db.run(`drop table temp.${narrowed}`);
  }
}

/** The columns of the rows a model changed in this build; undefined when it left no record of them. */
async function changedColumns(db: DuckDBConnection, model: string): Promise<string[] | undefined> {
  const rows = await queryRows(
    db,
    `select column_name from duckdb_columns() where database_name = ${quoteLiteral(SCRATCH)} and table_name = ${quoteLiteral(changedTable(model))}`,
  );
  return rows.length === 0 ? undefined : rows.map((r) => String(r.column_name));
}

/** What `{{ this }}` is when a model is built whole: an empty table of its documented columns. */
export const nothingBuilt = (model: Model): string =>
  `(select ${model.columns.map((c) => `null as ${quoteIdent(c.name)}`).join(', ')} where false)`;

/**
 * Records the newest value of its order column an `incremental_after` model has now read: the newest in
 * `relation` (by default its whole source; none when that is empty, and the next build builds it whole).
 */
export async function recordThrough(
  db: DuckDBConnection,
  model: ExtendingModel,
  relation = `main.${quoteIdent(model.incrementalAfter.source)}`,
) {
  const name = quoteLiteral(model.name);
  const column = quoteIdent(model.incrementalAfter.column);
  await db.run(`delete from _lake.model_through where model = ${name}`);
  await db.run(
    `insert into _lake.model_through select ${name}, cast(max(${column}) as varchar), typeof(max(${column}))
     from ${relation} having max(${column}) is not null`,
  );
}

/**
 * Records what the model now holds: every live file of its stream (a model over other models: none), the
 * newest confirmation of that stream, and the SQL it was built with.
 */
export async function recordHeld(db: DuckDBConnection, model: Model, lake: LakeSources) {
  const name = quoteLiteral(model.name);
  const stream = model.lakeStreams[0];
  await db.run(`delete from _lake.model_files where model = ${name}`);
  const appender = await db.createAppender('model_files', '_lake');
  for (const file of stream === undefined ? [] : dataFilesOf(lake, stream)) {
    appender.appendVarchar(model.name);
    appender.appendVarchar(file.path);
    appender.endRow();
  }
  appender.closeSync();
  await recordSql(db, model);
  const newest = stream === undefined ? undefined : await newestConfirmation(db, stream);
  await db.run(
    `insert or replace into _lake.model_confirmed values (${name}, ${newest === undefined ? 'null' : newest})`,
  );
}

/** The SQL a model was last built with, to tell whether its rows may be kept. */
export async function recordSql(db: DuckDBConnection, model: Model) {
  await db.run(
    `insert or replace into _lake.model_sql values (${quoteLiteral(model.name)}, ${quoteLiteral(sqlHash(model))})`,
  );
}

export async function sameSql(db: DuckDBConnection, model: Model): Promise<boolean> {
  const [built] = await queryRows(
    db,
    `select sha256 from _lake.model_sql where model = ${quoteLiteral(model.name)}`,
  );
  return built?.sha256 === sqlHash(model);
}

/** A model that is no longer incremental (or is dropped) holds nothing. */
export async function forgetHeld(db: DuckDBConnection, model: Model) {
  await db.run(`delete from _lake.model_files where model = ${quoteLiteral(model.name)}`);
  await db.run(`delete from _lake.model_sql where model = ${quoteLiteral(model.name)}`);
  await db.run(`delete from _lake.model_confirmed where model = ${quoteLiteral(model.name)}`);
  await db.run(`delete from _lake.model_through where model = ${quoteLiteral(model.name)}`);
  await db.run(`delete from _lake.model_unique where model = ${quoteLiteral(model.name)}`);
}
