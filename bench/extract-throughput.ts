/**
 * Issue 3: "A benchmark prints the pipeline's records/s beside a bare client that fetches and parses the
 * same pages and throws them away (the ratio), and peak memory at 200k and at 2M records."
 *
 * One `avalake emulator` child (scale large, rate limit off, fixed clock) serves the whale's ERC-20
 * transfers on the C-Chain (tens of millions of them, newest first). Each measurement is its own child
 * process (bench/lib/throughput-worker.ts), so its peak RSS (VmHWM) is its own:
 *   - bare: GET the listing's pages (pageSize 100) one after another, JSON.parse, discard;
 *   - pipeline: `runExtract` of the erc20_transfers stream for that one partition into a fresh lake
 *     (zod checks, Arrow batches, Parquet/zstd, commits at the default flush thresholds).
 * Both stop after N records; bare and pipeline alternate, so both see the same machine load.
 * Every request goes to 127.0.0.1; each measurement ends by itself after N records (or a time limit).
 *
 * Usage: npx tsx bench/extract-throughput.ts [--sizes 200000,2000000] [--budget-seconds 480]
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createClock } from '../src/emulator/clock.ts';
import { createWorld } from '../src/emulator/world/index.ts';
import { startChildEmulator } from './lib/child-emulator.ts';
import { MB } from './lib/proc-memory.ts';
import { fmt, median, ratio, table } from './lib/stats.ts';
import type { WorkerArgs, WorkerResult } from './lib/throughput-worker.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '200000,2000000' },
    /** Rough wall-clock allowance for the largest size; it shrinks (and says so) if it would not fit. */
    'budget-seconds': { type: 'string', default: '480' },
    seed: { type: 'string', default: '1' },
    clock: { type: 'string', default: 'fixed:1793577600' },
  },
});
const SIZES = (values.sizes ?? '').split(',').map(Number);
const BUDGET_S = Number(values['budget-seconds']);
const SEED = Number(values.seed);
const CLOCK = values.clock as string;
const PAGE_SIZE = 100;
const CHAIN = '43114';
/** A measurement that runs longer than this is killed (the bench then fails loudly). */
const WORKER_TIMEOUT_MS = 15 * 60_000;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORKER = fileURLToPath(new URL('./lib/throughput-worker.ts', import.meta.url));

function runWorker(args: WorkerArgs): Promise<WorkerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(args)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr = (stderr + c).slice(-4_000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), WORKER_TIMEOUT_MS);
    const onExit = () => child.kill('SIGKILL');
    process.once('exit', onExit);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', onExit);
      const line = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) return resolve(JSON.parse(line) as WorkerResult);
      reject(
        new Error(`${args.mode} worker exited ${code ?? signal}; stderr: ${stderr.trim() || '(empty)'}`),
      );
    });
  });
}

const rate = (r: WorkerResult) => r.records / r.seconds;
const mb = (bytes: number) => `${fmt(bytes / MB)} MB`;

async function main() {
  const world = createWorld({ seed: SEED, scale: 'large', clock: createClock(CLOCK) });
  const address = world.evm.whale('mainnet');
  console.log(
    `avalake extract throughput benchmark — ${new Date().toISOString()}, node ${process.version}\n` +
      `emulator: scale large, seed ${SEED}, clock ${CLOCK}, rate limit off (own process)\n` +
      `stream erc20_transfers, one partition: chain ${CHAIN}, whale ${address}, page size ${PAGE_SIZE}\n` +
      'each measurement in its own process; peak memory = its VmHWM\n',
  );
  const emulator = await startChildEmulator({ scale: 'large', seed: SEED, clock: CLOCK });
  try {
    const base = { url: emulator.url, chain: CHAIN, address, pageSize: PAGE_SIZE };
    // Warm the emulator (JIT, memoized days) so the first measured client is not charged for it.
    await runWorker({ ...base, mode: 'bare', records: 20_000 });

    const rows: string[][] = [
      [
        'records',
        'bare rec/s',
        'pipeline rec/s',
        'pipeline/bare',
        'bare peak RSS',
        'pipeline peak RSS',
        'runs',
      ],
    ];
    const notes: string[] = [];
    let lastPipelineRate: number | undefined;
    let lastBareRate: number | undefined;
    for (const [i, asked] of SIZES.entries()) {
      let records = asked;
      const isLargest = i === SIZES.length - 1 && i > 0;
      if (isLargest && lastPipelineRate && lastBareRate) {
        // One bare and one pipeline run of N records must fit the allowance.
        const predicted = records / lastPipelineRate + records / lastBareRate;
        if (predicted > BUDGET_S) {
          const fit = Math.floor(BUDGET_S / (1 / lastPipelineRate + 1 / lastBareRate) / 100_000) * 100_000;
          notes.push(
            `${fmt(asked)} records would take ~${fmt(predicted)} s at the rates measured; measured ${fmt(fit)} instead (--budget-seconds ${BUDGET_S})`,
          );
          records = fit;
        }
      }
      // Small sizes: bare, pipeline, pipeline, bare (medians); the largest: one of each.
      const order: WorkerArgs['mode'][] = isLargest
        ? ['bare', 'pipeline']
        : ['bare', 'pipeline', 'pipeline', 'bare'];
      const results: WorkerResult[] = [];
      for (const mode of order) {
        const r = await runWorker({ ...base, mode, records });
        console.log(
          `  ${mode.padEnd(8)} ${fmt(r.records)} records in ${fmt(r.seconds)} s = ${fmt(rate(r))} rec/s, peak RSS ${mb(r.hwm)}`,
        );
        results.push(r);
      }
      const bare = results.filter((r) => r.mode === 'bare');
      const pipe = results.filter((r) => r.mode === 'pipeline');
      const bareRate = median(bare.map(rate));
      const pipeRate = median(pipe.map(rate));
      lastBareRate = bareRate;
      lastPipelineRate = pipeRate;
      rows.push([
        fmt(median(pipe.map((r) => r.records))),
        fmt(bareRate),
        fmt(pipeRate),
        ratio(pipeRate, bareRate),
        mb(Math.max(...bare.map((r) => r.hwm))),
        mb(Math.max(...pipe.map((r) => r.hwm))),
        String(results.length),
      ]);
    }
    console.log(`\n${table(rows)}`);
    for (const note of notes) console.log(`note: ${note}`);
  } finally {
    await emulator.stop();
  }
}

await main();
