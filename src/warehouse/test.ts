import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { type Partition, partitionId, readLakeState } from '../load/index.ts';
import { quoteIdent, quoteLiteral } from './duckdb.ts';
import {
  DEFAULT_MAX_AGE_SECONDS,
  freshnessMessage,
  freshnessSample,
  freshnessStatus,
  judgeStream,
  type MaxAge,
} from './freshness.ts';
import { uniqueKeyHolds } from './incremental.ts';
import { checkFolder, identifiersOf, loadModels, type Model, selectModels } from './models.ts';
import { DEFAULT_TESTS_DIR, defaultModelsDir, testsBeside } from './paths.ts';
import { QueryFailedError, type QueryResult, runQuery, warehouseObjects, withWarehouse } from './sql.ts';
import { WarehouseUsageError } from './usage-error.ts';

export { DEFAULT_TESTS_DIR };
/** Offending rows printed per failing test; the count says how many there are in all. */
export const SAMPLE_ROWS = 10;

export type TestKind = 'unique' | 'not_null' | 'accepted_values' | 'freshness' | 'sql';
/** `warn`: not a failure, but not fresh either (partitions still catching up, freshness.ts). */
export type TestStatus = 'pass' | 'warn' | 'fail' | 'error' | 'skip';

/** One check and what came of it. */
export interface TestOutcome {
  name: string;
  kind: TestKind;
  /** The model or stream it checks, or the test file. */
  subject: string;
  status: TestStatus;
  /** Why it failed, errored or was skipped; empty on a pass. */
  message: string;
  /** Offending rows in all. */
  failures: number;
  /** The first offending rows. */
  sample?: QueryResult;
}

export interface TestReport {
  outcomes: TestOutcome[];
  passed: number;
  /** Checks that passed with a warning: partitions still catching up. Not failures. */
  warned: number;
  failed: number;
  errored: number;
  skipped: number;
}

export interface TestOptions {
  /** The lake's data directory, or `s3://bucket/prefix` (with a catalog). */
  dataDir: string;
  /** Where the warehouse was built: default the data directory. */
  localDir?: string;
  modelsDir?: string;
  testsDir?: string;
  /** `--select` as for build: only these models' checks, their streams' freshness and the SQL tests reading them. */
  select?: string;
  maxAge?: MaxAge;
  now?: number;
  /**
   * The partitions the pipeline reads now, by stream: freshness judges only these, so a partition taken
   * out of the pipeline does not go stale forever, and one of them with nothing ever committed (every
   * run failed on it) fails as never checked. Default: every partition of the lake.
   */
  partitions?: ReadonlyMap<string, readonly Partition[]>;
  /**
   * Of those, by stream (partition ids), the ones a spent quota stopped this run before it read them (a
   * run reads unfinished work first). One never checked, or not within its maximum age, waits its turn
   * behind the backfill (a warning, not a failure) while the lake progresses: while something of it was
   * committed within its maximum age.
   */
  queued?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * The streams this run read (`--streams`): a partition of another stream with nothing committed is not
   * this run's to have read, and is not named as never checked (its committed ones are judged as ever).
   * Default: every stream of `partitions`.
   */
  readNow?: ReadonlySet<string>;
  /** The PostgreSQL catalog holding the lake's commit log, when it has one. */
  catalog?: string;
}

/** A file of `sql/tests`: a query returning the offending rows, zero rows being a pass. */
export interface SqlTest {
  name: string;
  path: string;
  description: string;
  /**
   * `-- requires: model, …`: models it needs beyond those its SQL names (which count too); when one is
   * not in the warehouse the test is skipped.
   */
  requires: string[];
  sql: string;
}

/**
 * The SQL tests of `dir`. A folder the user named (`--tests`) must exist; the default may not, as in a
 * project that keeps no SQL tests of its own.
 */
export function loadSqlTests(dir: string, named = true): SqlTest[] {
  if (!named && statSync(dir, { throwIfNoEntry: false }) === undefined) return [];
  checkFolder(dir, '--tests', 'the SQL tests', WarehouseUsageError);
  const names = readdirSync(dir).filter((f) => f.endsWith('.sql'));
  return names.sort().map((file) => {
    const path = join(dir, file);
    const sql = readFileSync(path, 'utf8');
    const header = (key: string) =>
      new RegExp(`^\\s*--\\s*${key}:\\s*(.*)$`, 'm').exec(sql)?.[1]?.trim() ?? '';
    return {
      name: basename(file, '.sql'),
      path,
      description: header('description'),
      requires: header('requires')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      // A trailing semicolon would end the subquery the runner wraps the test in.
      sql: sql.trim().replace(/;\s*$/, ''),
    };
  });
}

/**
 * Why a key was not grouped again: the build keeps the record (incremental.ts), and grouping a table of
 * snapshots (a year of validator sets) every run would cost each run more than the last.
 */
const HELD = 'as the build recorded it: checked whole once, and each build since added rows whose keys hold';

/**
 * Every check of the warehouse, read-only: each model's key unique and not null, its `not_null` columns
 * and `accepted_values` (from the header directives); each stream's freshness (from the commit log);
 * every `sql/tests/*.sql`. A model or test that cannot run here (not built; a required model missing) is
 * skipped with the reason, never passed silently.
 */
export async function runWarehouseTests(options: TestOptions): Promise<TestReport> {
  const modelsDir = options.modelsDir ?? defaultModelsDir();
  const models = loadModels(modelsDir);
  const selected = selectModels(models, options.select);
  const sqlTests = loadSqlTests(options.testsDir ?? testsBeside(modelsDir), options.testsDir !== undefined);
  const outcomes: TestOutcome[] = [];

  // Day boundaries in the tests are UTC days, whatever the machine's zone (withDuckDB sets it).
  await withWarehouse(options.localDir ?? options.dataDir, async (db) => {
    const present = await warehouseObjects(db);
    for (const model of models.filter((m) => selected.has(m.name)))
      for (const check of modelChecks(model)) {
        if (!present.has(model.name)) {
          outcomes.push({
            ...check,
            status: 'skip',
            message: `${model.name} is not in the warehouse (the build skips a model whose streams have no data yet)`,
            failures: 0,
          });
          continue;
        }
        if (check.kind === 'unique' && (await uniqueKeyHolds(db, model))) {
          outcomes.push({ ...check, status: 'pass', message: HELD, failures: 0 });
          continue;
        }
        outcomes.push({ ...check, ...(await runCheck(db, check.sql)) });
      }

    const modelNames = new Set(models.map((m) => m.name));
    for (const test of sqlTests) {
      const reads = new Set([...identifiersOf(test.sql).filter((i) => modelNames.has(i)), ...test.requires]);
      if (options.select !== undefined && ![...reads].some((r) => selected.has(r))) continue;
      const base = { name: test.name, kind: 'sql' as const, subject: test.path };
      // What the test reads counts as required too: a model missing from `requires` skips, not errors.
      const missing = [...reads].filter((r) => !present.has(r));
      if (missing.length > 0) {
        outcomes.push({
          ...base,
          status: 'skip',
          message: `needs ${missing.join(', ')}, not in the warehouse${
            missing.some((m) => !modelNames.has(m)) ? ' (no such model yet)' : ''
          }: ${test.description}`,
          failures: 0,
        });
        continue;
      }
      outcomes.push({ ...base, ...(await runCheck(db, test.sql)) });
    }
  });

  outcomes.push(...(await freshness(options, models, selected)));
  const count = (s: TestStatus) => outcomes.filter((o) => o.status === s).length;
  return {
    outcomes,
    passed: count('pass'),
    warned: count('warn'),
    failed: count('fail'),
    errored: count('error'),
    skipped: count('skip'),
  };
}

/** The checks a model's header declares, each a query returning its offending rows. */
export function modelChecks(
  model: Model,
): (Pick<TestOutcome, 'name' | 'kind' | 'subject'> & { sql: string })[] {
  const table = quoteIdent(model.name);
  const checks: (Pick<TestOutcome, 'name' | 'kind' | 'subject'> & { sql: string })[] = [];
  if (model.unique.length > 0) {
    const key = model.unique.map(quoteIdent).join(', ');
    checks.push({
      name: `unique ${model.name} (${model.unique.join(', ')})`,
      kind: 'unique',
      subject: model.name,
      sql: `select ${key}, count(*) as count_rows from ${table} group by ${key} having count(*) > 1 order by count_rows desc`,
    });
  }
  for (const column of [...new Set([...model.unique, ...model.notNull])])
    checks.push({
      name: `not_null ${model.name}.${column}`,
      kind: 'not_null',
      subject: model.name,
      // The key beside the null column locates the row without printing every column.
      sql: `select ${[...new Set([...model.unique, column])].map(quoteIdent).join(', ')} from ${table} where ${quoteIdent(column)} is null`,
    });
  for (const { column, values } of model.acceptedValues)
    checks.push({
      name: `accepted_values ${model.name}.${column}`,
      kind: 'accepted_values',
      subject: model.name,
      sql:
        `select ${quoteIdent(column)} as value, count(*) as count_rows from ${table} ` +
        `where ${quoteIdent(column)} is not null and cast(${quoteIdent(column)} as varchar) not in (${values.map(quoteLiteral).join(', ')}) ` +
        'group by all order by count_rows desc',
    });
  return checks;
}

/** Runs a query of offending rows: how many, and the first few. A query that cannot run is an error. */
async function runCheck(
  db: DuckDBConnection,
  sql: string,
): Promise<Pick<TestOutcome, 'status' | 'message' | 'failures' | 'sample'>> {
  try {
    const counted = await runQuery(db, `select count(*) from (\n${sql}\n)`);
    const failures = Number(counted.rows[0]?.[0] ?? 0);
    if (failures === 0) return { status: 'pass', message: '', failures: 0 };
    const sample = await runQuery(db, `select * from (\n${sql}\n) limit ${SAMPLE_ROWS}`);
    return {
      status: 'fail',
      message: `${failures} offending row${failures === 1 ? '' : 's'}`,
      failures,
      sample,
    };
  } catch (error) {
    if (error instanceof WarehouseUsageError || error instanceof QueryFailedError)
      return { status: 'error', message: error.message, failures: 0 };
    throw error;
  }
}

/** Each stream's partitions against its maximum age (freshness.ts). With `--select`, only the streams it reads. */
async function freshness(options: TestOptions, models: readonly Model[], selected: Set<string>) {
  const byName = new Map(models.map((m) => [m.name, m]));
  const wanted = new Set<string>();
  const addStreams = (name: string, seen = new Set<string>()) => {
    const model = byName.get(name);
    if (!model || seen.has(name)) return;
    seen.add(name);
    for (const s of model.lakeStreams) wanted.add(s);
    for (const d of model.dependsOn) addStreams(d, seen);
  };
  for (const name of selected) addStreams(name);

  const now = options.now ?? Date.now();
  const maxAge = options.maxAge ?? { defaultSeconds: DEFAULT_MAX_AGE_SECONDS, byStream: {} };
  const lake = await readLakeState(options.dataDir, options.catalog);
  const outcomes: TestOutcome[] = [];
  // A stream the pipeline reads is judged whether or not anything of it was committed.
  const planned = new Map(
    [...(options.partitions ?? [])]
      .filter(([, partitions]) => partitions.length > 0)
      .map(([stream, partitions]) => [stream, new Map(partitions.map((p) => [partitionId(p), p]))]),
  );
  // Without a pipeline to say which partitions it reads now, every partition of the lake is judged.
  const planOf = (stream: string) => {
    const all = options.partitions && (planned.get(stream) ?? new Map<string, Partition>());
    if (!all || !options.readNow || options.readNow.has(stream)) return all;
    const committed = lake.get(stream)?.partitions;
    return new Map([...all].filter(([id]) => committed?.has(id)));
  };
  const judged = [...new Set([...lake.keys(), ...planned.keys()])]
    .filter((stream) => lake.has(stream) || (planOf(stream)?.size ?? 0) > 0)
    .sort();
  const limitOf = (stream: string) => maxAge.byStream[stream] ?? maxAge.defaultSeconds;
  // A lake nothing was committed to for that long has no backfill going on: a partition never read is
  // never checked, whatever stopped the run.
  const progressing = [...lake].some(([stream, state]) =>
    [...state.partitions.values()].some((p) => now - Date.parse(p.committedAt) <= limitOf(stream) * 1000),
  );
  for (const stream of judged) {
    if (options.select !== undefined && !wanted.has(stream)) continue;
    const limit = limitOf(stream);
    const plan = planOf(stream);
    const waiting = progressing ? options.queued?.get(stream) : undefined;
    const judgement = judgeStream(lake.get(stream), limit, now, plan, waiting);
    const status = freshnessStatus(judgement);
    const base = { name: `freshness ${stream}`, kind: 'freshness' as const, subject: stream };
    outcomes.push(
      status === 'pass'
        ? { ...base, status, message: '', failures: 0 }
        : {
            ...base,
            status,
            message: freshnessMessage(judgement),
            failures: judgement.stale.length,
            sample: freshnessSample(stream, judgement, SAMPLE_ROWS),
          },
    );
  }
  for (const stream of [...wanted].sort())
    if (!judged.includes(stream))
      outcomes.push({
        name: `freshness ${stream}`,
        kind: 'freshness',
        subject: stream,
        status: 'skip',
        message: `nothing committed yet (not extracted by the pipeline)`,
        failures: 0,
      });
  return outcomes;
}
