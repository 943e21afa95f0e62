/**
 * Issue 3: "Against a per-minute compute-unit limit, a benchmark shows goodput ≥ 90% of the limit with
 * ≤ 5% of requests answered 429."
 *
 * Two in-process emulators, each with its own per-minute CU limit shortened to a few seconds, serve the
 * same world to two clients that run side by side over the same fixed-window span:
 *   - avalake: `runExtract` as shipped (the shared per-host rate budget reads the ratelimit-* headers);
 *   - naive: the same extract, same concurrency, but the budget is removed from every request, so it
 *     fires as fast as it can and only waits when a 429's retry-after tells it to.
 * Both are started on a window boundary, run WARMUP windows unmeasured (the emulator computes its world
 * lazily on the first requests, and the budget learns the allowance from its first answer), then are
 * aborted after WINDOWS more, so goodput = CUs answered 2xx within those windows / (limit × WINDOWS).
 * The whole run, warm-up included, is printed too.
 *
 * Every request goes to 127.0.0.1; the run stops by itself after WINDOWS × WINDOW_S seconds.
 * Usage: npx tsx bench/extract-rate.ts [--window 5] [--windows 12] [--limit 2000] [--concurrency 4]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { demoPipelineOf } from '../src/emulator/demo-pipeline.ts';
import { createEmulator, type Emulator } from '../src/emulator/index.ts';
import type { RateBudget } from '../src/extract/budget.ts';
import { createFetcher, type Fetcher, type FetchRequest } from '../src/extract/fetcher.ts';
import { createHttpClient } from '../src/extract/http.ts';
import { PipelineSchema } from '../src/extract/pipeline.ts';
import { type RunSummary, runExtract } from '../src/extract/run.ts';
import { STREAMS } from '../src/extract/streams/index.ts';
import { type Attempt, recordingHttp } from './lib/recording-http.ts';
import { fmt, median, table } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    window: { type: 'string', default: '5' },
    windows: { type: 'string', default: '12' },
    limit: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '2' },
    'page-size': { type: 'string', default: '2' },
    scale: { type: 'string', default: 'small' },
  },
});
const WINDOW_S = Number(values.window);
const WINDOWS = Number(values.windows);
/** Windows run before the measured span: the emulator computes its world lazily on first requests. */
const WARMUP = Number(values.warmup);
const LIMIT = Number(values.limit);
const CONCURRENCY = Number(values.concurrency);
const PAGE_SIZE = Number(values['page-size']);
const SCALE = values.scale as 'small' | 'medium' | 'large';
const CLOCK = 'fixed:1793577600';
/** 100-CU routes (utxos, listStaking, rewards) and 20-CU ones (delegators, listErc20, ICM messages). */
const BENCH_STREAMS = [
  'utxos',
  'staking_transactions',
  'rewards',
  'delegators',
  'erc20_transfers',
  'icm_messages',
];
const RATE_SPEC = `minute=${WINDOW_S},day=86400,perMinute=${LIMIT},perDay=1000000000`;

interface ClientResult {
  name: string;
  attempts: Attempt[];
  summary: RunSummary;
  budgetWaitMs?: number;
  emulator429: number;
  emulatorTotal: number;
}

const windowOf = (ms: number) => Math.floor(ms / 1000 / WINDOW_S);

async function runClient(
  name: string,
  emulator: Emulator,
  useBudget: boolean,
  startWindow: number,
): Promise<ClientResult> {
  const raw = demoPipelineOf(emulator.truth, 'fuji', emulator.url);
  const pipeline = PipelineSchema.parse({
    ...raw,
    streams: BENCH_STREAMS,
    concurrency: CONCURRENCY,
    pageSize: Object.fromEntries(BENCH_STREAMS.map((s) => [s, PAGE_SIZE])),
  });
  const streams = STREAMS.filter((s) => BENCH_STREAMS.includes(s.name));
  const dir = mkdtempSync(join(tmpdir(), `avalake-bench-rate-${name}-`));
  const { http, attempts } = recordingHttp(
    createHttpClient({ userAgent: 'avalake/bench', connectionsPerHost: CONCURRENCY }),
  );
  const inner = createFetcher({ http });
  let budget: RateBudget | undefined;
  const fetcher: Fetcher = (request: FetchRequest) => {
    if (request.budget) budget = request.budget;
    return inner(useBudget ? request : { ...request, budget: undefined });
  };
  const stop = new AbortController();
  const endMs = (startWindow + WARMUP + WINDOWS) * WINDOW_S * 1000;
  const timer = setTimeout(() => stop.abort(new Error('benchmark span over')), endMs - Date.now());
  try {
    const summary = await runExtract({
      pipeline,
      streams,
      dataDir: join(dir, 'data'),
      http,
      fetcher,
      signal: stop.signal,
    });
    return {
      name,
      attempts,
      summary,
      ...(budget ? { budgetWaitMs: budget.stats().waitedMs } : {}),
      emulator429: emulator.requests.byStatus.get(429) ?? 0,
      emulatorTotal: emulator.requests.total,
    };
  } finally {
    clearTimeout(timer);
    await http.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a client achieved over `count` windows from `first`. */
function analyse(result: ClientResult, first: number, count: number) {
  const inSpan = result.attempts.filter((a) => {
    const w = windowOf(a.sentAt);
    return w >= first && w < first + count;
  });
  const perWindow = new Array<number>(count).fill(0);
  for (const a of inSpan)
    if (a.status >= 200 && a.status < 300) {
      const i = windowOf(a.sentAt) - first;
      perWindow[i] = (perWindow[i] ?? 0) + a.cost;
    }
  const served = perWindow.reduce((x, y) => x + y, 0);
  const answered = inSpan.filter((a) => a.status !== 0);
  const limited = answered.filter((a) => a.status === 429).length;
  const lastDone = result.attempts.reduce((m, a) => Math.max(m, a.answeredAt), 0);
  const finishedEarly = result.summary.status !== 'interrupted';
  // A run that ran out of work before the span ended is judged over the windows it used.
  const windows = finishedEarly ? Math.max(1, Math.min(count, windowOf(lastDone) - first + 1)) : count;
  return {
    served,
    perWindow,
    windows,
    goodput: served / (LIMIT * windows),
    requests: answered.length,
    limited,
    share429: answered.length > 0 ? limited / answered.length : 0,
    failedConnections: inSpan.length - answered.length,
    finishedEarly,
  };
}

async function main() {
  console.log(
    `avalake extract rate benchmark — ${new Date().toISOString()}, node ${process.version}\n` +
      `limit ${LIMIT} CUs per ${WINDOW_S}-s "minute" window (--rate-limit "${RATE_SPEC}"), ` +
      `${WINDOWS} windows, concurrency ${CONCURRENCY}, page size ${PAGE_SIZE}, scale ${SCALE}\n` +
      `streams: ${BENCH_STREAMS.join(', ')}\n`,
  );
  const options = { scale: SCALE, clock: CLOCK, rateLimit: RATE_SPEC };
  const [budgeted, naive] = await Promise.all([createEmulator(options), createEmulator(options)]);
  try {
    // Start both on a fresh window boundary (the emulator's windows are aligned to the Unix epoch).
    const startWindow = windowOf(Date.now()) + 1;
    await new Promise((r) => setTimeout(r, startWindow * WINDOW_S * 1000 - Date.now() + 20));
    const [a, b] = await Promise.all([
      runClient('avalake', budgeted, true, startWindow),
      runClient('naive', naive, false, startWindow),
    ]);
    const ra = analyse(a, startWindow + WARMUP, WINDOWS);
    const rb = analyse(b, startWindow + WARMUP, WINDOWS);
    const wa = analyse(a, startWindow, WARMUP + WINDOWS);
    const wb = analyse(b, startWindow, WARMUP + WINDOWS);
    const rowsOf = (r: ClientResult) => r.summary.partitions.reduce((n, p) => n + p.rows, 0);
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    console.log(
      table([
        ['', 'avalake (budget)', 'naive (retry-after only)'],
        [`measured span (after ${WARMUP} warm-up windows)`, '', ''],
        ['CUs served (2xx)', fmt(ra.served), fmt(rb.served)],
        ['windows', String(ra.windows), String(rb.windows)],
        ['goodput / limit', ra.goodput.toFixed(3), rb.goodput.toFixed(3)],
        ['requests answered', String(ra.requests), String(rb.requests)],
        ['answered 429', String(ra.limited), String(rb.limited)],
        ['429 share', pct(ra.share429), pct(rb.share429)],
        ['connection failures', String(ra.failedConnections), String(rb.failedConnections)],
        ['median CUs per window', fmt(median(ra.perWindow)), fmt(median(rb.perWindow))],
        ['min CUs per window', fmt(Math.min(...ra.perWindow)), fmt(Math.min(...rb.perWindow))],
        [`whole run (${WARMUP + WINDOWS} windows, warm-up included)`, '', ''],
        ['goodput / limit', wa.goodput.toFixed(3), wb.goodput.toFixed(3)],
        ['429 share', pct(wa.share429), pct(wb.share429)],
        ['rows committed', fmt(rowsOf(a)), fmt(rowsOf(b))],
        ['budget sleep, summed over waiters (s)', fmt((a.budgetWaitMs ?? 0) / 1000), '—'],
        [
          'emulator: answers / 429s',
          `${a.emulatorTotal} / ${a.emulator429}`,
          `${b.emulatorTotal} / ${b.emulator429}`,
        ],
      ]),
    );
    console.log(`\nper-window CUs (warm-up first), avalake: ${wa.perWindow.join(' ')}`);
    console.log(`per-window CUs (warm-up first), naive:   ${wb.perWindow.join(' ')}`);
    for (const r of [ra, rb])
      if (r.finishedEarly)
        console.log(`note: a client ran out of work after ${r.windows} measured windows; judged over those`);
    console.log(
      `whole run incl. warm-up: goodput ${wa.goodput.toFixed(3)}, 429 share ${pct(wa.share429)}` +
        `   [naive: ${wb.goodput.toFixed(3)}, ${pct(wb.share429)}]`,
    );
    const okGoodput = ra.goodput >= 0.9;
    const ok429 = ra.share429 <= 0.05;
    console.log(
      `\ngoodput: ${ra.goodput.toFixed(3)} of limit (target ≥ 0.90) ${okGoodput ? 'PASS' : 'FAIL'}` +
        `   [naive: ${rb.goodput.toFixed(3)}]`,
    );
    console.log(
      `429 share: ${pct(ra.share429)} (target ≤ 5%) ${ok429 ? 'PASS' : 'FAIL'}   [naive: ${pct(rb.share429)}]`,
    );
    process.exitCode = okGoodput && ok429 ? 0 : 1;
  } finally {
    await Promise.all([budgeted.close(), naive.close()]);
  }
}

await main();
