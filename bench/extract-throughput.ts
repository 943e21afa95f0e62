/**
 * Issue 13: "Extract at ≥ 0.8× a bare client on the same requests (whole process, start-up included) …
 * `bench/extract-throughput.ts` prints the ratio against a bare client that follows the same walks in
 * order with the same concurrency (not a flat list of requests), and peak RSS at 200k, 2M and 10M records."
 *
 * Every measurement is a whole process, timed from spawn to exit, with its peak RSS (VmHWM, sampled):
 *   - pipeline: `avalake extract` as a user starts it (bin/avalake, the launcher npm links, which sets
 *     glibc's mmap threshold and runs the CLI as built by scripts/build.ts, which the bench runs first)
 *     into a fresh data directory, default flush settings;
 *   - bare: bench/lib/bare-client.ts compiled to plain JavaScript, which GETs the same pages over
 *     keep-alive connections, parses them with JSON.parse and throws them away (no avalake module).
 * Bare and pipeline alternate, so both see the same machine load.
 *
 * Three workloads, each against its own `avalake emulator` child (rate limit off, fixed clock):
 *   1. walks: the demo pipeline (pipelines/demo.json, its default streams, `start` pinned to a date) at
 *      scale small. One untimed in-process run records each partition's requests in order; the bare
 *      client replays them, as many walks at a time as the pipeline's concurrency, each walk in order.
 *   2. tick: a cron run that finds nothing new, the demo pipeline run again on the data directory its
 *      first run left; the bare client replays that run's requests the same way.
 *   3. whale: one long newest-first walk, the whale's ERC-20 transfers on chain 43114 at scale large,
 *      bounded by the pipeline's `start`: a date chosen so the walk reads about N records (the bare
 *      client finds it first, untimed). The bare client follows the listing to that date; the pipeline's
 *      walk stops there. Peak RSS at each N.
 *
 * Usage: npx tsx bench/extract-throughput.ts [--sizes 200000,2000000,10000000] [--skip walks|tick|whale]
 *        [--seed 1] [--clock fixed:1793577600]
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build as esbuild } from 'esbuild';
import { createClock } from '../src/emulator/clock.ts';
import { createWorld } from '../src/emulator/world/index.ts';
import { resolveExtractConfig } from '../src/extract/config.ts';
import { createHttpClient, type HttpClient } from '../src/extract/http.ts';
import { runExtract } from '../src/extract/run.ts';
import type { BareArgs, BareResult, RecordedRequest, WalkRecording } from './lib/bare-client.ts';
import { startChildEmulator } from './lib/child-emulator.ts';
import { LAUNCHER, launcherEnv } from './lib/launcher.ts';
import { MB, sampleProcMemory } from './lib/proc-memory.ts';
import { fmt, median, ratio, table } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '200000,2000000,10000000' },
    skip: { type: 'string', multiple: true, default: [] },
    seed: { type: 'string', default: '1' },
    clock: { type: 'string', default: 'fixed:1793577600' },
  },
});
const SIZES = (values.sizes ?? '').split(',').filter(Boolean).map(Number);
const SKIP = new Set(values.skip);
const SEED = Number(values.seed);
const WHALE_CLOCK = values.clock as string;
const WHALE_CHAIN = '43114';
const PAGE_SIZE = 100;
/** A measurement that runs longer than this is killed (the bench then fails loudly). */
const RUN_TIMEOUT_MS = 30 * 60_000;
/** How often a child's VmHWM is read: the kernel's own peak, so only its last moments can be missed. */
const SAMPLE_MS = 50;
const DAY_S = 86_400;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BARE_SOURCE = fileURLToPath(new URL('./lib/bare-client.ts', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'avalake-bench-throughput-'));
process.once('exit', () => rmSync(work, { recursive: true, force: true }));
/** The bare client as plain JavaScript, so it runs on node alone, as lean as it can start. */
const BARE = join(work, 'bare-client.mjs');
const ENV = launcherEnv();

interface Measured {
  mode: 'bare' | 'pipeline';
  seconds: number;
  hwm: number;
  records: number;
  requests: number;
}

/** Runs a child to its exit: wall seconds from spawn, peak RSS, and its last stdout line. */
function measure(command: string, args: string[]): Promise<{ seconds: number; hwm: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    const memory = sampleProcMemory(child.pid as number, SAMPLE_MS);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr = (stderr + c).slice(-4_000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    const onExit = () => child.kill('SIGKILL');
    process.once('exit', onExit);
    child.once('exit', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      const { hwm } = memory.stop();
      clearTimeout(timer);
      process.off('exit', onExit);
      if (code === 0) return resolve({ seconds, hwm, stdout });
      reject(new Error(`${args.join(' ')} exited ${code ?? signal}; stderr: ${stderr.trim() || '(empty)'}`));
    });
  });
}

async function bare(args: BareArgs): Promise<Measured & { result: BareResult }> {
  const run = await measure(process.execPath, [BARE, JSON.stringify(args)]);
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as BareResult;
  return { mode: 'bare', ...run, records: result.records, requests: result.requests, result };
}

/** `avalake extract` into a fresh data directory, or into a copy of `from` (copied before the clock starts). */
async function pipeline(pipelineFile: string, label: string, from?: string): Promise<Measured> {
  const dataDir = join(work, `data-${label}`);
  rmSync(dataDir, { recursive: true, force: true });
  if (from) cpSync(from, dataDir, { recursive: true });
  try {
    const run = await measure(LAUNCHER, ['extract', pipelineFile, '--data-dir', dataDir, '--json']);
    const summary = JSON.parse(run.stdout) as {
      status: string;
      partitions: { rows: number; requests: number; status: string; error?: string }[];
    };
    const failed = summary.partitions.find((p) => p.status === 'failed');
    if (summary.status !== 'ok' || failed)
      throw new Error(`the pipeline run ended ${summary.status}: ${failed?.error ?? 'see its summary'}`);
    const sum = (f: (p: (typeof summary.partitions)[number]) => number) =>
      summary.partitions.reduce((n, p) => n + f(p), 0);
    return { mode: 'pipeline', ...run, records: sum((p) => p.rows), requests: sum((p) => p.requests) };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const rate = (m: Measured) => m.records / m.seconds;
const mb = (bytes: number) => `${fmt(bytes / MB)} MB`;
const line = (m: Measured) =>
  `  ${m.mode.padEnd(8)} ${fmt(m.records)} records, ${fmt(m.requests)} requests in ${fmt(m.seconds)} s ` +
  `= ${fmt(rate(m))} rec/s, peak RSS ${mb(m.hwm)}`;

/** Bare, pipeline, pipeline, bare (or one of each): each printed as it ends. */
async function alternate(
  once: boolean,
  runBare: () => Promise<Measured>,
  runPipeline: () => Promise<Measured>,
): Promise<{ bare: Measured[]; pipe: Measured[] }> {
  const order = once ? ['bare', 'pipeline'] : ['bare', 'pipeline', 'pipeline', 'bare'];
  const out = { bare: [] as Measured[], pipe: [] as Measured[] };
  for (const mode of order) {
    const m = mode === 'bare' ? await runBare() : await runPipeline();
    console.log(line(m));
    (mode === 'bare' ? out.bare : out.pipe).push(m);
  }
  return out;
}

function row(label: string, { bare, pipe }: { bare: Measured[]; pipe: Measured[] }): string[] {
  const seconds = (ms: Measured[]) => median(ms.map((m) => m.seconds));
  return [
    label,
    fmt(median(pipe.map((m) => m.records))),
    fmt(seconds(bare)),
    fmt(seconds(pipe)),
    ratio(seconds(bare), seconds(pipe)),
    mb(Math.max(...bare.map((m) => m.hwm))),
    mb(Math.max(...pipe.map((m) => m.hwm))),
    String(bare.length + pipe.length),
  ];
}

const HEADER = [
  'workload',
  'records',
  'bare s',
  'pipeline s',
  'pipeline/bare',
  'bare peak RSS',
  'pipeline peak RSS',
  'runs',
];

/**
 * The demo pipeline against a fresh emulator at scale small, its clock pinned for the whole bench, and
 * so is `start` (the demo's "7d" as a date): a bench that runs over midnight UTC still sees the same
 * world and makes the same requests.
 */
async function demoPipeline() {
  const now = Math.floor(Date.now() / 1000 / 60) * 60;
  const emulator = await startChildEmulator({ scale: 'small', seed: SEED, clock: `fixed:${now}` });
  const demo = (await import('../pipelines/demo.json', { with: { type: 'json' } })).default;
  const start = new Date((Math.floor(now / DAY_S) - 7) * DAY_S * 1000).toISOString().slice(0, 10);
  const file = join(work, 'demo.json');
  const { $schema: _, ...rest } = demo as Record<string, unknown>;
  writeFileSync(
    file,
    JSON.stringify({
      ...rest,
      urls: { data: emulator.url, metrics: emulator.url, node: `${emulator.url}/fuji` },
      start,
    }),
  );
  return { emulator, file, start };
}

/** The demo pipeline's walks, recorded once in this process, then bare and pipeline side by side. */
async function walks(rows: string[][]) {
  const { emulator, file, start } = await demoPipeline();
  try {
    const recording = await record(file);
    console.log(
      `walks: the demo pipeline (scale small, start ${start}), ${recording.walks.length} partitions, ` +
        `${fmt(requestsIn(recording))} requests, concurrency ${recording.concurrency}`,
    );
    rows.push(row('demo walks', await replayBeside(recording, file, 'walks')));
  } finally {
    await emulator.stop();
  }
}

/**
 * A cron run that finds nothing new: the demo pipeline run again on the data directory its first run
 * left, the emulator's clock unmoved. Every partition asks for its newest page (the snapshots for all of
 * theirs), finds nothing past its checkpoint or an answer equal to the last, and records that it looked.
 * Bare replays that run's requests; each pipeline run starts from a copy of the first run's directory.
 */
async function tick(rows: string[][]) {
  const { emulator, file } = await demoPipeline();
  try {
    const first = join(work, 'data-tick-first');
    await record(file, { dataDir: first, keep: true });
    const again = join(work, 'data-tick-again');
    cpSync(first, again, { recursive: true });
    const recording = await record(file, { dataDir: again });
    console.log(
      `\ntick: the demo pipeline run again with nothing new, ${recording.walks.length} partitions, ` +
        `${fmt(requestsIn(recording))} requests, concurrency ${recording.concurrency}`,
    );
    rows.push(row('cron tick', await replayBeside(recording, file, 'tick', first)));
  } finally {
    await emulator.stop();
  }
}

const requestsIn = (recording: WalkRecording) => recording.walks.reduce((n, w) => n + w.requests.length, 0);

/**
 * The recording's requests that no partition counts as its own: a partition's first read looks its chain
 * up in the Data API's chain listing (src/extract/chain-network.ts), recorded under the `chains` stream's
 * `all` partition, whose snapshot asks for that very URL too. A walk never asks for one URL twice, so
 * each repeat there is a lookup. The bare client makes them too; the pipeline's summary counts them nowhere.
 */
const lookupsIn = (recording: WalkRecording) =>
  recording.walks
    .filter((w) => w.stream === 'chains')
    .reduce((n, w) => n + w.requests.length - new Set(w.requests.map((r) => r.url)).size, 0);

/**
 * Bare replaying `recording` and the pipeline of `pipelineFile` (into a copy of `from`, if given),
 * alternated; both must make the recording's requests.
 */
async function replayBeside(recording: WalkRecording, pipelineFile: string, label: string, from?: string) {
  const requests = requestsIn(recording);
  const recordingFile = join(work, `${label}.json`);
  writeFileSync(recordingFile, JSON.stringify(recording));
  const runs = await alternate(
    false,
    () => bare({ mode: 'walks', file: recordingFile }),
    () => pipeline(pipelineFile, label, from),
  );
  const lookups = lookupsIn(recording);
  for (const m of [...runs.bare, ...runs.pipe]) {
    const expected = m.mode === 'pipeline' ? requests - lookups : requests;
    if (m.requests !== expected)
      throw new Error(
        `a ${m.mode} run made ${m.requests} requests, the recording has ${expected}` +
          (m.mode === 'pipeline' && lookups > 0 ? ` besides ${lookups} chain lookups` : ''),
      );
  }
  return runs;
}

/**
 * An untimed in-process run of the pipeline that notes every request, grouped by partition in order,
 * into `dataDir` (a fresh one by default), which it deletes after unless told to keep it.
 */
async function record(
  pipelineFile: string,
  { dataDir = join(work, 'data-record'), keep = false } = {},
): Promise<WalkRecording> {
  const config = await resolveExtractConfig({ pipeline: pipelineFile, dataDir }, {});
  const inner = createHttpClient({ userAgent: 'avalake/bench' });
  const byWalk = new Map<string, WalkRecording['walks'][number]>();
  const http: HttpClient = {
    send(request) {
      // The fetcher hands over its FetchRequest, which says whose request it is.
      const at = (request as { at?: { stream: string; partition: string } }).at;
      const key = `${at?.stream}\n${at?.partition}`;
      let walk = byWalk.get(key);
      if (!walk) {
        walk = { stream: at?.stream ?? '?', partition: at?.partition ?? '?', requests: [] };
        byWalk.set(key, walk);
      }
      const recorded: RecordedRequest = { method: request.method ?? 'GET', url: request.url };
      if (request.body !== undefined) recorded.body = request.body;
      walk.requests.push(recorded);
      return inner.send(request);
    },
    close: () => inner.close(),
  };
  try {
    const summary = await runExtract({
      pipeline: config.pipeline,
      streams: config.streams,
      dataDir: config.dataDir,
      http,
    });
    if (summary.status !== 'ok') throw new Error(`the recording run ended ${summary.status}`);
    if (summary.partitions.some((p) => p.retries > 0))
      throw new Error('the recording run retried requests: the emulator is not answering cleanly');
  } finally {
    await http.close();
    if (!keep) rmSync(config.dataDir, { recursive: true, force: true });
  }
  return { concurrency: config.pipeline.concurrency, walks: [...byWalk.values()] };
}

/** The whale's ERC-20 walk bounded to about N records, bare and pipeline, for each N. */
async function whale(rows: string[][]) {
  const world = createWorld({ seed: SEED, scale: 'large', clock: createClock(WHALE_CLOCK) });
  const address = world.evm.whale('mainnet');
  const emulator = await startChildEmulator({ scale: 'large', seed: SEED, clock: WHALE_CLOCK });
  try {
    const first = `${emulator.url}/v1/chains/${WHALE_CHAIN}/addresses/${address}/transactions:listErc20?pageSize=${PAGE_SIZE}`;
    const follow = { mode: 'follow', url: first, list: 'transactions', timeField: 'blockTimestamp' } as const;
    console.log(
      `\nwhale: erc20_transfers of ${address} on chain ${WHALE_CHAIN} (scale large, clock ${WHALE_CLOCK})`,
    );
    // Warms the emulator (JIT, memoized days) so the first measured client is not charged for it.
    await bare({ ...follow, records: 20_000 });
    for (const [i, n] of SIZES.entries()) {
      // The walk stops at the pipeline's `start`, a UTC date: the midnight before the N-th record.
      const probe = await bare({ ...follow, records: n });
      if (probe.records < n) console.log(`  note: the listing has only ${fmt(probe.records)} records`);
      const until = Math.floor((probe.result.lastTime ?? 0) / DAY_S) * DAY_S;
      const start = new Date(until * 1000).toISOString().slice(0, 10);
      const file = join(work, `whale-${n}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          name: 'whale',
          network: 'mainnet',
          urls: { data: emulator.url, metrics: emulator.url, node: emulator.url },
          evm: { chains: [WHALE_CHAIN], addresses: [address] },
          streams: ['erc20_transfers'],
          pageSize: { erc20_transfers: PAGE_SIZE },
          start,
        }),
      );
      console.log(`  about ${fmt(n)} records: start ${start}`);
      const largest = i === SIZES.length - 1 && SIZES.length > 1;
      const runs = await alternate(
        n >= 1_000_000 || largest,
        () => bare({ ...follow, until }),
        () => pipeline(file, `whale-${n}`),
      );
      const counts = new Set([...runs.bare, ...runs.pipe].map((m) => m.records));
      if (counts.size > 1)
        throw new Error(`bare and pipeline read different records: ${[...counts].join(', ')}`);
      rows.push(row(`whale ${fmt(n)}`, runs));
    }
  } finally {
    await emulator.stop();
  }
}

/**
 * Both sides as they run best: avalake as its built CLI (dist/cli, built here from the working tree, so
 * the pipeline measured is this one), the bare client compiled to plain JavaScript.
 */
async function prepare() {
  const built = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'build.ts')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`the build failed: ${built.stderr}`);
  await esbuild({
    entryPoints: [BARE_SOURCE],
    outfile: BARE,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // undici bundled in: one file, nothing to resolve at its start. Its CommonJS needs `require`.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
}

async function main() {
  await prepare();
  console.log(
    `avalake extract throughput benchmark — ${new Date().toISOString()}, node ${process.version}\n` +
      'each measurement is a whole process (spawn to exit); peak RSS is its VmHWM, read every ' +
      `${SAMPLE_MS} ms; ratio = bare seconds / pipeline seconds (the pipeline's speed relative to bare)\n`,
  );
  const rows: string[][] = [HEADER];
  if (!SKIP.has('walks')) await walks(rows);
  if (!SKIP.has('tick')) await tick(rows);
  if (!SKIP.has('whale')) await whale(rows);
  console.log(`\n${table(rows)}`);
}

await main();
