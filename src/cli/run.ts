import type { ExtractConfig } from '../extract/config.ts';
import type { Logger } from '../extract/log.ts';
import type { ProgressEvent } from '../extract/progress.ts';
import type { RunSummary } from '../extract/run.ts';
import { STREAM_NAMES } from '../extract/streams/index.ts';
import { LockHeldError, type Partition, partitionId } from '../load/index.ts';
import { buildWarehouse } from '../warehouse/build.ts';
import { type MaxAge, parseDuration, parseMaxAge } from '../warehouse/freshness.ts';
import { loadModels, ModelError } from '../warehouse/models.ts';
import { defaultModelsDir } from '../warehouse/paths.ts';
import { loadSqlTests, runWarehouseTests } from '../warehouse/test.ts';
import { WarehouseUsageError } from '../warehouse/usage-error.ts';
import { type CompactionReport, compactionDeviceFailure, compactLake, damagedStreams } from './compact.ts';
import { EXIT } from './exit.js';
import {
  type ExtractArgs,
  extractWith,
  outputOf,
  redactorOf,
  resolveOrReport,
  type StreamTotals,
  saysWhatStopped,
  streamTotals,
} from './extract.ts';
import { untilSignal } from './until-signal.ts';

export interface RunArgs extends ExtractArgs {
  /** `--models`, `--tests`: the folders of the models and SQL tests (default sql/models, sql/tests). */
  models?: string;
  tests?: string;
  maxAge?: string[];
  /** `--build-wait`: a duration (30m, 2h); default BUILD_WAIT_SECONDS. */
  buildWait?: string;
}

/** One stream of the extract step, summed over its partitions; `seconds` is wall time, first start to last end. */
export interface StreamReport extends StreamTotals {
  seconds: number;
}

type StepStatus = 'ok' | 'failed' | 'not run';

/** What `avalake run --json` prints: one object, whatever happened after the configuration was read. */
export interface RunReport {
  /** The extract's run id; `-` when it could not begin (the lock held, the catalog or bucket not there). */
  runId: string;
  pipeline: string;
  dataDir: string;
  /** The run as a whole: the extract's status, or `failed` when the build or the tests failed. */
  status: RunSummary['status'] | 'locked';
  exitCode: number;
  /** The first step that failed, if any. */
  failedStep?: 'extract' | 'build' | 'test';
  startedAt: string;
  seconds: number;
  extract: {
    status: RunSummary['status'] | 'locked' | 'error';
    /**
     * What stopped it: with `failed`, a failure no partition could absorb (the lake's storage or catalog
     * lost mid-run; `streams` has what ran before it); with `error`, one before it began (at the open).
     */
    reason?: string;
    /** Which quota stopped the run and when it resets; the next run continues. */
    quota?: string;
    seconds: number;
    streams: Record<string, StreamReport>;
  };
  build: {
    status: StepStatus;
    /** Why it did not run, or why it failed. */
    reason?: string;
    /** Something the user should know of a build that succeeded (the last warehouse could not be opened). */
    warning?: string;
    seconds: number;
    warehouse?: string;
    built: { name: string; materialized: string; rows?: number }[];
    skipped: { name: string; reason: string }[];
  };
  test: {
    status: StepStatus;
    reason?: string;
    seconds: number;
    passed: string[];
    /**
     * Checks that warn without failing the run: freshness of partitions still catching up (a backfill a
     * quota spreads over runs) or waiting for their first read behind it.
     */
    warned: { name: string; message: string }[];
    failed: { name: string; status: 'fail' | 'error'; message: string }[];
    skipped: { name: string; reason: string }[];
  };
  /** Small files merged where a folder's size tier passed its threshold (nothing most runs). */
  compact: {
    status: StepStatus;
    reason?: string;
    seconds: number;
    streams: CompactionReport['streams'];
  };
}

/**
 * Seconds since `t`, a `performance.now()` reading. Durations are on the monotonic clock: NTP stepping the
 * wall clock back an hour during a run must not report its build as taking -3595 seconds.
 */
const since = (t: number) => Math.round((performance.now() - t) / 100) / 10;

/**
 * How long a run's build waits for another build of the same warehouse (another worker's run, or a
 * slow one of its own cron) before it gives up with exit 75, unless `--build-wait` says. Long enough
 * for any build; short enough that runs stuck behind a hung one do not pile up.
 */
const BUILD_WAIT_SECONDS = 30 * 60;

/**
 * Extract, build, test, in that order: the entry for cron. Exit codes of DESIGN.md: configuration 2,
 * lock 75, interrupted 130, extract failures 1 or 3 as `extract`; then a failed build or failed tests 1.
 * A spent quota is a clean stop: the warehouse is still built and tested from what was committed.
 */
export function run(args: RunArgs, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  return untilSignal((interrupted) => runSteps(args, env, interrupted));
}

async function runSteps(
  args: RunArgs,
  env: Readonly<Record<string, string | undefined>>,
  interrupted: AbortSignal,
): Promise<number> {
  let maxAge: MaxAge;
  let buildWaitSeconds: number;
  const modelsDir = args.models ?? defaultModelsDir();
  try {
    maxAge = parseMaxAge(args.maxAge ?? [], STREAM_NAMES);
    buildWaitSeconds =
      args.buildWait === undefined
        ? BUILD_WAIT_SECONDS
        : parseDuration(args.buildWait, '--build-wait', { bareIsHours: false });
    // The models and tests are read before the extract: a mistake in them is found before an hour of it.
    loadModels(modelsDir);
    if (args.tests !== undefined) loadSqlTests(args.tests);
  } catch (error) {
    if (!(error instanceof WarehouseUsageError || error instanceof ModelError)) throw error;
    process.stderr.write(`avalake: ${error.message}\n`);
    return EXIT.usage;
  }
  const config = await resolveOrReport(args, env);
  if (typeof config === 'number') return config;
  const redact = redactorOf(config);
  const started = performance.now();
  const report: RunReport = {
    runId: '-',
    pipeline: config.pipelinePath,
    dataDir: config.dataDir,
    status: 'ok',
    exitCode: EXIT.ok,
    startedAt: new Date().toISOString(),
    seconds: 0,
    extract: { status: 'ok', seconds: 0, streams: {} },
    build: { status: 'not run', seconds: 0, built: [], skipped: [] },
    test: { status: 'not run', seconds: 0, passed: [], warned: [], failed: [], skipped: [] },
    compact: { status: 'not run', seconds: 0, streams: [] },
  };
  const finish = (exitCode: number) => {
    report.exitCode = exitCode;
    report.seconds = since(started);
    const text = args.json ? JSON.stringify(report) : formatRun(report);
    process.stdout.write(redact(`${text}\n`));
    return exitCode;
  };

  const output = outputOf(args, config);
  const { log } = output;
  try {
    // Wall time per stream, from its first partition's start to its last one's end.
    const spans = new Map<string, { from: number; to: number }>();
    const progress = (event: ProgressEvent) => {
      if (event.kind === 'start' || event.kind === 'end') {
        const span = spans.get(event.stream) ?? { from: event.at, to: event.at };
        span.to = Math.max(span.to, event.at);
        spans.set(event.stream, span);
      }
      output.progress(event);
    };
    const extractStarted = performance.now();
    const { code, summary, error } = await extractWith(config, { ...output, progress }, interrupted);
    output.close();
    report.extract.seconds = since(extractStarted);
    if (!summary) {
      report.extract.status = code === EXIT.locked ? 'locked' : 'error';
      report.status = code === EXIT.locked ? 'locked' : 'failed';
      report.failedStep = 'extract';
      if (error) report.extract.reason = error;
      report.build.reason = report.test.reason = error ? 'the extract failed' : 'the extract did not run';
      return finish(code);
    }
    report.runId = summary.runId;
    report.status = report.extract.status = summary.status;
    if (summary.quota) report.extract.quota = summary.quota;
    if (error) report.extract.reason = error;
    report.extract.streams = streamReports(summary, spans);
    if (summary.status === 'partial' || summary.status === 'failed') report.failedStep = 'extract';
    // A refused key fails the run (exit 1), but what the keyless sources committed is built and tested,
    // as a partial run's is.
    const skipsBuild =
      summary.status === 'interrupted' || (summary.status === 'failed' && summary.keyRefused === undefined);
    if (skipsBuild) {
      report.build.reason = report.test.reason =
        summary.status === 'interrupted'
          ? 'interrupted'
          : error
            ? 'the extract failed'
            : summary.unreachable?.length
              ? `unreachable: ${summary.unreachable.map((h) => h.origin).join(', ')}`
              : 'every partition of the extract failed';
      return finish(code);
    }

    const buildStarted = performance.now();
    log({ msg: 'building the warehouse', dataDir: config.dataDir });
    try {
      const built = await buildWarehouse({
        dataDir: config.dataDir,
        localDir: config.localDir,
        modelsDir,
        ...catalogOf(config),
        // Queued behind a build already running, so that a run that ends ok has its rows in the warehouse.
        lock: {
          wait: buildWaitSeconds > 0,
          timeoutMs: buildWaitSeconds * 1000,
          signal: interrupted,
          onWait: (holder) =>
            log({
              msg: 'waiting for another build of the warehouse',
              pid: holder.pid,
              host: holder.hostname,
            }),
        },
      });
      report.build = {
        status: 'ok',
        seconds: since(buildStarted),
        warehouse: built.path,
        built: built.built.map(({ name, materialized, rows }) => ({
          name,
          materialized,
          ...(rows !== undefined ? { rows } : {}),
        })),
        skipped: built.skipped,
        ...(built.rebuilt ? { warning: built.rebuilt } : {}),
      };
      if (built.rebuilt) log({ level: 'warn', msg: 'warehouse rebuilt', why: built.rebuilt });
      log({
        msg: 'built',
        models: built.built.length,
        skipped: built.skipped.length,
        seconds: report.build.seconds,
      });
    } catch (error) {
      const reason = (error as Error).message;
      // Only the wait for another build ends on a signal (a build once begun runs to its end).
      const waitInterrupted = error === interrupted.reason || (error as Error).name === 'AbortError';
      if (interrupted.aborted && waitInterrupted) {
        report.status = 'interrupted';
        report.build = { ...report.build, reason: 'interrupted', seconds: since(buildStarted) };
        report.test.reason = 'interrupted';
        return finish(EXIT.interrupted);
      }
      if (error instanceof LockHeldError) {
        report.status = 'locked';
        report.failedStep = 'build';
        report.build = { ...report.build, reason, seconds: since(buildStarted) };
        report.test.reason = 'the build did not run';
        log({ level: 'error', msg: 'build locked', error: reason });
        await compactStep(config, report, log);
        return finish(EXIT.locked);
      }
      report.build = { ...report.build, status: 'failed', reason, seconds: since(buildStarted) };
      report.test.reason = 'the build failed';
      report.failedStep ??= 'build';
      report.status = 'failed';
      log({ level: 'error', msg: 'build failed', error: reason });
      // The lake is sound whatever the warehouse's trouble: its small files are still merged when due.
      await compactStep(config, report, log);
      return finish(EXIT.failed);
    }
    // A build is atomic, so a signal during it waits for it; the tests are skipped.
    if (interrupted.aborted) {
      report.status = 'interrupted';
      report.test.reason = 'interrupted';
      return finish(EXIT.interrupted);
    }

    const testStarted = performance.now();
    log({ msg: 'testing the warehouse' });
    const planned = plannedPartitions(config);
    try {
      const tests = await runWarehouseTests({
        dataDir: config.dataDir,
        localDir: config.localDir,
        modelsDir,
        ...(args.tests !== undefined ? { testsDir: args.tests } : {}),
        maxAge,
        partitions: planned,
        readNow: new Set(config.streams.map((s) => s.name)),
        ...(summary.status === 'quota' ? { queued: queuedPartitions(config, planned, summary) } : {}),
        ...catalogOf(config),
      });
      const failed = tests.outcomes.filter((o) => o.status === 'fail' || o.status === 'error');
      report.test = {
        status: failed.length > 0 ? 'failed' : 'ok',
        seconds: since(testStarted),
        passed: tests.outcomes.filter((o) => o.status === 'pass').map((o) => o.name),
        warned: tests.outcomes
          .filter((o) => o.status === 'warn')
          .map((o) => ({ name: o.name, message: o.message })),
        failed: failed.map((o) => ({
          name: o.name,
          status: o.status as 'fail' | 'error',
          message: o.message,
        })),
        skipped: tests.outcomes
          .filter((o) => o.status === 'skip')
          .map((o) => ({ name: o.name, reason: o.message })),
      };
      for (const f of report.test.failed)
        log({ level: 'error', msg: 'test failed', test: f.name, why: f.message });
      for (const w of report.test.warned)
        log({ level: 'warn', msg: 'test warned', test: w.name, why: w.message });
      log({
        msg: 'tested',
        passed: report.test.passed.length,
        warned: report.test.warned.length,
        failed: failed.length,
      });
    } catch (error) {
      report.test = {
        ...report.test,
        status: 'failed',
        reason: (error as Error).message,
        seconds: since(testStarted),
      };
    }
    if (interrupted.aborted) {
      report.status = 'interrupted';
      return finish(EXIT.interrupted);
    }
    await compactStep(config, report, log);
    if (report.test.status === 'failed') {
      report.failedStep ??= 'test';
      report.status = 'failed';
      return finish(EXIT.failed);
    }
    return finish(code);
  } finally {
    output.close();
  }
}

/**
 * The partitions the pipeline reads, by stream (all its streams, whatever `--streams` picked for this
 * run): freshness judges these, not partitions or streams since taken out of the pipeline, and names
 * those of them nothing was ever committed for.
 */
function plannedPartitions(config: ExtractConfig): Map<string, Partition[]> {
  // Partitions as the file's pipeline has them: an opt-in stream's depend on its `streams`.
  const pipeline = { ...config.pipeline, streams: config.pipelineStreams.map((s) => s.name) };
  return new Map(config.pipelineStreams.map((stream) => [stream.name, stream.partitions(pipeline)]));
}

/**
 * The partitions of this run's streams that a spent quota stopped it before it read them to an end, by
 * stream (partition ids): those it never began, and those it stopped. Of them, those with nothing
 * committed yet wait their turn behind the backfill (freshness warns of them rather than fails).
 */
function queuedPartitions(
  config: ExtractConfig,
  planned: ReadonlyMap<string, readonly Partition[]>,
  summary: RunSummary,
): Map<string, Set<string>> {
  const key = (stream: string, partition: Partition) => `${stream}\n${partitionId(partition)}`;
  const reached = new Set(
    summary.partitions
      .filter((p) => p.status === 'done' || p.status === 'failed')
      .map((p) => key(p.stream, p.partition)),
  );
  return new Map(
    config.streams.map(({ name }) => [
      name,
      new Set((planned.get(name) ?? []).filter((p) => !reached.has(key(name, p))).map((p) => partitionId(p))),
    ]),
  );
}

/**
 * Compaction, when a folder's size tier passed its threshold: decided from the commit log alone, so a run
 * that has nothing to merge pays a few milliseconds. The warehouse holds its own copy of the rows, so the
 * files may change under it. A failure is reported and leaves the lake as it was; it fails no run.
 */
const catalogOf = (config: ExtractConfig) => (config.catalog ? { catalog: config.catalog } : {});

async function compactStep(config: ExtractConfig, report: RunReport, log: Logger) {
  const { dataDir } = config;
  const started = performance.now();
  try {
    const done = await compactLake({
      dataDir,
      mode: 'due',
      ...catalogOf(config),
      warehouseDir: config.localDir,
    });
    const damaged = damagedStreams(done);
    report.compact = {
      status: damaged.length > 0 ? 'failed' : 'ok',
      ...(damaged.length > 0 ? { reason: damaged.join('; ') } : {}),
      seconds: since(started),
      streams: done.streams,
    };
    // Not "the next run tries again": a damaged file stays so until someone restores it (or repairs the lake).
    for (const message of damaged) log({ level: 'warn', msg: 'a stream was not compacted', error: message });
    if (done.streams.length > damaged.length)
      log({
        msg: 'compacted',
        streams: done.streams.length - damaged.length,
        merged: done.streams.reduce((n, s) => n + s.merged, 0),
        seconds: report.compact.seconds,
      });
  } catch (error) {
    const reason = compactionDeviceFailure(error, dataDir) ?? (error as Error).message;
    if (error instanceof LockHeldError) {
      // Another run is building or extracting: its turn now, compaction's with a later run.
      report.compact = { status: 'not run', reason, seconds: since(started), streams: [] };
      log({ msg: 'compaction left to a later run', why: reason });
      return;
    }
    report.compact = { status: 'failed', reason, seconds: since(started), streams: [] };
    log({ level: 'warn', msg: 'compaction failed; the next run tries again', error: reason });
  }
}

function streamReports(
  summary: RunSummary,
  spans: Map<string, { from: number; to: number }>,
): Record<string, StreamReport> {
  const streams: Record<string, StreamReport> = {};
  for (const [name, totals] of streamTotals(summary)) {
    const span = spans.get(name);
    streams[name] = { ...totals, seconds: span ? Math.round((span.to - span.from) / 100) / 10 : 0 };
  }
  return streams;
}

/** The report for a person: the extract's table, then one line each for build and tests, then the verdict. */
export function formatRun(report: RunReport): string {
  const lines: string[] = [];
  const rows = Object.values(report.extract.streams).reduce((n, s) => n + s.rows, 0);
  lines.push(
    `extract  ${report.extract.status}: ${rows} rows over ${Object.keys(report.extract.streams).length} streams in ${report.extract.seconds}s${
      report.extract.quota ? ` (${report.extract.quota}; the next run continues)` : ''
    }`,
  );
  const streams = Object.entries(report.extract.streams);
  const width = Math.max(6, ...streams.map(([name]) => name.length));
  // What stopped the run (a limit of the process) failed its partitions too: said once, on its own line.
  const { reason } = report.extract;
  const failures = (errors: string[]) =>
    errors.map((e) => (saysWhatStopped(e, reason) ? 'what stopped the run, below' : e)).join('; ');
  for (const [name, s] of streams)
    lines.push(
      `  ${name.padEnd(width)} ${String(s.rows).padStart(8)} rows ${String(s.requests).padStart(6)} requests` +
        `${s.retries > 0 ? `  ${s.retries} retries` : ''}${s.rejects > 0 ? `  ${s.rejects} rejects` : ''}` +
        `${s.failed > 0 ? `  ${s.failed} partitions failed: ${failures(s.errors ?? [])}` : ''}`,
    );
  if (reason) lines.push(`  stopped by: ${reason}`);
  const b = report.build;
  lines.push(
    b.status === 'ok'
      ? `build    ok: ${b.built.length} models built, ${b.skipped.length} skipped, in ${b.seconds}s → ${b.warehouse}`
      : `build    ${b.status}${b.reason ? `: ${b.reason}` : ''}`,
  );
  const t = report.test;
  lines.push(
    t.status === 'not run'
      ? `test     not run${t.reason ? `: ${t.reason}` : ''}`
      : `test     ${t.status}: ${t.passed.length} passed, ${t.warned.length > 0 ? `${t.warned.length} warned, ` : ''}${t.failed.length} failed, ${t.skipped.length} skipped${t.reason ? ` (${t.reason})` : ''}`,
  );
  for (const f of t.failed) lines.push(`  ${f.status.toUpperCase()} ${f.name}: ${f.message}`);
  for (const w of t.warned) lines.push(`  WARN ${w.name}: ${w.message}`);
  const c = report.compact;
  if (c.status === 'failed') lines.push(`compact  failed: ${c.reason}`);
  else if (c.streams.length > 0)
    lines.push(
      `compact  ok: ${c.streams.reduce((n, s) => n + s.merged, 0)} files merged into ${c.streams.reduce((n, s) => n + s.written, 0)} in ${c.seconds}s`,
    );
  lines.push(
    `run ${report.runId}: ${report.status}${report.failedStep ? ` (${report.failedStep} failed)` : ''}, exit ${report.exitCode}`,
  );
  return lines.join('\n');
}
