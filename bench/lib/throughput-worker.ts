/**
 * One measurement of bench/extract-throughput.ts, in its own process so its peak memory (VmHWM) is its
 * own: either the avalake pipeline (`runExtract` into a fresh lake) or a bare client that GETs the same
 * pages, parses them and throws them away. Both stop after `records` records (a whole number of pages).
 * Prints one JSON line: { mode, records, pages, seconds, hwm, rss }.
 *
 * Usage (by the bench): node --import tsx bench/lib/throughput-worker.ts '<json WorkerArgs>'
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createHttpClient, type HttpClient } from '../../src/extract/http.ts';
import { PipelineSchema } from '../../src/extract/pipeline.ts';
import { runExtract } from '../../src/extract/run.ts';
import { STREAMS } from '../../src/extract/streams/index.ts';
import { readProcMemory } from './proc-memory.ts';

export interface WorkerArgs {
  mode: 'bare' | 'pipeline';
  url: string;
  chain: string;
  address: string;
  records: number;
  pageSize: number;
}

export interface WorkerResult {
  mode: WorkerArgs['mode'];
  records: number;
  pages: number;
  seconds: number;
  hwm: number;
  rss: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as WorkerArgs;
const origin = new URL(args.url);
if (origin.hostname !== '127.0.0.1') throw new Error(`benchmarks only talk to 127.0.0.1; got ${args.url}`);
const listPath = `/v1/chains/${args.chain}/addresses/${args.address}/transactions:listErc20`;
const maxPages = Math.ceil(args.records / args.pageSize);

async function bare(): Promise<Omit<WorkerResult, 'hwm' | 'rss' | 'mode'>> {
  const pool = new Pool(origin.origin, { connections: 1 });
  const started = performance.now();
  let records = 0;
  let pages = 0;
  let token: string | undefined;
  try {
    do {
      const query = new URLSearchParams({ pageSize: String(args.pageSize) });
      if (token) query.set('pageToken', token);
      const res = await pool.request({
        path: `${listPath}?${query}`,
        method: 'GET',
        headers: { 'user-agent': 'avalake/bench', accept: 'application/json' },
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`);
      const body = JSON.parse(text) as { transactions: unknown[]; nextPageToken?: string };
      records += body.transactions.length;
      pages++;
      token = body.nextPageToken;
    } while (token && pages < maxPages);
  } finally {
    await pool.close();
  }
  return { records, pages, seconds: (performance.now() - started) / 1000 };
}

async function pipeline(): Promise<Omit<WorkerResult, 'hwm' | 'rss' | 'mode'>> {
  const dir = mkdtempSync(join(tmpdir(), 'avalake-bench-throughput-'));
  const inner = createHttpClient({ userAgent: 'avalake/bench' });
  const stop = new AbortController();
  let pages = 0;
  // Stops the run once `maxPages` pages were handed over: the next request aborts it, and the run
  // commits everything up to the last page (the partition's normal interrupted path).
  const http: HttpClient = {
    async send(request) {
      if (pages >= maxPages) {
        stop.abort(new Error('benchmark record count reached'));
        throw stop.signal.reason;
      }
      const answer = await inner.send(request);
      if (answer.status === 200) pages++;
      return answer;
    },
    close: () => inner.close(),
  };
  const config = PipelineSchema.parse({
    network: 'mainnet',
    urls: { data: args.url, metrics: args.url, node: args.url },
    evm: { chains: [args.chain], addresses: [args.address] },
    streams: ['erc20_transfers'],
    pageSize: { erc20_transfers: args.pageSize },
  });
  const started = performance.now();
  try {
    const summary = await runExtract({
      pipeline: config,
      streams: STREAMS.filter((s) => s.name === 'erc20_transfers'),
      dataDir: join(dir, 'data'),
      http,
      signal: stop.signal,
    });
    const seconds = (performance.now() - started) / 1000;
    const failed = summary.partitions.find((p) => p.status === 'failed');
    if (failed) throw new Error(`the extract failed: ${failed.error}`);
    return { records: summary.partitions.reduce((n, p) => n + p.rows, 0), pages, seconds };
  } finally {
    await http.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const result = args.mode === 'bare' ? await bare() : await pipeline();
const memory = readProcMemory(process.pid);
const out: WorkerResult = { mode: args.mode, ...result, hwm: memory.hwm, rss: memory.rss };
process.stdout.write(`${JSON.stringify(out)}\n`);
