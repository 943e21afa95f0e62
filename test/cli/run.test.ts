import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/run.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { PipelineSchema } from '../../src/extract/pipeline.ts';
import { openLake } from '../../src/load/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace } from '../helpers/extract.ts';
import { duplicateRows, queryLake, streamTable } from '../helpers/lake.ts';
import { captureOutput, runReportOf } from '../helpers/output.ts';
import { CORE_STREAMS, lakeTotals, sorted, truthOf } from '../helpers/truth.ts';
import { queryWarehouse } from '../helpers/warehouse.ts';

let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

/** `avalake run` in-process, capturing stdout and stderr. */
const runCli = (args: Parameters<typeof run>[0]) =>
  captureOutput(() => run({ logFormat: 'json', quiet: true, ...args }, {}));

const hasParquet = (dataDir: string, stream: string) =>
  existsSync(join(dataDir, 'lake', stream)) &&
  readdirSync(join(dataDir, 'lake', stream), { recursive: true }).some((f) => String(f).endsWith('.parquet'));

describe('avalake run --json', () => {
  it('extracts, builds and tests, and its summary matches the lake and the warehouse', async () => {
    emulator = await startEmulator();
    const w = coreWorkspace(emulator);
    const { code, stdout, stderr } = await runCli({
      pipeline: w.pipelinePath,
      dataDir: w.dataDir,
      json: true,
    });
    expect(code, stderr).toBe(0);
    const report = runReportOf(stdout);
    expect(report).toMatchObject({ status: 'ok', exitCode: 0, dataDir: w.dataDir, pipeline: w.pipelinePath });
    expect(report.failedStep).toBeUndefined();
    expect(report.runId).toMatch(/^[0-9a-f-]{36}$/);

    // Per stream: the rows the summary counts are the rows the lake holds (a fresh lake: this run's only).
    expect(Object.keys(report.extract.streams).sort()).toEqual([...CORE_STREAMS].sort());
    for (const [stream, s] of Object.entries(report.extract.streams)) {
      const [{ n }] = (await queryLake(
        `select count(*)::int as n from ${streamTable(w.dataDir, stream)}`,
      )) as [{ n: number }];
      expect(s.rows, stream).toBe(n);
      expect(s.rows, stream).toBeGreaterThan(0);
      expect(s.requests, stream).toBeGreaterThanOrEqual(s.partitions);
      expect(s).toMatchObject({ retries: 0, rejects: 0, failed: 0 });
      expect(s.seconds, stream).toBeGreaterThanOrEqual(0);
    }
    // ... and the lake holds what the emulator's world holds.
    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(w.pipelinePath, 'utf8')));
    expect(sorted(await lakeTotals(w.dataDir))).toEqual(sorted(await truthOf(emulator, pipeline)));

    // Models built: each is in the warehouse; a staging model per core stream; skipped ones say why.
    expect(report.build.status).toBe('ok');
    const built = report.build.built.map((b) => b.name);
    for (const stream of CORE_STREAMS) expect(built).toContain(`stg_${stream}`);
    const objects = new Set(
      (await queryWarehouse(w.dataDir, `select table_name from information_schema.tables`)).map((r) =>
        String(r.table_name),
      ),
    );
    for (const name of built) expect(objects.has(name), name).toBe(true);
    for (const s of report.build.skipped) expect(s.reason).toMatch(/no data extracted yet|was not built/);
    // Staging keeps one row per reward (the lake has it once per partition that lists it: address, node).
    const [{ n: staged }] = (await queryWarehouse(
      w.dataDir,
      'select count(*)::int as n from stg_rewards',
    )) as [{ n: number }];
    const [{ n: distinct }] = (await queryLake(
      `select count(distinct utxoId)::int as n from ${streamTable(w.dataDir, 'rewards')}`,
    )) as [{ n: number }];
    expect(staged).toBe(distinct);

    // Tests: passed by name, none failed; freshness of every extracted stream among them.
    expect(report.test.status).toBe('ok');
    expect(report.test.failed).toEqual([]);
    for (const stream of CORE_STREAMS) expect(report.test.passed).toContain(`freshness ${stream}`);
    expect(report.test.passed).toContain('unique stg_rewards (utxo_id)');

    // A second run finds nothing new on a fixed clock: few requests, no rows, still builds and tests.
    const again = runReportOf(
      (await runCli({ pipeline: w.pipelinePath, dataDir: w.dataDir, json: true })).stdout,
    );
    expect(again.status).toBe('ok');
    expect(again.build.status).toBe('ok');
    expect(again.test.failed).toEqual([]);
    for (const stream of CORE_STREAMS.filter((s) => s !== 'validators' && s !== 'validator_delegators'))
      expect(await duplicateRows(w.dataDir, stream), stream).toBe(0);

    // A warehouse that is no DuckDB file (damaged, or overwritten) is built again from the generation
    // before it, and the report says so beside a build that succeeded.
    writeFileSync(join(w.dataDir, 'warehouse.duckdb'), 'not a database\n');
    const repaired = runReportOf(
      (await runCli({ pipeline: w.pipelinePath, dataDir: w.dataDir, json: true })).stdout,
    );
    expect(repaired).toMatchObject({ status: 'ok', build: { status: 'ok' } });
    expect(repaired.build.warning).toMatch(
      /warehouse\.duckdb was not a DuckDB database file: the build started from the one before it \(warehouse\.duckdb\.previous\)$/,
    );
    expect(again.build.warning).toBeUndefined();

    // Failing tests fail the run (exit 1) and the summary names the step and the tests: here freshness
    // with no slack, for the streams this run leaves alone.
    const stale = await runCli({
      pipeline: w.pipelinePath,
      dataDir: w.dataDir,
      json: true,
      streams: 'rewards',
      maxAge: ['0s'],
    });
    expect(stale.code).toBe(1);
    const staleReport = runReportOf(stale.stdout);
    expect(staleReport).toMatchObject({ status: 'failed', failedStep: 'test', exitCode: 1 });
    expect(staleReport.extract.status).toBe('ok');
    expect(staleReport.build.status).toBe('ok');
    expect(staleReport.test.failed.map((f) => f.name)).toContain('freshness utxos');
    expect(staleReport.test.failed.find((f) => f.name === 'freshness utxos')?.message).toMatch(
      /^\d+ of \d+ partitions last checked more than 0s ago \(oldest: network=fuji .*\)$/,
    );
  }, 60_000);

  it('exits 2 on a bad configuration and 75 when another run holds the lock', async () => {
    emulator = await startEmulator();
    const w = coreWorkspace(emulator);
    const bad = await runCli({
      pipeline: w.pipelinePath,
      dataDir: w.dataDir,
      json: true,
      streams: 'rewardz',
    });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/unknown stream "rewardz"/);
    expect(existsSync(w.dataDir)).toBe(false);
    const badAge = await runCli({ pipeline: w.pipelinePath, dataDir: w.dataDir, maxAge: ['soon'] });
    expect(badAge.code).toBe(2);
    expect(badAge.stderr).toMatch(/--max-age: "soon" is not a duration/);

    const holder = await openLake({ dataDir: w.dataDir });
    try {
      const locked = await runCli({ pipeline: w.pipelinePath, dataDir: w.dataDir, json: true });
      expect(locked.code).toBe(75);
      expect(runReportOf(locked.stdout)).toMatchObject({
        runId: '-',
        status: 'locked',
        exitCode: 75,
        failedStep: 'extract',
        build: { status: 'not run' },
        test: { status: 'not run' },
      });
    } finally {
      await holder.close();
    }
  });
});

describe('avalake run --models --tests', () => {
  it('builds and tests the models and tests of the folders named; a folder that is not there, or a broken model, is exit 2 before the extract', async () => {
    emulator = await startEmulator();
    const w = coreWorkspace(emulator);
    const models = join(w.dir, 'models');
    cpSync('sql/models', models, { recursive: true });
    writeFileSync(
      join(models, 'marts', 'reward_type_totals.sql'),
      '-- description: rewards per type\n-- unique: reward_type\nselect reward_type, count(*) as rewards from stg_rewards group by all\n',
    );
    const tests = join(w.dir, 'tests');
    mkdirSync(tests);
    writeFileSync(
      join(tests, 'every_type_counted.sql'),
      '-- description: every reward is counted under its type\n-- requires: stg_rewards\nselect * from (select (select sum(rewards) from reward_type_totals) as counted, (select count(*) from stg_rewards) as held) where counted <> held\n',
    );
    const { code, stdout, stderr } = await runCli({
      pipeline: w.pipelinePath,
      dataDir: w.dataDir,
      models,
      tests,
      json: true,
    });
    expect(code, stderr).toBe(0);
    const report = runReportOf(stdout);
    expect(report.build.built.map((b) => b.name)).toContain('reward_type_totals');
    expect(report.test.passed).toContain('every_type_counted');
    const [totals] = await queryWarehouse(
      w.dataDir,
      'select sum(rewards) as counted, (select count(*) from stg_rewards) as held from reward_type_totals',
    );
    expect(totals?.counted).toBe(totals?.held);

    const elsewhere = join(w.dir, 'fresh');
    const missing = await runCli({
      pipeline: w.pipelinePath,
      dataDir: elsewhere,
      models: join(w.dir, 'modls'),
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--models .*modls: no such folder; name the folder of the SQL models/);
    const noTests = await runCli({
      pipeline: w.pipelinePath,
      dataDir: elsewhere,
      tests: join(w.dir, 'tsts'),
    });
    expect(noTests.code).toBe(2);
    expect(noTests.stderr).toMatch(/--tests .*tsts: no such folder; name the folder of the SQL tests/);
    writeFileSync(join(models, 'marts', 'broken.sql'), '-- materialized: sometimes\nselect 1\n');
    const broken = await runCli({ pipeline: w.pipelinePath, dataDir: elsewhere, models });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/broken\.sql: materialized must be view or table, got "sometimes"/);
    expect(existsSync(elsewhere)).toBe(false);
  }, 60_000);
});

describe('avalake run interrupted', () => {
  it('exits 130 with a consistent lake and no build; the next run completes the work', async () => {
    // Every answer is slow, so the signal surely lands mid-extract.
    emulator = await startEmulator({ faults: 'slow=1:150' });
    const w = coreWorkspace(emulator, (p) => {
      p.flush = { rows: 100 };
    });
    const child = spawn(
      process.execPath,
      ['bin/avalake.js', 'run', w.pipelinePath, '--data-dir', w.dataDir, '--json', '--quiet'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Mid-extract: once the emulator has answered a few requests (a fixed delay raced the start-up on a
    // loaded machine).
    while (emulator.requests.total < 5) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGINT');
    const code = await exited;
    expect(code, stderr).toBe(130);
    expect(stderr).not.toMatch(/\n\s+at /);
    const report = runReportOf(stdout);
    expect(report).toMatchObject({ status: 'interrupted', exitCode: 130, build: { status: 'not run' } });
    expect(existsSync(`${w.dataDir}/warehouse.duckdb`)).toBe(false);
    const interruptedRows = Object.values(report.extract.streams).reduce((n, s) => n + s.rows, 0);
    // Some streams may have committed nothing yet; those that did hold each row once.
    for (const stream of CORE_STREAMS.filter((s) => s !== 'validators' && hasParquet(w.dataDir, s)))
      expect(await duplicateRows(w.dataDir, stream), stream).toBe(0);

    // The next run finishes the work: the lake equals the truth, no duplicates, built and tested. The
    // emulator comes back on the same port without the slowness (same seed and clock: the same world;
    // the page tokens it issued before are gone, which a resuming walk must survive anyway).
    const port = Number(new URL(emulator.url).port);
    await emulator.close();
    emulator = await startEmulator({ port });
    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(w.pipelinePath, 'utf8')));
    const again = await runCli({ pipeline: w.pipelinePath, dataDir: w.dataDir, json: true });
    expect(again.code, again.stderr).toBe(0);
    const done = runReportOf(again.stdout);
    expect(done).toMatchObject({ status: 'ok', build: { status: 'ok' }, test: { status: 'ok' } });
    const total = Object.values(done.extract.streams).reduce((n, s) => n + s.rows, 0);
    expect(interruptedRows + total).toBeGreaterThan(0);
    expect(sorted(await lakeTotals(w.dataDir))).toEqual(sorted(await truthOf(emulator, pipeline)));
    for (const stream of CORE_STREAMS.filter((s) => s !== 'validators'))
      expect(await duplicateRows(w.dataDir, stream), stream).toBe(0);
  }, 60_000);
});
