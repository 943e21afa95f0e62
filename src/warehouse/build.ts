import { copyFile, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
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

  const lakeDir = resolve(options.dataDir, 'lake');
  const result: BuildResult = { path: target, built: [], skipped: [], kept: [] };
  const unavailable = new Map<string, string>();
  try {
    await withDuckDB(aside, async (db) => {
      for (const model of order) {
        if (!selected.has(model.name)) {
          if (partial) result.kept.push(model.name);
          continue;
        }
        const reason = await whyUnavailable(model, lakeDir, unavailable);
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
          await db.run(`create ${kind} ${quoteIdent(model.name)} as\n${withLake(model.sql, lakeDir)}`);
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

/** `{{ lake('stream') }}` → the stream's committed Parquet files, Hive folder values as text. */
export function withLake(sql: string, lakeDir: string): string {
  return sql.replace(/\{\{\s*lake\(\s*'([a-z0-9_]+)'\s*\)\s*\}\}/g, (_, stream: string) => {
    const glob = quoteLiteral(join(lakeDir, stream, '**', '*.parquet'));
    return `read_parquet(${glob}, hive_partitioning = true, hive_types_autocast = false, union_by_name = true)`;
  });
}

async function whyUnavailable(
  model: Model,
  lakeDir: string,
  unavailable: Map<string, string>,
): Promise<string | undefined> {
  for (const d of model.dependsOn) if (unavailable.has(d)) return `${d} was not built`;
  for (const stream of model.lakeStreams)
    if (!(await hasParquet(join(lakeDir, stream)))) return `no data extracted yet for stream ${stream}`;
  return undefined;
}

async function hasParquet(dir: string): Promise<boolean> {
  try {
    for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
      if (entry.isFile() && entry.name.endsWith('.parquet')) return true;
  } catch {
    return false;
  }
  return false;
}

/** Drops a table or view of that name, whichever it is, so a model may change its materialization. */
async function dropObject(db: Parameters<Parameters<typeof withDuckDB>[1]>[0], name: string) {
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
