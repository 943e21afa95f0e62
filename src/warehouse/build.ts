import { open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  acquireLock,
  type DataDirLock,
  fsyncFile,
  isObjectStorage,
  type LockOptions,
  mkdirDurable,
  processLimitOf,
  processLimitReason,
} from '../load/index.ts';
import { syncConfirmations } from './confirmations.ts';
import { type DuckDBDatabase, openDuckDB, queryRows, quoteIdent, quoteLiteral } from './duckdb.ts';
import { defineWarehouseFunctions } from './functions.ts';
import {
  applyDelta,
  applyIncrementalAfter,
  applyIncrementalBy,
  attachScratch,
  catchesUpAsCheaply,
  detachScratch,
  ensureBookkeeping,
  forgetHeld,
  isKeepableWhole,
  keepsWhole,
  keyHoldsAfterDelta,
  noChanges,
  nothingBuilt,
  planIncremental,
  rebuildUnlessSame,
  recordHeld,
  recordSql,
  recordThrough,
  recordUnique,
  sameSql,
} from './incremental.ts';
import { writePartitions } from './lake-partitions.ts';
import { dataFilesOf, type LakeSources, lakeSources, withLake } from './lake-sources.ts';
import { mirrorLake } from './mirror.ts';
import { buildOrder, isOptionalFor, loadModels, type Model, selectModels } from './models.ts';
import { deviceFailureCode, errnoReason } from './output.ts';
import { buildLockOf, defaultModelsDir, warehouseIn } from './paths.ts';
import { forgetPrevious, keepAsPrevious, previousOf, startAside } from './previous.ts';
import { checkLimit, runScheduled } from './schedule.ts';
import { warehouseObjects } from './sql.ts';
import { withThis } from './templates.ts';

export { DEFAULT_MODELS_DIR, WAREHOUSE_FILE } from './paths.ts';

export interface BuildOptions {
  /** The lake's data directory, or `s3://bucket/prefix` (with a catalog). */
  dataDir: string;
  /** Where the warehouse is built (and an object-storage lake mirrored): default the data directory. */
  localDir?: string;
  modelsDir?: string;
  /** Ignore the last build: every model from the whole lake (what a deleted warehouse gets). */
  fromScratch?: boolean;
  /** `--select`: models to rebuild (`name`, `name+`, `+name`); the others are kept from the last build. */
  select?: string;
  /** The PostgreSQL catalog holding the lake's commit log, when it has one. */
  catalog?: string;
  /**
   * How the warehouse's build lock (`warehouse.duckdb.lock`) is taken: by default a build that finds
   * another one running fails with LockHeldError (exit 75); `wait` queues behind it.
   */
  lock?: LockOptions;
  /** Models built at once, each on a connection of its own (default `MODELS_AT_ONCE`). */
  concurrency?: number;
}

/**
 * Models built at once by default. DuckDB runs each statement on every core already; a second model
 * fills what one leaves idle (stretches on one thread, small models). A third gained nothing on the
 * bench and held more memory (bench/README.md, `bench/warehouse.ts --concurrency`).
 */
export const MODELS_AT_ONCE = 2;

export interface BuiltModel {
  name: string;
  materialized: Model['materialized'];
  /** `incremental`: only new lake files were read; `unchanged`: nothing new, kept from the last build. */
  mode: 'full' | 'incremental' | 'unchanged';
  rows?: number;
  seconds: number;
  /** When it started and ended, in seconds since the build began: models built at once overlap. */
  startedAt: number;
  endedAt: number;
}

export interface BuildResult {
  path: string;
  /**
   * What the build brought up to date: the warehouse's previous generation (written where it changed),
   * a copy of the warehouse (`--select`, or no previous one fit: a reader holds it, or it would take more
   * work than the last build), or nothing.
   */
  startedFrom: 'previous' | 'copy' | 'scratch';
  built: BuiltModel[];
  /** Models not built, and why (a stream with no data yet, or something they depend on). */
  skipped: { name: string; reason: string }[];
  kept: string[];
  /** Why the last build's warehouse was not started from (it could not be opened), when it was not. */
  rebuilt?: string;
}

/**
 * Builds the models into a copy of the warehouse beside it, then renames the copy over it. A reader
 * holding the old file keeps reading the old tables (its open file lives on); the next one to open
 * the path sees every new table at once. There is never a half-built warehouse at the path.
 *
 * The file aside starts as an earlier build (the previous generation, kept beside the warehouse, or a
 * copy of the last build: previous.ts), so an incremental model adds only the lake files new since that
 * build, and one with nothing new is kept as it is; so is a model built whole whose inputs did not
 * change (incremental.ts). Every other model is built again from its inputs.
 * Models are built up to `concurrency` at once, each on a connection of its own, each as soon as what
 * it depends on is built; a model's tables are the same whatever was built beside it.
 */
export async function buildWarehouse(options: BuildOptions): Promise<BuildResult> {
  const concurrency = options.concurrency ?? MODELS_AT_ONCE;
  checkLimit(concurrency, 'concurrency');
  const models = loadModels(options.modelsDir ?? defaultModelsDir());
  const target = warehouseIn(options.localDir ?? options.dataDir);
  try {
    await mkdirDurable(dirname(target));
    // One build of a warehouse at a time: two would each swap their copy in, and the one that started
    // first, from an older lake, could land last. Holding the lock also tells that a copy left aside is a
    // killed build's, so it is deleted instead of filling the disk run after run.
    const lock = await acquireLock(buildLockOf(target), options.lock);
    try {
      await removeCopiesAside(target);
      return await buildAside(options, models, target, concurrency, lock);
    } finally {
      await lock.release();
    }
  } catch (error) {
    // The lock's file too: a device with no room for it has none for the build.
    throw (
      deviceFailure(error, dirname(target)) ??
      limitFailure(error, dirname(target)) ??
      ownFileRefused(error, target) ??
      error
    );
  }
}

/** A build stopped by a limit of the process (open files, memory), as one line; undefined for any other. */
function limitFailure(error: unknown, dir: string): Error | undefined {
  const limit = processLimitOf(error);
  if (limit === undefined) return undefined;
  return new Error(
    `building the warehouse in ${dir} failed: ${processLimitReason(limit)}; the warehouse is unchanged`,
    { cause: error },
  );
}

/**
 * One of the warehouse's own files (the warehouse, its previous generation, its write-ahead log) that
 * the build may not remove or replace, though its folder is writable: an immutable file (`chattr +i`),
 * or one owned by another user in a sticky folder. One line naming it; undefined for any other failure.
 */
function ownFileRefused(error: unknown, target: string): Error | undefined {
  const { code, path, dest } = error as NodeJS.ErrnoException & { dest?: string };
  if (code !== 'EPERM' && code !== 'EACCES') return undefined;
  const file = [dest, path].find(
    (p) =>
      p !== undefined &&
      dirname(resolve(p)) === dirname(resolve(target)) &&
      basename(p).startsWith(basename(target)),
  );
  if (file === undefined) return undefined;
  return new Error(
    `the build cannot replace or remove ${file}: ${errnoReason(error)}; it may be immutable (lsattr shows an i: ` +
      `\`chattr -i ${file}\`) or not yours; fix that or delete the file. The warehouse is unchanged`,
    { cause: error },
  );
}

/**
 * A build stopped by its device (full, over quota or a file size limit, failing) as one line that says
 * so: the build wrote aside, so the warehouse is the last build's, and nothing is to be fixed in the
 * models or the lake. Undefined for any other failure.
 */
function deviceFailure(error: unknown, dir: string): Error | undefined {
  const code = deviceFailureCode(error);
  if (code === undefined) return undefined;
  return new Error(
    `writing the warehouse in ${dir} failed: ${errnoReason({ code })}; the warehouse is unchanged, and the next build starts again once the device has room`,
    { cause: error },
  );
}

/** Builds a copy of the warehouse beside it, then swaps it in. */
async function buildAside(
  options: BuildOptions,
  models: Model[],
  target: string,
  concurrency: number,
  lock: DataDirLock,
): Promise<BuildResult> {
  const order = buildOrder(models);
  const selected = selectModels(models, options.select);
  const aside = `${target}${ASIDE}${process.pid}`;
  const existed = !options.fromScratch && (await exists(target));
  // A warehouse DuckDB cannot open (damaged, or some other file) holds nothing the lake does not: the
  // build starts from the previous generation or from nothing instead, and the result says so.
  const unreadable = existed && !(await isDuckDBFile(target));
  const lake = await readLake(options);
  const startedFrom = existed
    ? await startAside(target, aside, {
        // A --select build keeps the other models as the last build left them: it starts from a copy of it.
        reuse: options.select === undefined || unreadable,
        copy: !unreadable,
        catchesUp: unreadable ? async () => true : (db) => catchesUpAsCheaply(db, target, models, lake),
      })
    : await forgetPrevious(target).then(() => 'scratch' as const);
  const partial = options.select !== undefined && startedFrom === 'copy';

  const kept = partial ? order.filter((m) => !selected.has(m.name)).map((m) => m.name) : [];
  let outcomes: ReadonlyMap<string, Outcome> = new Map();
  try {
    const database = await openDuckDB(aside);
    try {
      const db = await database.connect();
      await syncConfirmations(db, lake);
      await writePartitions(db, lake);
      await ensureBookkeeping(db);
      await defineWarehouseFunctions(db);
      await attachScratch(db);
      const present = await warehouseObjects(db);
      if (!partial)
        for (const name of present.keys())
          if (!models.some((m) => m.name === name)) await dropObject(db, name);
      outcomes = await buildModels(
        database,
        order.filter((m) => selected.has(m.name)),
        {
          lake,
          present,
          concurrency,
        },
      );
      await detachScratch(db);
      await db.run('checkpoint');
    } finally {
      database.close();
    }
    await fsyncFile(aside);
    // A build paused past its lock's heartbeats (a stopped container) may wake after another build took
    // the lock and swapped a newer warehouse in: this one's, from an older lake, must not land over it.
    lock.assertHeld();
    // A write-ahead log left by a crashed writer belongs to the old file; it must not be replayed onto the new one.
    await rm(`${target}.wal`, { force: true });
    if (existed && !unreadable) await keepAsPrevious(target);
    await rename(aside, target);
    await fsyncFile(dirname(target));
  } finally {
    await rm(aside, { force: true });
    await rm(`${aside}.wal`, { force: true });
  }
  const result: BuildResult = {
    path: target,
    startedFrom,
    built: [],
    skipped: [],
    kept,
    ...(unreadable
      ? {
          rebuilt: `${target} was not a DuckDB database file: ${
            startedFrom === 'previous'
              ? `the build started from the one before it (${basename(previousOf(target))})`
              : 'every model was built anew from the lake'
          }`,
        }
      : {}),
  };
  // In build order, whatever order they finished in.
  for (const model of order) {
    const outcome = outcomes.get(model.name);
    if (outcome && 'built' in outcome) result.built.push(outcome.built);
    else if (outcome) result.skipped.push({ name: model.name, reason: outcome.skipped });
  }
  return result;
}

/** What became of a model in a build. */
type Outcome = { built: BuiltModel } | { skipped: string };

const wasSkipped = (outcome: Outcome | undefined): outcome is { skipped: string } =>
  outcome !== undefined && 'skipped' in outcome;

/** How a model was built in this build; undefined when it was skipped or not built. */
const modeOf = (outcome: Outcome | undefined): BuiltModel['mode'] | undefined =>
  outcome && 'built' in outcome ? outcome.built.mode : undefined;

/**
 * Builds `models` (in build order) up to `concurrency` at once, each on a new connection of `database`,
 * each once everything it depends on is built or skipped. A model that cannot be built (no data, or
 * something it depends on was not built) is skipped and dropped. The first model to fail stops the
 * build (the others running are interrupted) and is thrown, named.
 */
async function buildModels(
  database: DuckDBDatabase,
  models: readonly Model[],
  build: {
    lake: LakeSources;
    present: ReadonlyMap<string, 'table' | 'view'>;
    concurrency: number;
  },
): Promise<ReadonlyMap<string, Outcome>> {
  const { lake, present } = build;
  const outcomes = new Map<string, Outcome>();
  const began = performance.now();
  const now = () => (performance.now() - began) / 1000;
  // The bookkeeping tables are shared by every model: one writer at a time, so no two transactions conflict.
  const bookkeeping = serially();
  await runScheduled({
    tasks: models,
    limit: build.concurrency,
    priority: workAhead(models, lake),
    run: async (model, signal) => {
      const startedAt = now();
      const db = await database.connect();
      const interrupt = () => db.interrupt();
      signal.addEventListener('abort', interrupt);
      try {
        const reason = whyUnavailable(model, lake, outcomes);
        if (reason) {
          outcomes.set(model.name, { skipped: reason });
          await dropObject(db, model.name);
          await bookkeeping(() => forgetHeld(db, model));
          return;
        }
        let mode: BuiltModel['mode'];
        let rows: number | undefined;
        try {
          signal.throwIfAborted();
          // An optional model that was not built: an empty table of the columns this one reads, found
          // before the warehouse's tables (DuckDB looks in `temp` first); it goes with this connection.
          for (const o of model.optional)
            if (wasSkipped(outcomes.get(o.model)))
              await db.run(`create temp table ${quoteIdent(o.model)} (${o.columns})`);
          mode = await buildModel(
            db,
            model,
            lake,
            present.get(model.name) === 'table',
            outcomes,
            bookkeeping,
          );
          rows =
            model.materialized === 'table'
              ? Number((await queryRows(db, `select count(*) as n from ${quoteIdent(model.name)}`))[0]?.n)
              : undefined;
        } catch (error) {
          throw new Error(`model ${model.name} (${model.path}) failed: ${(error as Error).message}`, {
            cause: error,
          });
        }
        const endedAt = now();
        outcomes.set(model.name, {
          built: {
            name: model.name,
            materialized: model.materialized,
            mode,
            ...(rows !== undefined ? { rows } : {}),
            seconds: endedAt - startedAt,
            startedAt,
            endedAt,
          },
        });
      } finally {
        signal.removeEventListener('abort', interrupt);
        db.closeSync();
      }
    },
  });
  return outcomes;
}

/**
 * Which ready model starts first: the one ahead of the most work, as far as the lake tells before the
 * build. A model's work is the rows of the lake files it reads (a model over other models: theirs);
 * the work ahead of it is its own plus the most ahead of any model built on it. So the longest chains
 * (the largest streams' staging models, then their marts) start first, and the build does not end on
 * one of them alone while the other connection idles.
 */
function workAhead(models: readonly Model[], lake: LakeSources): (model: Model) => number {
  const work = new Map<string, number>();
  for (const m of models) {
    const read = m.lakeStreams.reduce(
      (n, stream) => n + dataFilesOf(lake, stream).reduce((r, f) => r + f.rows, 0),
      0,
    );
    work.set(m.name, read > 0 ? read : m.dependsOn.reduce((n, d) => n + (work.get(d) ?? 0), 0));
  }
  const ahead = new Map<string, number>();
  for (const m of [...models].reverse()) {
    const after = models.filter((o) => o.dependsOn.includes(m.name)).map((o) => ahead.get(o.name) ?? 0);
    ahead.set(m.name, (work.get(m.name) ?? 0) + Math.max(0, ...after));
  }
  return (model) => ahead.get(model.name) ?? 0;
}

/** Runs the functions given to it one at a time, in the order given, whichever connection calls. */
function serially(): <T>(work: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (work) => {
    const next = last.then(work, work);
    last = next.catch(() => undefined);
    return next;
  };
}

/**
 * Builds one model: an incremental one from its new files, an `incremental_by` one for the values its
 * source's new rows touch, an `incremental_after` one by extending its last build with its source's later
 * rows, where each can; one built whole and kept while nothing it reads changed; any other from scratch.
 */
async function buildModel(
  db: DuckDBConnection,
  model: Model,
  lake: LakeSources,
  isTable: boolean,
  outcomes: ReadonlyMap<string, Outcome>,
  bookkeeping: <T>(work: () => Promise<T>) => Promise<T>,
): Promise<BuiltModel['mode']> {
  if (model.incremental) {
    const plan = await planIncremental(db, model, lake, isTable);
    if (plan.kind === 'unchanged') {
      await noChanges(db, model);
      return 'unchanged';
    }
    if (plan.kind === 'delta') {
      const stream = model.lakeStreams[0] as string;
      const delta = { files: plan.files, confirmedAfter: plan.confirmedAfter };
      const deltaHolds = await applyDelta(db, model, withLake(model.sql, lake, new Map([[stream, delta]])));
      const holds = await keyHoldsAfterDelta(db, model, deltaHolds);
      await bookkeeping(async () => {
        await recordHeld(db, model, lake);
        await recordUnique(db, model, holds);
      });
      return 'incremental';
    }
  }
  // Built whole, and nothing it reads changed since the build this file holds: kept as it is.
  if (
    isTable &&
    isKeepableWhole(model) &&
    model.dependsOn.every((d) => modeOf(outcomes.get(d)) === 'unchanged') &&
    (await keepsWhole(db, model, lake))
  ) {
    // Its files recorded afresh, so that what a compaction merged is followed from here on.
    await bookkeeping(() => recordHeld(db, model, lake));
    await noChanges(db, model);
    return 'unchanged';
  }
  const by = model.incrementalBy;
  const source = by && modeOf(outcomes.get(by.source));
  if (by && isTable && (source === 'incremental' || source === 'unchanged') && (await sameSql(db, model)))
    return applyIncrementalBy(db, { ...model, incrementalBy: by }, withLake(model.sql, lake));
  const after = model.incrementalAfter && { ...model, incrementalAfter: model.incrementalAfter };
  if (after && isTable && (await sameSql(db, model))) {
    const modes = new Map(model.dependsOn.map((d) => [d, modeOf(outcomes.get(d))]));
    const mode = await applyIncrementalAfter(
      db,
      after,
      withLake(model.sql, lake),
      modes,
      async (relation, deltaHolds) => {
        const holds = await keyHoldsAfterDelta(db, model, deltaHolds);
        await bookkeeping(async () => {
          await recordThrough(db, after, relation);
          await recordUnique(db, model, holds);
        });
      },
    );
    if (mode) return mode;
  }
  const kind = model.materialized === 'table' ? 'table' : 'view';
  const sql = withThis(withLake(model.sql, lake), nothingBuilt(model));
  // Built whole every build; the same rows as the last build's count as unchanged for the models on it.
  if (model.compareToLast && isTable && (await sameSql(db, model))) {
    if ((await rebuildUnlessSame(db, model, sql)) === 'unchanged') return 'unchanged';
  } else {
    await dropObject(db, model.name);
    await db.run(`create ${kind} ${quoteIdent(model.name)} as\n${sql}`);
  }
  if (model.incremental || isKeepableWhole(model)) await bookkeeping(() => recordHeld(db, model, lake));
  else await bookkeeping(() => forgetHeld(db, model));
  // Not checked here (a build whole is already the longest): the first extension checks it, once.
  if (model.incremental || after) await bookkeeping(() => recordUnique(db, model, false));
  if (model.incrementalBy || after || model.compareToLast) await bookkeeping(() => recordSql(db, model));
  if (after) await bookkeeping(() => recordThrough(db, after));
  return 'full';
}

/** What a build's copy of the warehouse is named, after the warehouse's own name and before its pid. */
const ASIDE = '.building-';

/**
 * Deletes the copies (and their write-ahead logs) that builds left aside. Called with the build lock
 * held, so none of them is being built: each is what a killed build left behind.
 */
async function removeCopiesAside(target: string) {
  const prefix = `${basename(target)}${ASIDE}`;
  for (const name of await readdir(dirname(target)))
    if (name.startsWith(prefix)) await rm(join(dirname(target), name), { force: true });
}

/** The lake's committed files: in place, or mirrored from object storage into the local directory. */
async function readLake({ dataDir, catalog, localDir }: BuildOptions): Promise<LakeSources> {
  if (!isObjectStorage(dataDir)) return lakeSources(resolve(dataDir, 'lake'), catalog);
  if (!catalog)
    throw new Error(`${dataDir}: a lake on object storage is read through its catalog (--catalog)`);
  return mirrorLake(dataDir, catalog, resolve(localDir ?? 'data'));
}

function whyUnavailable(
  model: Model,
  lake: LakeSources,
  outcomes: ReadonlyMap<string, Outcome>,
): string | undefined {
  for (const d of model.dependsOn) {
    if (wasSkipped(outcomes.get(d)) && !isOptionalFor(model, d)) return `${d} was not built`;
  }
  for (const stream of model.lakeStreams)
    if (dataFilesOf(lake, stream).length === 0) return `no data extracted yet for stream ${stream}`;
  return undefined;
}

/** Drops a table or view of that name, whichever it is, so a model may change its materialization. */
async function dropObject(db: DuckDBConnection, name: string) {
  const rows = await queryRows(
    db,
    // The warehouse's own catalog: the scratch database attached for the build has a `main` schema too.
    `select table_type from information_schema.tables where table_catalog = current_database() and table_schema = 'main' and table_name = ${quoteLiteral(name)}`,
  );
  const type = rows[0]?.table_type;
  if (type === 'VIEW') await db.run(`drop view ${quoteIdent(name)}`);
  else if (type !== undefined) await db.run(`drop table ${quoteIdent(name)}`);
}

/**
 * Whether the file begins as a DuckDB database does (its magic bytes, where DuckDB looks first). Read
 * without opening it: DuckDB's lock would refuse an open while someone writes to it by hand.
 */
async function isDuckDBFile(path: string): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const header = Buffer.alloc(12);
    const { bytesRead } = await file.read(header, 0, 12, 0);
    return bytesRead === 12 && header.toString('latin1', 8, 12) === 'DUCK';
  } finally {
    await file.close();
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
