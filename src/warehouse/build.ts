import { copyFile, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type DuckDBConnection, DuckDBTimestampTZValue } from '@duckdb/node-api';
import { partitionId, readLakeState, type StreamState } from '../load/index.ts';
import { queryRows, quoteIdent, quoteLiteral, withDuckDB } from './duckdb.ts';
import { buildOrder, loadModels, type Model, selectModels } from './models.ts';

export const WAREHOUSE_FILE = 'warehouse.duckdb';
export const DEFAULT_MODELS_DIR = 'sql/models';

export interface BuildOptions {
  dataDir: string;
  modelsDir?: string;
  /** `--select`: models to rebuild (`name`, `name+`, `+name`); the others are kept from the last build. */
  select?: string;
}

export interface BuildResult {
  path: string;
  built: { name: string; materialized: Model['materialized']; rows?: number; seconds: number }[];
  /** Models not built, and why (a stream with no data yet, or something they depend on). */
  skipped: { name: string; reason: string }[];
  kept: string[];
}

/**
 * Builds the models into a copy of the warehouse beside it, then renames the copy over it. A reader
 * holding the old file keeps reading the old tables (its open file lives on); the next one to open
 * the path sees every new table at once. There is never a half-built warehouse at the path.
 */
export async function buildWarehouse(options: BuildOptions): Promise<BuildResult> {
  const models = loadModels(options.modelsDir ?? DEFAULT_MODELS_DIR);
  const order = buildOrder(models);
  const selected = selectModels(models, options.select);
  const target = resolve(options.dataDir, WAREHOUSE_FILE);
  const aside = `${target}.building-${process.pid}`;
  await mkdir(dirname(target), { recursive: true });
  await rm(aside, { force: true });
  await rm(`${aside}.wal`, { force: true });
  const partial = options.select !== undefined && (await exists(target));
  if (partial) await copyFile(target, aside);

  const lake = await lakeSources(resolve(options.dataDir, 'lake'));
  const result: BuildResult = { path: target, built: [], skipped: [], kept: [] };
  const unavailable = new Map<string, string>();
  try {
    await withDuckDB(aside, async (db) => {
      await writeConfirmations(db, lake);
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
          continue;
        }
        const started = Date.now();
        await dropObject(db, model.name);
        const kind = model.materialized === 'table' ? 'table' : 'view';
        try {
          await db.run(`create ${kind} ${quoteIdent(model.name)} as\n${withLake(model.sql, lake)}`);
        } catch (error) {
          throw new Error(`model ${model.name} (${model.path}) failed: ${(error as Error).message}`, {
            cause: error,
          });
        }
        const rows =
          kind === 'table'
            ? Number((await queryRows(db, `select count(*) as n from ${quoteIdent(model.name)}`))[0]?.n)
            : undefined;
        result.built.push({
          name: model.name,
          materialized: model.materialized,
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

/** What the models read of the lake: each stream's committed files, as the commit log names them. */
export interface LakeSources {
  lakeDir: string;
  streams: Map<string, StreamState>;
}

export async function lakeSources(lakeDir: string): Promise<LakeSources> {
  return { lakeDir, streams: await readLakeState(dirname(lakeDir)) };
}

/** Unchanged snapshots, recorded without rows: the rows they repeat are read again at these times. */
const CONFIRMATIONS = '_lake.snapshot_confirmations';

async function writeConfirmations(db: DuckDBConnection, lake: LakeSources) {
  await db.run('create schema if not exists _lake');
  await db.run(
    `create or replace table ${CONFIRMATIONS} (stream varchar, "partition" varchar, snapshot_at timestamptz, confirmed_at timestamptz)`,
  );
  const appender = await db.createAppender('snapshot_confirmations', '_lake');
  for (const [stream, state] of lake.streams)
    for (const p of state.partitions.values())
      for (const [confirmedAt, snapshotAt] of p.confirmations) {
        appender.appendVarchar(stream);
        appender.appendVarchar(partitionId(p.partition));
        appender.appendTimestampTZ(new DuckDBTimestampTZValue(BigInt(snapshotAt) * 1000n));
        appender.appendTimestampTZ(new DuckDBTimestampTZValue(BigInt(confirmedAt) * 1000n));
        appender.endRow();
      }
  appender.closeSync();
}

/**
 * `{{ lake('stream') }}` → exactly the stream's committed Parquet files (never a folder glob, which could
 * see a file mid-move), Hive folder values as text. A snapshot stream's rows are read again at every
 * time an unchanged answer confirmed them (stamped with that time, `_snapshot_at` and `_extracted_at`),
 * so a model sees one full snapshot per observation, as if each had been stored whole.
 */
export function withLake(sql: string, lake: LakeSources): string {
  return sql.replace(/\{\{\s*lake\(\s*'([a-z0-9_]+)'\s*\)\s*\}\}/g, (_, stream: string) => {
    const state = lake.streams.get(stream);
    const files = (state?.files ?? [])
      .filter((f) => f.table === 'data')
      .map((f) => quoteLiteral(join(lake.lakeDir, ...f.path.split('/'))));
    const read = `read_parquet([${files.join(', ')}], hive_partitioning = true, hive_types_autocast = false, union_by_name = true)`;
    const confirmed = [...(state?.partitions.values() ?? [])].some((p) => p.confirmations.length > 0);
    if (!confirmed) return read;
    return `(
      select * from ${read}
      union all by name
      select rows.* replace (
        confirmations.confirmed_at as _snapshot_at,
        confirmations.confirmed_at as _extracted_at
      )
      from ${read} as rows
      inner join ${CONFIRMATIONS} as confirmations
        on confirmations.stream = ${quoteLiteral(stream)}
        and confirmations."partition" = rows._partition
        and confirmations.snapshot_at = rows._snapshot_at
    )`;
  });
}

function whyUnavailable(
  model: Model,
  lake: LakeSources,
  unavailable: Map<string, string>,
): string | undefined {
  for (const d of model.dependsOn) if (unavailable.has(d)) return `${d} was not built`;
  for (const stream of model.lakeStreams)
    if (!lake.streams.get(stream)?.files.some((f) => f.table === 'data'))
      return `no data extracted yet for stream ${stream}`;
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

async function fsyncFile(path: string) {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
