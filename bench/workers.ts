/**
 * Issue 14: several workers on one catalog.
 *
 * Part 1, one compute-unit limit: "N workers against one compute-unit limit: together they hold goodput
 * ≥ 0.9 of the limit with ≤ 5% 429s." Two in-process emulators with the same short-window limit serve
 * the same world; on each, N workers (`runExtract` with a PostgreSQL catalog, one data directory) split
 * the same pipeline, side by side:
 *   - shared: as shipped, every worker takes its compute units from the catalog's one count for the host;
 *   - alone: each worker keeps only its own header-driven budget (what a worker without a catalog has).
 * Goodput = CUs answered 2xx within the measured windows / (limit × windows), over all workers.
 *
 * Part 2, scaling (rate limit off): 1, 2 and 4 `avalake extract` processes on one catalog against an
 * emulator child process, on a pipeline of many partitions; records/s of each, side by side.
 *
 * Starts its own throwaway PostgreSQL (Debian's binaries, as the tests do).
 * Usage: npx tsx bench/workers.ts [--workers 3] [--window 5] [--windows 8] [--limit 2000] [--scaling 1,2,4]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { demoPipelineOf } from '../src/emulator/demo-pipeline.ts';
import { createEmulator, type Emulator } from '../src/emulator/index.ts';
import { createRateBudget, type RateBudget } from '../src/extract/budget.ts';
import { createFetcher, type FetchRequest } from '../src/extract/fetcher.ts';
import { createHttpClient } from '../src/extract/http.ts';
import { PipelineSchema } from '../src/extract/pipeline.ts';
import { type RunSummary, runExtract } from '../src/extract/run.ts';
import { STREAMS } from '../src/extract/streams/index.ts';
import { freshDatabase, startPostgres } from '../test/helpers/postgres.ts';
import { startChildEmulator } from './lib/child-emulator.ts';
import { type Attempt, recordingHttp } from './lib/recording-http.ts';
import { fmt, ratio, table } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '3' },
    window: { type: 'string', default: '5' },
    windows: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    limit: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '2' },
    scaling: { type: 'string', default: '1,2,4' },
  },
});
const WORKERS = Number(values.workers);
const WINDOW_S = Number(values.window);
const WINDOWS = Number(values.windows);
const WARMUP = Number(values.warmup);
const LIMIT = Number(values.limit);
const CONCURRENCY = Number(values.concurrency);
const SCALING = values.scaling.split(',').map(Number);
const CLOCK = 'fixed:1793577600';
const LATENCY_MS = 50;
const RATE_SPEC = `minute=${WINDOW_S},day=86400,perMinute=${LIMIT},perDay=1000000000`;
/** Many partitions of 100- and 20-CU routes, page size 2: plenty of work for every window. */
const RATE_STREAMS = [
  'utxos',
  'staking_transactions',
  'rewards',
  'delegators',
  'erc20_transfers',
  'icm_messages',
];

const windowOf = (ms: number) => Math.floor(ms / 1000 / WINDOW_S);

function pipelineFor(
  emulator: { url: string },
  truth: Emulator['truth'],
  streams: string[],
  pageSize?: number,
) {
  return PipelineSchema.parse({
    ...demoPipelineOf(truth, 'fuji', emulator.url),
    streams,
    concurrency: CONCURRENCY,
    ...(pageSize ? { pageSize: Object.fromEntries(streams.map((s) => [s, pageSize])) } : {}),
  });
}

/** N in-process workers on one catalog; `shared` false swaps the catalog's allowance for a local budget. */
async function rateRun(emulator: Emulator, catalog: string, shared: boolean, startWindow: number) {
  const pipeline = pipelineFor(emulator, emulator.truth, RATE_STREAMS, 2);
  const streams = STREAMS.filter((s) => RATE_STREAMS.includes(s.name));
  const dir = mkdtempSync(join(tmpdir(), `avalake-bench-workers-${shared ? 'shared' : 'alone'}-`));
  const stop = new AbortController();
  const endMs = (startWindow + WARMUP + WINDOWS) * WINDOW_S * 1000;
  const timer = setTimeout(() => stop.abort(new Error('benchmark span over')), endMs - Date.now());
  const attempts: Attempt[] = [];
  try {
    const summaries = await Promise.all(
      Array.from({ length: WORKERS }, async (): Promise<RunSummary> => {
        const recorded = recordingHttp(
          createHttpClient({ userAgent: 'avalake/bench', connectionsPerHost: CONCURRENCY }),
        );
        const inner = createFetcher({ http: recorded.http });
        const local = new Map<string, RateBudget>();
        const alone = (request: FetchRequest) => {
          const origin = new URL(request.url).origin;
          let budget = local.get(origin);
          if (!budget) {
            budget = createRateBudget({ host: origin });
            local.set(origin, budget);
          }
          return inner({ ...request, ...(request.budget ? { budget } : {}) });
        };
        try {
          return await runExtract({
            pipeline,
            streams,
            dataDir: join(dir, 'data'),
            http: recorded.http,
            catalog,
            ...(shared ? {} : { fetcher: alone }),
            signal: stop.signal,
          });
        } finally {
          attempts.push(...recorded.attempts);
          await recorded.http.close();
        }
      }),
    );
    return { attempts, summaries };
  } finally {
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  }
}

function analyse(attempts: readonly Attempt[], first: number, count: number) {
  const perWindow = new Array<number>(count).fill(0);
  let answered = 0;
  let limited = 0;
  for (const a of attempts) {
    const w = windowOf(a.sentAt) - first;
    if (w < 0 || w >= count || a.status === 0) continue;
    answered++;
    if (a.status === 429) limited++;
    else if (a.status >= 200 && a.status < 300) perWindow[w] = (perWindow[w] ?? 0) + a.cost;
  }
  const served = perWindow.reduce((x, y) => x + y, 0);
  return {
    served,
    perWindow,
    goodput: served / (LIMIT * count),
    answered,
    share429: answered ? limited / answered : 0,
  };
}

async function partOne(postgres: string) {
  console.log(
    `\n## ${WORKERS} workers, one limit: ${LIMIT} CUs per ${WINDOW_S}-s window ("${RATE_SPEC}"), ` +
      `${WARMUP} warm-up + ${WINDOWS} measured windows, concurrency ${CONCURRENCY} each, page size 2\n`,
  );
  const options = { scale: 'small' as const, clock: CLOCK, rateLimit: RATE_SPEC };
  const [a, b] = await Promise.all([createEmulator(options), createEmulator(options)]);
  try {
    const [catalogA, catalogB] = await Promise.all([freshDatabase(postgres), freshDatabase(postgres)]);
    const startWindow = windowOf(Date.now()) + 1;
    await new Promise((r) => setTimeout(r, startWindow * WINDOW_S * 1000 - Date.now() + 20));
    const [shared, alone] = await Promise.all([
      rateRun(a, catalogA, true, startWindow),
      rateRun(b, catalogB, false, startWindow),
    ]);
    const rs = analyse(shared.attempts, startWindow + WARMUP, WINDOWS);
    const ra = analyse(alone.attempts, startWindow + WARMUP, WINDOWS);
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    console.log(
      table([
        ['', 'shared allowance (catalog)', 'each worker alone'],
        ['CUs served (2xx)', fmt(rs.served), fmt(ra.served)],
        ['goodput / limit', rs.goodput.toFixed(3), ra.goodput.toFixed(3)],
        ['requests answered', String(rs.answered), String(ra.answered)],
        ['429 share', pct(rs.share429), pct(ra.share429)],
        ['min CUs in a window', fmt(Math.min(...rs.perWindow)), fmt(Math.min(...ra.perWindow))],
      ]),
    );
    console.log(`per-window CUs, shared: ${rs.perWindow.join(' ')}`);
    console.log(`per-window CUs, alone:  ${ra.perWindow.join(' ')}`);
    const ok = rs.goodput >= 0.9 && rs.share429 <= 0.05;
    console.log(
      `\ngoodput ${rs.goodput.toFixed(3)} (target ≥ 0.90), 429 share ${pct(rs.share429)} (target ≤ 5%): ${ok ? 'PASS' : 'FAIL'}`,
    );
    return ok;
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

/** One `avalake extract` process; resolves with its wall time. */
function extractProcess(pipelinePath: string, dataDir: string, catalog: string) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['bin/avalake.js', 'extract', pipelinePath, '--data-dir', dataDir, '--catalog', catalog, '--quiet'],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`a worker exited ${code}`))));
  });
}

async function partTwo(postgres: string) {
  console.log(
    `\n## Scaling, rate limit off, every answer ${LATENCY_MS} ms away: ${SCALING.join(', ')} worker processes, ` +
      `concurrency ${CONCURRENCY} each, page size 10\n`,
  );
  // Each answer 50 ms away, as a remote service is: what several workers buy is requests in flight.
  const emulator = await startChildEmulator({
    scale: 'small',
    seed: 1,
    clock: CLOCK,
    faults: `slow=1:${LATENCY_MS}`,
  });
  const truth = await createEmulator({ clock: CLOCK, rateLimit: 'off' });
  try {
    // Every stream the demo feeds, page size 10: many partitions and many pages.
    const streams = STREAMS.filter(
      (s) => s.partitions(pipelineFor(emulator, truth.truth, [])).length > 0,
    ).map((s) => s.name);
    const pipeline = {
      ...demoPipelineOf(truth.truth, 'fuji', emulator.url),
      streams,
      concurrency: CONCURRENCY,
    };
    const pageSizes = Object.fromEntries(
      STREAMS.filter((s) => streams.includes(s.name) && s.maxPageSize !== undefined).map((s) => [s.name, 10]),
    );
    const rows: string[][] = [['workers', 'seconds', 'records', 'records/s', 'vs 1 worker']];
    let single: number | undefined;
    for (const n of SCALING) {
      const dir = mkdtempSync(join(tmpdir(), 'avalake-bench-scaling-'));
      const pipelinePath = join(dir, 'pipeline.json');
      writeFileSync(pipelinePath, JSON.stringify({ ...pipeline, pageSize: pageSizes }));
      const catalog = await freshDatabase(postgres);
      const started = performance.now();
      await Promise.all(
        Array.from({ length: n }, () => extractProcess(pipelinePath, join(dir, 'data'), catalog)),
      );
      const seconds = (performance.now() - started) / 1000;
      const { readLakeState } = await import('../src/load/lake.ts');
      const records = [...(await readLakeState(join(dir, 'data'), catalog)).values()].reduce(
        (sum, s) => sum + [...s.partitions.values()].reduce((m, p) => m + p.rows, 0),
        0,
      );
      const rate = records / seconds;
      single ??= rate;
      rows.push([String(n), seconds.toFixed(1), fmt(records), fmt(Math.round(rate)), ratio(rate, single)]);
      rmSync(dir, { recursive: true, force: true });
    }
    console.log(table(rows));
  } finally {
    await emulator.stop();
    await truth.close();
  }
}

async function main() {
  console.log(`avalake workers benchmark — ${new Date().toISOString()}, node ${process.version}`);
  const postgres = await startPostgres();
  try {
    const ok = await partOne(postgres.url);
    await partTwo(postgres.url);
    process.exitCode = ok ? 0 : 1;
  } finally {
    await postgres.stop();
  }
}

await main();
