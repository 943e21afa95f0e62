import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fsyncFile, isObjectStorage } from '../load/index.ts';
import { queryRows, quoteIdent, quoteLiteral, withDuckDB } from './duckdb.ts';
import {
  applyDelta,
  applyIncrementalBy,
  ensureBookkeeping,
  forgetHeld,
  noChanges,
  planIncremental,
  recordHeld,
  recordSql,
  sameSql,
} from './incremental.ts';
import { writePartitions } from './lake-partitions.ts';
import { dataFilesOf, type LakeSources, lakeSources, withLake, writeConfirmations } from './lake-sources.ts';
import { mirrorLake } from './mirror.ts';
import { buildOrder, loadModels, type Model, selectModels } from './models.ts';
import { DEFAULT_MODELS_DIR, WAREHOUSE_FILE } from './paths.ts';
import { warehouseObjects } from './sql.ts';

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
}

export interface BuiltModel {
  name: string;
  materialized: Model['materialized'];
  /** `incremental`: only new lake files were read; `unchanged`: nothing new, kept from the last build. */
  mode: 'full' | 'incremental' | 'unchanged';
  rows?: number;
  seconds: number;
}

export interface BuildResult {
  path: string;
  built: BuiltModel[];
  /** Models not built, and why (a stream with no data yet, or something they depend on). */
  skipped: { name: string; reason: string }[];
  kept: string[];
}

/**
 * Builds the models into a copy of the warehouse beside it, then renames the copy over it. A reader
 * holding the old file keeps reading the old tables (its open file lives on); the next one to open
 * the path sees every new table at once. There is never a half-built warehouse at the path.
 *
 * The copy starts from the last build, so an incremental model adds only the lake files new since then
 * (and one with nothing new is kept as it is); every other model is built again from its inputs.
 */
export async function buildWarehouse(options: BuildOptions): Promise<BuildResult> {
  const models = loadModels(options.modelsDir ?? DEFAULT_MODELS_DIR);
  const order = buildOrder(models);
  const selected = selectModels(models, options.select);
  const target = resolve(options.localDir ?? options.dataDir, WAREHOUSE_FILE);
  const aside = `${target}.building-${process.pid}`;
  await mkdir(dirname(target), { recursive: true });
  await rm(aside, { force: true });
  await rm(`${aside}.wal`, { force: true });
  const previous = !options.fromScratch && (await exists(target));
  if (previous) await copyFile(target, aside);
  const partial = options.select !== undefined && previous;

  const lake = await readLake(options);
  const result: BuildResult = { path: target, built: [], skipped: [], kept: [] };
  const unavailable = new Map<string, string>();
  try {
    await withDuckDB(aside, async (db) => {
      await writeConfirmations(db, lake);
      await writePartitions(db, lake);
      await ensureBookkeeping(db);
      const present = await warehouseObjects(db);
      const modes = new Map<string, BuiltModel['mode']>();
      if (!partial)
        for (const name of present.keys())
          if (!models.some((m) => m.name === name)) await dropObject(db, name);
      for (const model of order) {
        if (!selected.has(model.name)) {
          if (partial) result.kept.push(model.name);
          continue;
        }
        const reason = whyUnavailable(model, lake, unavailable);
        if (reason) {
          unavailable.set(model.name, reason);
          result.skipped.push({ name: model.name, reason });
          await dropObject(db, model.name);
          await forgetHeld(db, model);
          continue;
        }
        const started = Date.now();
        let mode: BuiltModel['mode'] = 'full';
        try {
          mode = await buildModel(db, model, lake, present.get(model.name) === 'table', modes);
          modes.set(model.name, mode);
        } catch (error) {
          throw new Error(`model ${model.name} (${model.path}) failed: ${(error as Error).message}`, {
            cause: error,
          });
        }
        const rows =
          model.materialized === 'table'
            ? Number((await queryRows(db, `select count(*) as n from ${quoteIdent(model.name)}`))[0]?.n)
            : undefined;
        result.built.push({
          name: model.name,
          materialized: model.materialized,
          mode,
          ...(rows !== undefined ? { rows } : {}),
          seconds: (Date.now() - started) / 1000,
        });
      }
      await db.run('checkpoint');
    });
    await fsyncFile(aside);
    // A write-ahead log left by a crashed writer belongs to the old file; it must not be replayed onto the new one.
    await rm(`${target}.wal`, { force: true });
    await rename(aside, target);
    await fsyncFile(dirname(target));
  } finally {
    await rm(aside, { force: true });
    await rm(`${aside}.wal`, { force: true });
  }
  return result;
}

/** Builds one model: an incremental one from its new files where it can, any other from scratch. */
async function buildModel(
  db: DuckDBConnection,
  model: Model,
  lake: LakeSources,
  isTable: boolean,
  modes: ReadonlyMap<string, BuiltModel['mode']>,
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
      await applyDelta(db, model, withLake(model.sql, lake, new Map([[stream, delta]])));
      await recordHeld(db, model, lake);
      return 'incremental';
    }
  }
  const by = model.incrementalBy;
  const source = by && modes.get(by.source);
  if (by && isTable && (source === 'incremental' || source === 'unchanged') && (await sameSql(db, model)))
    return applyIncrementalBy(db, { ...model, incrementalBy: by }, withLake(model.sql, lake));
  await dropObject(db, model.name);
  const kind = model.materialized === 'table' ? 'table' : 'view';
  await db.run(`create ${kind} ${quoteIdent(model.name)} as\n${withLake(model.sql, lake)}`);
  if (model.incremental) await recordHeld(db, model, lake);
  else await forgetHeld(db, model);
  if (model.incrementalBy) await recordSql(db, model);
  return 'full';
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
  unavailable: Map<string, string>,
): string | undefined {
  for (const d of model.dependsOn) if (unavailable.has(d)) return `${d} was not built`;
  for (const stream of model.lakeStreams)
    if (dataFilesOf(lake, stream).length === 0) return `no data extracted yet for stream ${stream}`;
  return undefined;
}

/** Drops a table or view of that name, whichever it is, so a model may change its materialization. */
async function dropObject(db: DuckDBConnection, name: string) {
  const rows = await queryRows(
    db,
    `select table_type from information_schema.tables where table_schema = 'main' and table_name = ${quoteLiteral(name)}`,
  );
  const type = rows[0]?.table_type;
  if (type === 'VIEW') await db.run(`drop view ${quoteIdent(name)}`);
  else if (type !== undefined) await db.run(`drop table ${quoteIdent(name)}`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
