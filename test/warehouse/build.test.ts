import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { acquireLock, type DataDirLock } from '../../src/load/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { CORE_STREAMS } from '../helpers/truth.ts';
import { expectSameWarehouse } from '../helpers/warehouse.ts';

/**
 * `avalake build` as a reader and a cron job see it: a notebook holding the warehouse open never gets an
 * error; an incremental rebuild equals a rebuild from scratch; a broken model set is refused (exit 2) and
 * a failing model leaves the last warehouse as it was. The models are the staging ones plus a small table
 * over them, copied aside, so concurrent work on the marts cannot move these results; the data
 * dictionary check uses the real sql/models.
 */

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const MODELS = join(tmp('avalake-models-'), 'models');
cpSync('sql/models/staging', join(MODELS, 'staging'), { recursive: true });
mkdirSync(join(MODELS, 'marts'));
writeFileSync(
  join(MODELS, 'marts', 'metric_points.sql'),
  `-- description: Points per chain and metric (a table over a staging view, for the rebuild tests).
-- unique: chain_id, metric, time_interval
with points as (
    select * from stg_metrics
),

final as (
    select
        chain_id,
        metric,
        time_interval,
        count(*) as count_points,
        max(period_start) as last_period_start
    from points
    group by all
)

select * from final
`,
);
// The core streams (what the marts read); the other staging models are skipped for want of data.
const STREAMS = CORE_STREAMS.join(',');

let emulator: Emulator;
let workspace: ReturnType<typeof demoWorkspace>;

beforeAll(async () => {
  emulator = await startEmulator();
  workspace = demoWorkspace(emulator);
  expect((await extractOnce(workspace.pipelinePath, workspace.dataDir, { streams: STREAMS })).status).toBe(
    'ok',
  );
});
afterAll(() => emulator.close());

/** `avalake …` in a child process: its exit code and what it printed. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/avalake.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `avalake …` started in a child process, watched while it runs. */
function started(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, ['bin/avalake.js', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout?.on('data', (d) => (out.stdout += d));
  child.stderr?.on('data', (d) => (out.stderr += d));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : null)));
  });
  /** Resolves once stderr has matched `pattern` (the process is then where the test wants it). */
  const said = async (pattern: RegExp) => {
    while (!pattern.test(out.stderr)) {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} first: ${out.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, out, exited, said };
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** A data directory with a copy of the workspace's lake and no warehouse. */
function lakeCopy(): string {
  const dir = join(tmp('avalake-copy-'), 'data');
  cpSync(join(workspace.dataDir, 'lake'), join(dir, 'lake'), { recursive: true });
  return dir;
}

/** A lake copy with its warehouse built, and the warehouse's hash: what a run must leave as it was. */
async function builtCopy(): Promise<{ dataDir: string; before: string }> {
  const dataDir = lakeCopy();
  await buildWarehouse({ dataDir, modelsDir: MODELS });
  return { dataDir, before: sha256(join(dataDir, 'warehouse.duckdb')) };
}

/** Runs `work` while a build of the test holds the warehouse's build lock, as another worker's would. */
async function whileBuilding(dataDir: string, work: (build: DataDirLock) => Promise<void>): Promise<void> {
  const build = await acquireLock(join(dataDir, 'warehouse.duckdb.lock'), { command: 'a build in the test' });
  try {
    await work(build);
  } finally {
    await build.release();
  }
}

/** A copy of the models with more files (name → SQL). */
function modelsWith(extra: Record<string, string>): string {
  const dir = join(tmp('avalake-models-'), 'models');
  cpSync(MODELS, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) writeFileSync(join(dir, 'marts', `${name}.sql`), sql);
  return dir;
}

describe('avalake build', () => {
  it('a reader holding the warehouse open sees the old or the new tables during a build, never an error', async () => {
    const dataDir = lakeCopy();
    await buildWarehouse({ dataDir, modelsDir: MODELS });
    const path = join(dataDir, 'warehouse.duckdb');
    const instance = await DuckDBInstance.create(path, {
      access_mode: 'READ_ONLY',
      autoload_known_extensions: 'false',
      autoinstall_known_extensions: 'false',
    });
    const reader = await instance.connect();
    const read = async () =>
      (await reader.runAndReadAll('select sum(count_points) as n from metric_points')).getRowObjectsJson()[0]
        ?.n;
    const before = await read();
    const next = modelsWith({ extra_points: 'select count(*) as count_rows from metric_points\n' });
    const build = cli(['build', '--data-dir', dataDir, '--models', next]);
    let done = false;
    void build.then(() => (done = true));
    const errors: string[] = [];
    let reads = 0;
    while (!done) {
      try {
        expect(await read()).toBe(before);
        reads++;
      } catch (error) {
        errors.push((error as Error).message);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const result = await build;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(errors).toEqual([]);
    expect(reads).toBeGreaterThan(0);
    // After the swap the old connection still reads the old file, whole; a new one sees the new tables.
    expect(await read()).toBe(before);
    await expect(reader.runAndReadAll('select * from extra_points')).rejects.toThrow(/extra_points/);
    reader.closeSync();
    instance.closeSync();
    const fresh = await withDuckDB(path, (db) => queryRows(db, 'select * from extra_points'), {
      readOnly: true,
    });
    expect(fresh).toEqual([{ count_rows: expect.any(String) }]);
    expect(readdirSync(dataDir).filter((f) => f.includes('.building-'))).toEqual([]);
  });

  it('rebuilding incrementally (--select stg_metrics+ after an extract of metrics) equals rebuilding from scratch', async () => {
    const incremental = lakeCopy();
    await buildWarehouse({ dataDir: incremental, modelsDir: MODELS });
    const pointsOf = (dataDir: string) =>
      withDuckDB(
        join(dataDir, 'warehouse.duckdb'),
        (db) => queryRows(db, 'select sum(count_points) as n from metric_points'),
        { readOnly: true },
      );
    const before = await pointsOf(incremental);
    emulator.advance(2 * 86_400);
    const second = await extractOnce(workspace.pipelinePath, incremental, { streams: 'metrics' });
    expect(second.partitions.reduce((n, p) => n + p.rows, 0)).toBeGreaterThan(0);
    const rebuilt = await cli([
      'build',
      '--data-dir',
      incremental,
      '--models',
      MODELS,
      '--select',
      'stg_metrics+',
    ]);
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stdout).toMatch(/^built\s+metric_points/m);
    expect(rebuilt.stdout).toMatch(/^kept\s+\d+ models from the last build$/m);
    expect(await pointsOf(incremental)).not.toEqual(before);

    const scratch = join(tmp('avalake-scratch-'), 'data');
    cpSync(join(incremental, 'lake'), join(scratch, 'lake'), { recursive: true });
    await buildWarehouse({ dataDir: scratch, modelsDir: MODELS });

    const names = await expectSameWarehouse(
      join(incremental, 'warehouse.duckdb'),
      join(scratch, 'warehouse.duckdb'),
    );
    expect(names.length).toBeGreaterThan(CORE_STREAMS.length);
  });

  it('a model cycle and an unknown --select name are exit 2, with a message naming them', async () => {
    const dataDir = lakeCopy();
    const cycle = modelsWith({
      cycle_a: 'select * from cycle_b\n',
      cycle_b: 'select * from cycle_a\n',
    });
    const looped = await cli(['build', '--data-dir', dataDir, '--models', cycle]);
    expect(looped.code).toBe(2);
    expect(looped.stderr).toMatch(/cycle: cycle_a → cycle_b → cycle_a/);
    const unknown = await cli(['build', '--data-dir', dataDir, '--models', MODELS, '--select', 'stg_nope+']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no model named "stg_nope"');
    expect(existsSync(join(dataDir, 'warehouse.duckdb'))).toBe(false);
  });

  it('a failing model is exit 1 naming it, and leaves the previous warehouse untouched', async () => {
    const { dataDir, before } = await builtCopy();
    const path = join(dataDir, 'warehouse.duckdb');
    const broken = modelsWith({ broken_model: 'select no_such_column from metric_points\n' });
    for (const args of [[], ['--select', 'broken_model']]) {
      const result = await cli(['build', '--data-dir', dataDir, '--models', broken, ...args]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/model broken_model \(.*broken_model\.sql\) failed: Binder Error/);
      expect(sha256(path)).toBe(before);
      expect(readdirSync(dataDir).sort()).toEqual(['lake', 'warehouse.duckdb']);
    }
  });

  it('builds one at a time: another is exit 75 naming the build it found, or with --wait builds after it; copies killed builds left aside are deleted', async () => {
    const dataDir = lakeCopy();
    // What a build killed halfway leaves: its copy and the copy's write-ahead log.
    const leftovers = ['warehouse.duckdb.building-4194303', 'warehouse.duckdb.building-4194303.wal'];
    for (const name of leftovers) writeFileSync(join(dataDir, name), 'x'.repeat(1024));
    await whileBuilding(dataDir, async (held) => {
      const refused = await cli(['build', '--data-dir', dataDir, '--models', MODELS]);
      expect(refused.code).toBe(75);
      expect(refused.stderr).toContain(
        `another avalake run holds ${join(dataDir, 'warehouse.duckdb.lock')}: pid ${process.pid}`,
      );
      expect(refused.stderr).toContain('(a build in the test); let it finish, or pass --wait');
      expect(readdirSync(dataDir).sort()).toEqual(['lake', 'warehouse.duckdb.lock', ...leftovers].sort());

      const queued = started(['build', '--data-dir', dataDir, '--models', MODELS, '--wait']);
      await queued.said(/waiting for the build of pid \d+ on .* \(a build in the test\) to finish/);
      expect(existsSync(join(dataDir, 'warehouse.duckdb'))).toBe(false);
      await held.release();
      expect(await queued.exited).toBe(0);
      expect(queued.out.stdout).toContain('built  metric_points');
      expect(readdirSync(dataDir).sort()).toEqual(['lake', 'warehouse.duckdb']);
    });
  });

  it('a run queues its build behind another one, and an interrupt while it waits ends it at once (exit 130), the warehouse untouched', async () => {
    const { dataDir, before } = await builtCopy();
    await whileBuilding(dataDir, async () => {
      const args = ['run', workspace.pipelinePath, '--data-dir', dataDir, '--streams', STREAMS, '--json'];
      const run = started(args);
      await run.said(/waiting for another build of the warehouse/);
      run.child.kill('SIGINT');
      expect(await run.exited).toBe(130);
      const report = JSON.parse(run.out.stdout);
      expect(report).toMatchObject({
        status: 'interrupted',
        exitCode: 130,
        extract: { status: 'ok' },
        build: { status: 'not run', reason: 'interrupted' },
        test: { status: 'not run', reason: 'interrupted' },
      });
      expect(sha256(join(dataDir, 'warehouse.duckdb'))).toBe(before);
    });
  });

  it('a run whose build waits longer than --build-wait ends with exit 75 and leaves compaction to a later run; a --build-wait that is no duration, or a bare number, is exit 2', async () => {
    const { dataDir, before } = await builtCopy();
    await whileBuilding(dataDir, async () => {
      const base = ['run', workspace.pipelinePath, '--data-dir', dataDir, '--streams', STREAMS, '--json'];
      const run = await cli([...base, '--build-wait', '1s']);
      expect(run.code).toBe(75);
      const report = JSON.parse(run.stdout);
      expect(report).toMatchObject({
        status: 'locked',
        exitCode: 75,
        failedStep: 'build',
        extract: { status: 'ok' },
        build: { status: 'not run' },
        test: { status: 'not run', reason: 'the build did not run' },
        compact: { status: 'not run' },
      });
      for (const step of [report.build, report.compact])
        expect(step.reason).toContain(`holds ${join(dataDir, 'warehouse.duckdb.lock')}: pid ${process.pid}`);
      expect(sha256(join(dataDir, 'warehouse.duckdb'))).toBe(before);

      const bad = await cli([...base, '--build-wait', 'soon']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--build-wait: "soon" is not a duration; write e.g. 90m, 24h or 7d');
      // A bare number would be hours, as for --max-age: 30 hours for someone who meant minutes.
      const bare = await cli([...base, '--build-wait', '30']);
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain(
        '--build-wait: "30" has no unit; write e.g. 30m for minutes or 30s for seconds',
      );
    });
  });
});
