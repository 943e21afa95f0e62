import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative } from 'node:path';
import { expandTemplates, lakeStreamsOf, readsThis } from './templates.ts';

/** How a model is stored in the warehouse. */
export type Materialization = 'view' | 'table';

/** A column's documented meaning, for the data dictionary and the tests. */
export interface ColumnDoc {
  name: string;
  description: string;
}

/** One SQL model: a `select` in `sql/models/<layer>/<name>.sql`, and what its header comments declare. */
export interface Model {
  name: string;
  /** `staging` or `marts`: the folder it sits in. */
  layer: string;
  path: string;
  /** Its SQL with `{{ newest() }}` expanded; `{{ lake() }}` is filled in by the build (`withLake`). */
  sql: string;
  materialized: Materialization;
  description: string;
  columns: ColumnDoc[];
  /** Columns whose combination must be unique and not null (the model's key). */
  unique: string[];
  notNull: string[];
  /** Columns restricted to a set of values. */
  acceptedValues: { column: string; values: string[] }[];
  /**
   * `-- incremental: true`: each row is its key's newest version, computed from that key's rows alone, so
   * a build reads only the lake files new since the last one and replaces those keys.
   */
  incremental: boolean;
  /**
   * `-- incremental_by: metric_day = cast(make_timestamp(epoch_us(period_start)) as date) from stg_metrics`:
   * the model's rows with a given `column` value depend only on the rows of incremental model `source`
   * whose `expression` has that value, so a build recomputes only the values the source's new rows touch.
   */
  incrementalBy?: { column: string; expression: string; source: string };
  /**
   * `-- incremental_after: snapshot_at from stg_validators`: the rows of every model it reads arrive in
   * `column` order, and the model extends what it built from the rows it read before (its own rows,
   * `{{ this }}`) with the source's rows later than those (any other model it reads is read whole),
   * replacing the rows of its key it computes. A build in which a model it reads brings a row not later
   * than every row it read (out of order, or read again) builds it whole.
   */
  incrementalAfter?: { column: string; source: string };
  /**
   * `-- compare_to_last: true`: a small table built whole at every build (it reads the lake's record,
   * `_lake.partitions`, which every build rewrites) whose rows change far less often than that. Each
   * build compares its rows with the last build's; the same rows count as unchanged, so the models built
   * on it can be kept.
   */
  compareToLast: boolean;
  /** Streams of the lake the model reads through `{{ lake('<stream>') }}`. */
  lakeStreams: string[];
  /** Other models it selects from, found in its SQL. */
  dependsOn: string[];
  /**
   * `-- optional: stg_utxos (network varchar, utxo_id varchar, created_at timestamptz)`: a model it reads
   * whose rows it can do without. When that one is not built (its stream not extracted), this model is
   * built anyway, reading an empty table of those columns in its place, instead of being skipped.
   */
  optional: { model: string; columns: string }[];
}

/**
 * A folder named by `flag` must be one: a mistyped path would otherwise be a bare errno (or, for the
 * tests, a silent pass). Throws `Failure` with one line that names the flag.
 */
export function checkFolder(
  path: string,
  flag: string,
  holding: string,
  Failure: new (message: string) => Error,
): void {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info)
    throw new Failure(
      `${flag} ${path}: no such folder${isAbsolute(path) ? '' : ` in ${process.cwd()}`}; name the folder of ${holding}`,
    );
  if (!info.isDirectory()) throw new Failure(`${flag} ${path} is a file; name the folder of ${holding}`);
}

/** Whether `model` declares the model named `name` optional (`-- optional:`). */
export const isOptionalFor = (model: Model, name: string): boolean =>
  model.optional.some((o) => o.model === name);

/** A problem in the models themselves: one clear line, exit 2. */
export class ModelError extends Error {
  override name = 'ModelError';
}

/**
 * Header comments, one directive a line, before the SQL:
 *   -- description: what a row is
 *   -- materialized: view | table      (default: table, so the warehouse is one snapshot of the lake)
 *   -- unique: col[, col]              (the key; also implies not null)
 *   -- incremental: true               (rows are each key's newest version: a build adds only new files)
 *   -- incremental_by: col = expr from model   (rows of one col value come from the model's rows with that expr)
 *   -- incremental_after: col from model       (extends its own rows, {{ this }}, by the model's rows later in col)
 *   -- compare_to_last: true           (built whole, and unchanged for the models on it when its rows are)
 *   -- not_null: col[, col]
 *   -- accepted_values: col = a | b | c
 *   -- optional: model (col type[, col type])   (read as empty with those columns when it is not built)
 *   -- column: name: what it means
 * The SQL may use the templates of templates.ts: `{{ lake('stream') }}`, `{{ newest('relation', 'key') }}`,
 * and, in a model marked `incremental_after`, `{{ this }}`.
 */
export function parseModel(path: string, root: string): Model {
  const { sql, problem } = expandTemplates(readFileSync(path, 'utf8'));
  if (problem) throw new ModelError(`${path}: ${problem}`);
  const layer = relative(root, path).split(/[\\/]/)[0] ?? '';
  const model: Model = {
    name: basename(path, '.sql'),
    layer,
    path,
    sql,
    materialized: 'table',
    description: '',
    columns: [],
    unique: [],
    notNull: [],
    acceptedValues: [],
    incremental: false,
    compareToLast: false,
    lakeStreams: lakeStreamsOf(sql),
    dependsOn: [],
    optional: [],
  };
  const list = (text: string) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  for (const line of sql.split('\n')) {
    const m = /^\s*--\s*([a-z_]+):\s*(.*)$/.exec(line);
    if (!m) {
      if (line.trim() === '' || line.trim().startsWith('--')) continue;
      break;
    }
    const [, key, value] = m as unknown as [string, string, string];
    if (key === 'description') model.description = value.trim();
    else if (key === 'materialized') {
      if (value.trim() !== 'view' && value.trim() !== 'table')
        throw new ModelError(`${path}: materialized must be view or table, got "${value.trim()}"`);
      model.materialized = value.trim() as Materialization;
    } else if (key === 'incremental') {
      if (value.trim() !== 'true' && value.trim() !== 'false')
        throw new ModelError(`${path}: incremental must be true or false, got "${value.trim()}"`);
      model.incremental = value.trim() === 'true';
    } else if (key === 'compare_to_last') {
      if (value.trim() !== 'true' && value.trim() !== 'false')
        throw new ModelError(`${path}: compare_to_last must be true or false, got "${value.trim()}"`);
      model.compareToLast = value.trim() === 'true';
    } else if (key === 'incremental_by') {
      const m = /^([a-z_][a-z0-9_]*)\s*=\s*(.+?)\s+from\s+([a-z_][a-z0-9_]*)$/.exec(value.trim());
      if (!m) throw new ModelError(`${path}: incremental_by needs "column = expression from model"`);
      model.incrementalBy = { column: m[1] as string, expression: m[2] as string, source: m[3] as string };
    } else if (key === 'incremental_after') {
      const m = /^([a-z_][a-z0-9_]*)\s+from\s+([a-z_][a-z0-9_]*)$/.exec(value.trim());
      if (!m) throw new ModelError(`${path}: incremental_after needs "column from model"`);
      model.incrementalAfter = { column: m[1] as string, source: m[2] as string };
    } else if (key === 'unique') model.unique = list(value);
    else if (key === 'not_null') model.notNull = list(value);
    else if (key === 'accepted_values') {
      const [column, values] = value.split('=').map((s) => s.trim());
      if (!column || !values) throw new ModelError(`${path}: accepted_values needs "column = a | b"`);
      model.acceptedValues.push({ column, values: values.split('|').map((v) => v.trim()) });
    } else if (key === 'optional') {
      const m = /^([a-z_][a-z0-9_]*)\s*\((.+)\)$/.exec(value.trim());
      if (!m)
        throw new ModelError(
          `${path}: optional needs "model (column type, …)", the columns this model reads of it`,
        );
      model.optional.push({ model: m[1] as string, columns: m[2] as string });
    } else if (key === 'column') {
      const at = value.indexOf(':');
      if (at < 0) throw new ModelError(`${path}: column needs "name: meaning"`);
      model.columns.push({ name: value.slice(0, at).trim(), description: value.slice(at + 1).trim() });
    }
  }
  if (
    model.incremental &&
    (model.unique.length === 0 || model.lakeStreams.length !== 1 || model.materialized !== 'table')
  )
    throw new ModelError(
      `${path}: an incremental model reads one lake stream, declares its key with "-- unique:" and is a table`,
    );
  if (
    model.compareToLast &&
    (model.materialized !== 'table' || model.incremental || model.incrementalBy || model.incrementalAfter)
  )
    throw new ModelError(`${path}: a compare_to_last model is a table built whole (not incremental)`);
  if (readsThis(sql) && !model.incrementalAfter)
    throw new ModelError(
      `${path}: {{ this }} (the model's rows as the last build left them) is for a model marked "-- incremental_after: column from model"`,
    );
  if (model.incrementalAfter && (model.unique.length === 0 || model.materialized !== 'table'))
    throw new ModelError(
      `${path}: an incremental_after model declares its key with "-- unique:" (the rows it replaces) and is a table`,
    );
  if (model.incrementalAfter && model.columns.length === 0)
    throw new ModelError(
      `${path}: an incremental_after model documents every column ("-- column: name: meaning"): built whole, {{ this }} is an empty table of those columns`,
    );
  return model;
}

/** Every model under `root` (sql/models), with its dependencies on the others found from its SQL. */
export function loadModels(root: string): Model[] {
  checkFolder(root, '--models', 'the SQL models', ModelError);
  const paths: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.sql')) paths.push(join(dir, entry.name));
    }
  };
  walk(root);
  const models = paths.sort().map((p) => parseModel(p, root));
  const names = new Set<string>();
  for (const m of models) {
    if (names.has(m.name)) throw new ModelError(`two models are named ${m.name}: model names must be unique`);
    names.add(m.name);
  }
  for (const m of models) {
    const identifiers = new Set(identifiersOf(m.sql));
    m.dependsOn = models.filter((o) => o !== m && identifiers.has(o.name)).map((o) => o.name);
    for (const { model } of m.optional) {
      if (!m.dependsOn.includes(model))
        throw new ModelError(`${m.path}: optional names ${model}, which is not a model it reads`);
      // A view would go on reading the empty stand-in, which ends with the build.
      if (m.materialized !== 'table')
        throw new ModelError(`${m.path}: a model with an optional one is a table (-- materialized: table)`);
    }
    const source = m.incrementalBy && models.find((o) => o.name === m.incrementalBy?.source);
    if (
      m.incrementalBy &&
      !(source?.incremental && m.dependsOn.length === 1 && m.dependsOn[0] === source.name)
    )
      throw new ModelError(
        `${m.path}: incremental_by must name the one model it reads, an incremental one (-- incremental: true)`,
      );
    // The models it reads may be built whole (a hand-written one, in a test): it is then built whole too.
    if (m.incrementalAfter && !m.dependsOn.includes(m.incrementalAfter.source))
      throw new ModelError(`${m.path}: incremental_after must name a model it reads`);
  }
  return models;
}

/** The identifiers of a SQL text, comments and string literals removed. */
export function identifiersOf(sql: string): string[] {
  const bare = sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^']|'')*'/g, ' ');
  const out: string[] = [];
  for (const m of bare.matchAll(/"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_]*)/g))
    out.push((m[1] ?? m[2] ?? '').toLowerCase());
  return out;
}

/** Models in an order where each comes after what it depends on; a cycle is a ModelError naming it. */
export function buildOrder(models: readonly Model[]): Model[] {
  const byName = new Map(models.map((m) => [m.name, m]));
  const done = new Set<string>();
  const visiting: string[] = [];
  const order: Model[] = [];
  const visit = (m: Model) => {
    if (done.has(m.name)) return;
    if (visiting.includes(m.name))
      throw new ModelError(`models depend on each other in a cycle: ${[...visiting, m.name].join(' → ')}`);
    visiting.push(m.name);
    for (const d of m.dependsOn) visit(byName.get(d) as Model);
    visiting.pop();
    done.add(m.name);
    order.push(m);
  };
  for (const m of models) visit(m);
  return order;
}

/**
 * `--select`: `name` alone, `name+` with everything downstream of it, `+name` with everything upstream;
 * several separated by commas or spaces. Unknown names are a ModelError.
 */
export function selectModels(models: readonly Model[], selector: string | undefined): Set<string> {
  if (!selector) return new Set(models.map((m) => m.name));
  const byName = new Map(models.map((m) => [m.name, m]));
  const chosen = new Set<string>();
  const down = (name: string) => {
    chosen.add(name);
    for (const m of models) if (m.dependsOn.includes(name) && !chosen.has(m.name)) down(m.name);
  };
  const up = (name: string) => {
    chosen.add(name);
    for (const d of byName.get(name)?.dependsOn ?? []) if (!chosen.has(d)) up(d);
  };
  for (const part of selector.split(/[\s,]+/).filter(Boolean)) {
    const name = part.replace(/^\+|\+$/g, '');
    if (!byName.has(name))
      throw new ModelError(`--select: no model named "${name}"; models: ${[...byName.keys()].join(', ')}`);
    if (part.endsWith('+')) down(name);
    if (part.startsWith('+')) up(name);
    chosen.add(name);
  }
  return chosen;
}
