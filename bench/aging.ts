/**
 * Issue 10: "Months of cron: a run costs what is new, never what is behind it."
 *
 * N runs of `avalake run` on the demo pipeline's default streams (pipelines/demo.json, urls pointed at an
 * in-process emulator), the emulator's world moved --step (15 minutes) between runs, as cron would see it.
 * Each run is the CLI's own `run(args, env)` (src/cli/run.ts), in this process by default, or with
 * `--mode child` a fresh `avalake run --json` process per run (bin/avalake), as cron starts it (the
 * emulator stays in this process either way). After every run the lake is counted (bench/lib/lake-census.ts): Parquet
 * files a reader globbing `lake/<stream>/**\/*.parquet` sees, Parquet files on disk, commit-log files,
 * lake bytes.
 *
 * Printed: a table at run 1, 10 and N; seconds are the median of a few runs around each point (8–12 and
 * N−4..N) because the machine is shared and noisy; counts are taken at the run itself. Then the issue's
 * ratios, and one JSON line with every number. A run that exits ≠ 0 or throws is printed to stderr at
 * once, listed at the end, and makes the bench exit 1.
 *
 * Usage: npx tsx bench/aging.ts [--runs 500] [--step 15m] [--data-dir DIR] [--seed 1] [--mode inproc|child]
 *                               [--clock fixed|real] [--keep]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type RunArgs, type RunReport, run } from '../src/cli/run.ts';
import { createEmulator, DEFAULT_SEED } from '../src/emulator/index.ts';
import { STREAMS } from '../src/extract/streams/index.ts';
import { censusOf, type LakeCensus } from './lib/lake-census.ts';
import { LAUNCHER, launcherEnv } from './lib/launcher.ts';
import { shiftClock } from './lib/shifted-clock.ts';
import { fmt, median, table } from './lib/stats.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PIPELINE = join(ROOT, 'pipelines', 'demo.json');
/** Runs either side of run 10 (8..12), and runs before N (N−4..N), whose median seconds are reported. */
const WINDOW = 5;
const PROGRESS_EVERY = 50;
const MB = 1024 * 1024;

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '500' },
    step: { type: 'string', default: '15m' },
    'data-dir': { type: 'string' },
    seed: { type: 'string', default: String(DEFAULT_SEED) },
    mode: { type: 'string', default: 'inproc' },
    clock: { type: 'string', default: 'fixed' },
    keep: { type: 'boolean', default: false },
  },
});

function usage(message: string): never {
  process.stderr.write(`bench/aging: ${message}\n`);
  process.exit(2);
}

/** "15m", "1h", "900s", "900" (seconds), "1d" → seconds. */
function parseStep(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h|d)?$/.exec(text.trim());
  if (!match) usage(`--step "${text}": expected a duration such as 15m, 1h, 900s`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[(match[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) usage(`--runs "${values.runs}": expected a whole number ≥ 1`);
const STEP_S = parseStep(values.step);
const SEED = Number(values.seed);
if (!Number.isInteger(SEED)) usage(`--seed "${values.seed}": expected a whole number`);
const MODE = values.mode;
if (MODE !== 'inproc' && MODE !== 'child') usage(`--mode "${MODE}": expected inproc or child`);
if (values.clock !== 'fixed' && values.clock !== 'real')
  usage(`--clock "${values.clock}": expected fixed or real`);

const tempDir = values['data-dir'] ? undefined : mkdtempSync(join(tmpdir(), 'avalake-bench-aging-'));
const dataDir = resolve(values['data-dir'] ?? join(tempDir as string, 'data'));
const lakeDir = join(dataDir, 'lake');
const snapshotStreams = new Set(STREAMS.filter((s) => s.strategy === 'snapshot').map((s) => s.name));
// The defaults are measured: an AVALAKE_STREAMS (or any AVALAKE_*) in the shell must not change them.
const env = launcherEnv();

// Note: a fixed clock starting at the wall clock's now moves only by --step, so the world each run sees
// is a function of the seed and the run number; the pipeline's rolling "7d" start is taken from the wall
// clock, so the emulator must start near it.
const emulator = await createEmulator({
  seed: SEED,
  rateLimit: 'off',
  clock: values.clock === 'real' ? 'real' : `fixed:${Math.floor(Date.now() / 1000)}`,
});

interface RunRecord {
  run: number;
  /** null: the run threw (in-process) or was killed by a signal (child). */
  exitCode: number | null;
  status: string;
  problem?: string;
  /** Wall seconds around the call (child mode: includes starting the process). */
  wallSeconds: number;
  seconds: number;
  extract: number;
  build: number;
  test: number;
  /** Build and tests both ran, so the seconds are a whole run's (a partial extract still builds and tests). */
  complete: boolean;
  rows: number;
  snapshotRows: number;
  requests: number;
  streamSeconds: Record<string, number>;
  census: LakeCensus;
  /** This process's RSS after the run (in-process mode: the run's memory stays here). */
  rssMB: number;
  /** The warehouse file's size: its rows, and whatever its builds' deletes and rewrites leave unreused. */
  warehouseBytes: number;
}

/** What went wrong in a report, in one line: failed step, failed streams, build reason, failed tests. */
function problemOf(report: RunReport): string | undefined {
  const parts: string[] = [];
  if (report.failedStep) parts.push(`${report.failedStep} failed`);
  for (const [name, s] of Object.entries(report.extract.streams))
    if (s.failed > 0) parts.push(`${name}: ${s.failed} partitions failed (${(s.errors ?? []).join('; ')})`);
  if (report.build.status === 'failed') parts.push(`build: ${report.build.reason ?? '?'}`);
  for (const f of report.test.failed) parts.push(`test ${f.name}: ${f.status} ${f.message}`);
  if (report.test.status === 'failed' && report.test.reason) parts.push(`test: ${report.test.reason}`);
  return parts.length > 0 ? parts.join(' | ').slice(0, 2_000) : undefined;
}

function runArgs(): RunArgs {
  return {
    pipeline: PIPELINE,
    dataDir,
    baseUrl: emulator.url,
    metricsUrl: emulator.url,
    nodeUrl: `${emulator.url}/fuji`,
    json: true,
    quiet: true,
  } as RunArgs;
}

/** One `run` in this process: its JSON report is what it writes to stdout, captured. */
async function runInProcess(): Promise<{ exitCode: number | null; stdout: string; crash?: string }> {
  const write = process.stdout.write;
  let stdout = '';
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
  try {
    return { exitCode: await run(runArgs(), env), stdout };
  } catch (error) {
    return { exitCode: null, stdout, crash: (error as Error).stack ?? String(error) };
  } finally {
    process.stdout.write = write;
  }
}

/** One `avalake run --json` child process, as cron starts it. */
function runAsChild(): Promise<{ exitCode: number | null; stdout: string; crash?: string }> {
  const args = [
    'run',
    PIPELINE,
    '--json',
    '--quiet',
    '--data-dir',
    dataDir,
    '--base-url',
    emulator.url,
    '--metrics-url',
    emulator.url,
    '--node-url',
    `${emulator.url}/fuji`,
  ];
  return new Promise((done) => {
    const child = spawn(LAUNCHER, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4_000);
    });
    child.once('error', (error) => done({ exitCode: null, stdout, crash: error.message }));
    child.once('close', (code, signal) => {
      if (stderr.trim()) process.stderr.write(stderr.endsWith('\n') ? stderr : `${stderr}\n`);
      done(
        signal
          ? { exitCode: null, stdout, crash: `killed by ${signal}; stderr: ${stderr.trim().slice(-500)}` }
          : { exitCode: code, stdout },
      );
    });
  });
}

function parseReport(stdout: string): RunReport | undefined {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!line) return undefined;
  try {
    return JSON.parse(line) as RunReport;
  } catch {
    return undefined;
  }
}

async function oneRun(n: number): Promise<RunRecord> {
  const started = performance.now();
  const outcome = MODE === 'child' ? await runAsChild() : await runInProcess();
  const wallSeconds = (performance.now() - started) / 1000;
  const report = parseReport(outcome.stdout);
  const streams = Object.entries(report?.extract.streams ?? {});
  const problem =
    outcome.crash ??
    (report
      ? problemOf(report)
      : `no JSON report on stdout: ${outcome.stdout.trim().slice(-500) || '(empty)'}`);
  return {
    run: n,
    exitCode: outcome.exitCode,
    status: outcome.crash ? 'crashed' : (report?.status ?? 'no report'),
    ...(problem !== undefined ? { problem } : {}),
    wallSeconds,
    seconds: report?.seconds ?? wallSeconds,
    extract: report?.extract.seconds ?? Number.NaN,
    build: report?.build.seconds ?? Number.NaN,
    test: report?.test.seconds ?? Number.NaN,
    complete: report !== undefined && report.build.status !== 'not run' && report.test.status !== 'not run',
    rows: streams.reduce((sum, [, s]) => sum + s.rows, 0),
    snapshotRows: streams.reduce((sum, [name, s]) => sum + (snapshotStreams.has(name) ? s.rows : 0), 0),
    requests: streams.reduce((sum, [, s]) => sum + s.requests, 0),
    streamSeconds: Object.fromEntries(streams.map(([name, s]) => [name, s.seconds])),
    census: await censusOf(lakeDir),
    rssMB: process.memoryUsage().rss / MB,
    warehouseBytes: statSync(join(dataDir, 'warehouse.duckdb'), { throwIfNoEntry: false })?.size ?? 0,
  };
}

const failed = (r: RunRecord) => r.exitCode !== 0;

function progressLine(r: RunRecord): string {
  const c = r.census;
  return (
    `run ${r.run}/${RUNS}: exit ${r.exitCode ?? 'none'} ${r.status}, ${r.seconds.toFixed(1)}s ` +
    `(extract ${r.extract}, build ${r.build}, test ${r.test}), ${r.rows} rows, ` +
    `${c.visibleFiles} visible Parquet files (${c.diskParquetFiles} on disk), ${c.commitFiles} commit files, ` +
    `lake ${(c.lakeBytes / MB).toFixed(1)} MB, warehouse ${(r.warehouseBytes / MB).toFixed(1)} MB, rss ${r.rssMB.toFixed(0)} MB`
  );
}

const records: RunRecord[] = [];
/** Each distinct problem is printed in full once; later runs with the same one say so in a line. */
const seenProblems = new Map<string, number>();
const benchStarted = performance.now();
// The wall clock's date, taken before the runs shift this process's clock with the world's.
const BENCH_STARTED_AT = new Date().toISOString();
process.stderr.write(
  `bench/aging: ${RUNS} runs of \`avalake run\` (${MODE === 'child' ? 'a child process each' : 'in-process'}), ` +
    `pipelines/demo.json default streams, world +${values.step} between runs, seed ${SEED}, ` +
    `emulator ${emulator.url}, data dir ${dataDir}\n`,
);
try {
  for (let n = 1; n <= RUNS; n++) {
    if (n > 1) emulator.advance(STEP_S);
    // avalake's clock follows the world's (in this process; a child run keeps the real clock).
    if (values.clock === 'fixed') shiftClock((n - 1) * STEP_S * 1000);
    const record = await oneRun(n);
    records.push(record);
    if (failed(record)) {
      const problem = record.problem ?? '(no reason given)';
      const first = seenProblems.get(problem);
      if (first === undefined) seenProblems.set(problem, n);
      process.stderr.write(
        `FAILED ${progressLine(record)}\n  ${first === undefined ? problem : `the same problem as run ${first}`}\n`,
      );
    } else if (n === 1 || n === 10 || n % PROGRESS_EVERY === 0 || n === RUNS)
      process.stderr.write(`${progressLine(record)}\n`);
  }
} finally {
  await emulator.close();
}
const benchSeconds = (performance.now() - benchStarted) / 1000;

// ---- Points, ratios, output ----

const at = (n: number): RunRecord => records[Math.min(n, records.length) - 1] as RunRecord;
/** Runs whose seconds are the median reported at point n: [n−2, n+2] inside the runs, or the last WINDOW. */
function windowOf(n: number): RunRecord[] {
  if (n === 1) return [at(1)];
  const to = n === RUNS ? n : Math.min(RUNS, n + (WINDOW >> 1));
  const from = Math.max(1, to - WINDOW + 1);
  return records.slice(from - 1, to).filter((r) => r.complete);
}
const med = (rs: RunRecord[], pick: (r: RunRecord) => number) => median(rs.map(pick));

interface Point {
  run: number;
  window: string;
  seconds: number;
  extract: number;
  build: number;
  test: number;
  rows: number;
  visibleFiles: number;
  diskParquetFiles: number;
  commitFiles: number;
  lakeBytes: number;
  lakeDiskBytes: number;
  parquetBytes: number;
  warehouseBytes: number;
  rssMB: number;
}

function pointOf(n: number): Point {
  const w = windowOf(n);
  const r = at(n);
  return {
    run: n,
    window: w.length > 1 ? `${w[0]?.run}–${w[w.length - 1]?.run}` : String(n),
    seconds: med(w, (x) => x.seconds),
    extract: med(w, (x) => x.extract),
    build: med(w, (x) => x.build),
    test: med(w, (x) => x.test),
    rows: r.rows,
    visibleFiles: r.census.visibleFiles,
    diskParquetFiles: r.census.diskParquetFiles,
    commitFiles: r.census.commitFiles,
    lakeBytes: r.census.lakeBytes,
    lakeDiskBytes: r.census.lakeDiskBytes,
    parquetBytes: r.census.diskParquetBytes,
    warehouseBytes: r.warehouseBytes,
    rssMB: r.rssMB,
  };
}

const marks = [...new Set([1, 10, RUNS].filter((n) => n <= RUNS))];
const points = marks.map(pointOf);
const p1 = points[0] as Point;
const p10 = points.find((p) => p.run === 10);
const pN = points[points.length - 1] as Point;

const rows = [
  [
    'after run',
    'seconds of',
    'run s',
    'extract s',
    'build s',
    'test s',
    'rows',
    'visible files',
    'Parquet on disk',
    'commit files',
    'lake MB',
    'du MB',
    'warehouse MB',
    'RSS MB',
  ],
  ...points.map((p) => [
    String(p.run),
    p.window === String(p.run) ? `run ${p.run}` : `median ${p.window}`,
    fmt(p.seconds),
    fmt(p.extract),
    fmt(p.build),
    fmt(p.test),
    p.rows.toLocaleString('en-US'),
    p.visibleFiles.toLocaleString('en-US'),
    p.diskParquetFiles.toLocaleString('en-US'),
    p.commitFiles.toLocaleString('en-US'),
    fmt(p.lakeBytes / MB),
    fmt(p.lakeDiskBytes / MB),
    fmt(p.warehouseBytes / MB),
    fmt(p.rssMB),
  ]),
];

const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? a / b : Number.NaN);
const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '—');

// Lake growth per run after run 10, beside the rows those runs wrote. "New records' bytes" is estimated at
// run 1's Parquet bytes per row (one large first load: the lake's best case), so what is left over is what
// small files, commit records and stored-again snapshots cost.
const from = p10 ?? p1;
const span = pN.run - from.run;
const later = records.slice(from.run);
const rowsPerRun = span > 0 ? later.reduce((s, r) => s + r.rows, 0) / span : Number.NaN;
const snapshotRowsPerRun = span > 0 ? later.reduce((s, r) => s + r.snapshotRows, 0) / span : Number.NaN;
const growthPerRun = span > 0 ? (pN.lakeBytes - from.lakeBytes) / span : Number.NaN;
const parquetGrowthPerRun = span > 0 ? (pN.parquetBytes - from.parquetBytes) / span : Number.NaN;
const bytesPerRowRun1 = at(1).rows > 0 ? at(1).census.diskParquetBytes / at(1).rows : Number.NaN;
const overheadPerRun = growthPerRun - rowsPerRun * bytesPerRowRun1;
const overheadPerRunExSnapshots = growthPerRun - (rowsPerRun - snapshotRowsPerRun) * bytesPerRowRun1;

// Which streams' extract time grew most, 10 → N (median seconds over the same windows).
const streamGrowth = p10
  ? [...new Set(records.flatMap((r) => Object.keys(r.streamSeconds)))]
      .map((name) => {
        const s10 = med(windowOf(10), (r) => r.streamSeconds[name] ?? Number.NaN);
        const sN = med(windowOf(RUNS), (r) => r.streamSeconds[name] ?? Number.NaN);
        return { name, s10, sN, delta: sN - s10 };
      })
      .filter((s) => Number.isFinite(s.delta))
      .sort((a, b) => b.delta - a.delta)
      .slice(0, 5)
  : [];

const failures = records.filter(failed);
function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}
/** [1,2,3,7,9,10] → "1–3, 7, 9–10". */
function compactRuns(runs: number[]): string {
  const spans: string[] = [];
  for (let i = 0; i < runs.length; ) {
    let j = i;
    while (j + 1 < runs.length && (runs[j + 1] as number) === (runs[j] as number) + 1) j++;
    spans.push(i === j ? String(runs[i]) : `${runs[i]}–${runs[j]}`);
    i = j + 1;
  }
  return spans.join(', ');
}
const KB = 1024;
const lines = [
  '',
  `bench/aging — ${RUNS} runs of \`avalake run\` (${MODE}), pipelines/demo.json default streams, world +${values.step} (${STEP_S}s) between runs, seed ${SEED}, started ${BENCH_STARTED_AT}, ${benchSeconds.toFixed(0)}s in all`,
  '',
  table(rows),
  '',
];
if (p10 && RUNS > 10) {
  lines.push(
    `run ${RUNS} / run 10 seconds (medians):   ${x(ratio(pN.seconds, p10.seconds))}   (issue: ≤ 1.25×)` +
      `   extract ${x(ratio(pN.extract, p10.extract))}, build ${x(ratio(pN.build, p10.build))}, test ${x(ratio(pN.test, p10.test))}`,
    `visible Parquet files at ${RUNS} / at 10:   ${x(ratio(pN.visibleFiles, p10.visibleFiles))}   (issue: ≤ 1.5×)` +
      `   on disk ${x(ratio(pN.diskParquetFiles, p10.diskParquetFiles))}, commit files ${x(ratio(pN.commitFiles, p10.commitFiles))}`,
    `per run, runs 11–${RUNS}: ${fmt((pN.visibleFiles - p10.visibleFiles) / span)} visible files, ` +
      `${fmt((pN.commitFiles - p10.commitFiles) / span)} commit files, ${fmt(rowsPerRun)} rows written ` +
      `(${fmt(snapshotRowsPerRun)} of them snapshot rows), lake +${fmt(growthPerRun / KB)} KB (Parquet +${fmt(parquetGrowthPerRun / KB)} KB)`,
    `lake growth per run beyond the new rows (at run 1's ${fmt(bytesPerRowRun1)} Parquet bytes/row): ` +
      `${fmt(overheadPerRun / KB)} KB; counting snapshot rows as overhead: ${fmt(overheadPerRunExSnapshots / KB)} KB   (issue: a few KB)`,
    `warehouse file at ${RUNS} / at 10: ${x(ratio(pN.warehouseBytes, p10.warehouseBytes))}, ` +
      `${fmt((pN.warehouseBytes - p10.warehouseBytes) / span / KB)} KB a run`,
  );
  if (streamGrowth.length > 0)
    lines.push(
      `extract seconds that grew most, median around 10 → ${RUNS}: ${streamGrowth
        .map((s) => `${s.name} ${fmt(s.s10)}→${fmt(s.sN)}`)
        .join(', ')}`,
    );
}
lines.push(
  failures.length === 0
    ? `every run exited 0`
    : `${failures.length} of ${RUNS} runs FAILED (exit ≠ 0): ${[
        ...groupBy(failures, (r) => `exit ${r.exitCode ?? 'none'} (${r.status}): ${r.problem ?? '?'}`),
      ]
        .map(([why, rs]) => `runs ${compactRuns(rs.map((r) => r.run))}: ${why}`)
        .join('\n  ')}`,
);
process.stdout.write(`${lines.join('\n')}\n`);

const round = (v: number, digits = 3) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : null);
const series = records
  .filter((r) => r.run === 1 || r.run % 10 === 0 || r.run === RUNS)
  .map((r) => ({
    run: r.run,
    exit: r.exitCode,
    s: r.seconds,
    extract: r.extract,
    build: r.build,
    test: r.test,
    rows: r.rows,
    visible: r.census.visibleFiles,
    parquet: r.census.diskParquetFiles,
    commits: r.census.commitFiles,
    lakeBytes: r.census.lakeBytes,
    warehouseBytes: r.warehouseBytes,
    rssMB: round(r.rssMB, 0),
  }));
const summary = {
  bench: 'aging',
  date: BENCH_STARTED_AT,
  mode: MODE,
  runs: RUNS,
  stepSeconds: STEP_S,
  seed: SEED,
  clock: values.clock,
  benchSeconds: round(benchSeconds, 1),
  points: points.map((p) => ({
    ...p,
    seconds: round(p.seconds),
    extract: round(p.extract),
    build: round(p.build),
    test: round(p.test),
    rssMB: round(p.rssMB, 0),
  })),
  ratios: p10
    ? {
        seconds: round(ratio(pN.seconds, p10.seconds)),
        extract: round(ratio(pN.extract, p10.extract)),
        build: round(ratio(pN.build, p10.build)),
        test: round(ratio(pN.test, p10.test)),
        visibleFiles: round(ratio(pN.visibleFiles, p10.visibleFiles)),
        diskParquetFiles: round(ratio(pN.diskParquetFiles, p10.diskParquetFiles)),
        commitFiles: round(ratio(pN.commitFiles, p10.commitFiles)),
      }
    : null,
  perRunAfter10: {
    rows: round(rowsPerRun, 1),
    snapshotRows: round(snapshotRowsPerRun, 1),
    lakeBytes: round(growthPerRun, 0),
    parquetBytes: round(parquetGrowthPerRun, 0),
    bytesPerRowRun1: round(bytesPerRowRun1, 1),
    overheadBytes: round(overheadPerRun, 0),
    overheadBytesSnapshotsAsOverhead: round(overheadPerRunExSnapshots, 0),
  },
  streamGrowth: streamGrowth.map((s) => ({
    ...s,
    s10: round(s.s10),
    sN: round(s.sN),
    delta: round(s.delta),
  })),
  visibleByStreamAtN: at(RUNS).census.visibleByStream,
  failures: [...groupBy(failures, (r) => JSON.stringify([r.exitCode, r.status, r.problem ?? null]))].map(
    ([, rs]) => ({
      runs: compactRuns(rs.map((r) => r.run)),
      exitCode: rs[0]?.exitCode,
      status: rs[0]?.status,
      problem: rs[0]?.problem,
    }),
  ),
  series,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);

if (tempDir && !values.keep) rmSync(tempDir, { recursive: true, force: true });
else process.stderr.write(`bench/aging: the data directory is kept: ${dataDir}\n`);
process.exit(failures.length > 0 ? 1 : 0);
