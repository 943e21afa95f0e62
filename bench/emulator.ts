/**
 * Issue 2, "Scale: generation is lazy": at the largest scale a walk through ten million records keeps
 * the emulator under 500 MB, and the first page arrives as fast as at the smallest scale.
 *
 * Each scale runs as its own `avalake emulator` child process (fixed clock, rate limit off), so its
 * memory (VmHWM from /proc) is apart from this client's. Small and large are measured alternately in
 * the same window, and the report is their ratio, which the shared machine's noise mostly cancels out of.
 *
 *   npm run bench:emulator                      # ~1–2 minutes
 *   npm run bench:emulator -- --seconds 20      # longer walks
 *   npm run bench:emulator -- --full            # also walk 10M whale transactions at large (~minutes)
 */
import { parseArgs } from 'node:util';
import { createClock } from '../src/emulator/clock.ts';
import { createWorld } from '../src/emulator/world/index.ts';
import type { Scale } from '../src/emulator/world/scale.ts';
import { type ChildEmulator, startChildEmulator } from './lib/child-emulator.ts';
import { createJsonClient, type JsonClient } from './lib/http-client.ts';
import { MB, readProcMemory, sampleProcMemory } from './lib/proc-memory.ts';
import { fmt, median, ratio, table } from './lib/stats.ts';

const MEMORY_LIMIT_BYTES = 500 * MB;
/** "As fast as": the large/small first-page ratio this bench accepts, given a noisy shared machine. */
const FIRST_PAGE_RATIO_LIMIT = 1.5;
const PAGE_SIZE = 100;
const SCALES = ['small', 'large'] as const satisfies readonly Scale[];
type BenchScale = (typeof SCALES)[number];

interface Options {
  seed: number;
  clock: string;
  /** Seconds of walking per listing and scale. */
  seconds: number;
  /** Upper bound on pages per listing and scale, whatever the time. */
  maxPages: number;
  /** The walk time is split into this many turns, alternating small and large. */
  rounds: number;
  /** Fresh emulator processes per scale for the cold first page. */
  cold: number;
  /** Repetitions of the warm first page per listing and scale. */
  warm: number;
  full: boolean;
  fullRecords: number;
}

/** Flags win over environment variables (BENCH_SECONDS, BENCH_FULL=1), which win over defaults. */
function resolveOptions(): Readonly<Options> {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      clock: { type: 'string' },
      seconds: { type: 'string' },
      'max-pages': { type: 'string' },
      rounds: { type: 'string' },
      cold: { type: 'string' },
      warm: { type: 'string' },
      full: { type: 'boolean' },
      'full-records': { type: 'string' },
    },
  });
  const num = (name: string, raw: string | undefined, fallback: number, min: number): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min)
      throw new Error(`--${name}: expected a number >= ${min}, got "${raw}"`);
    return n;
  };
  const clock = values.clock ?? 'fixed:1793577600';
  if (!/^fixed:\d+$/.test(clock))
    throw new Error(
      `--clock: expected fixed:<unix seconds> so this process and the emulator see one world, got "${clock}"`,
    );
  return Object.freeze({
    seed: num('seed', values.seed, 1, 0),
    clock,
    seconds: num('seconds', values.seconds ?? process.env.BENCH_SECONDS, 6, 0.1),
    maxPages: num('max-pages', values['max-pages'], 20_000, 1),
    rounds: num('rounds', values.rounds, 6, 1),
    cold: num('cold', values.cold, 3, 1),
    warm: num('warm', values.warm, 15, 1),
    full: values.full ?? process.env.BENCH_FULL === '1',
    fullRecords: num('full-records', values['full-records'], 10_000_000, 1),
  });
}

/** What this process knows of the world the child serves, from the same seed and clock. */
interface Truth {
  whale: string;
  pAddresses: string[];
}

function truthOf(scale: BenchScale, options: Options): Truth {
  const world = createWorld({ seed: options.seed, scale, clock: createClock(options.clock) });
  // The small world has 20 wallets on the P-Chain; large asks for the same number so only depth differs.
  return { whale: world.evm.whale('mainnet'), pAddresses: world.primary('mainnet').addresses().slice(0, 20) };
}

interface Listing {
  name: string;
  field: string;
  path(truth: Truth): string;
  /** Throws unless a page belongs to the address this process computed. */
  check(items: Record<string, unknown>[], truth: Truth): void;
}

const involvesWhale = (items: Record<string, unknown>[], truth: Truth, what: string) => {
  for (const item of items) {
    const from = (item.from as { address?: string } | undefined)?.address?.toLowerCase();
    const to = (item.to as { address?: string } | undefined)?.address?.toLowerCase();
    if (from !== truth.whale && to !== truth.whale)
      throw new Error(
        `${what}: record ${JSON.stringify(item).slice(0, 200)} does not involve the whale ${truth.whale} computed here; do the seed and clock match?`,
      );
  }
};

const LISTINGS: readonly Listing[] = [
  {
    name: 'C-Chain whale native txs',
    field: 'transactions',
    path: (t) => `/v1/chains/43114/addresses/${t.whale}/transactions:listNative?pageSize=${PAGE_SIZE}`,
    check: (items, t) => involvesWhale(items, t, 'listNative'),
  },
  {
    name: 'C-Chain whale ERC-20 transfers',
    field: 'transactions',
    path: (t) => `/v1/chains/43114/addresses/${t.whale}/transactions:listErc20?pageSize=${PAGE_SIZE}`,
    check: (items, t) => involvesWhale(items, t, 'listErc20'),
  },
  {
    name: 'P-Chain UTXOs of 20 wallets',
    field: 'utxos',
    path: (t) =>
      `/v1/networks/mainnet/blockchains/p-chain/utxos?addresses=${t.pAddresses.join(',')}&includeSpent=true&pageSize=${PAGE_SIZE}`,
    check(items, t) {
      const ours = new Set(t.pAddresses);
      for (const item of items)
        if (!(item.addresses as string[]).some((a) => ours.has(a)))
          throw new Error(`P-Chain utxo ${String(item.utxoId)} belongs to none of the 20 wallets asked for`);
    },
  },
];

async function firstPage(client: JsonClient, listing: Listing, truth: Truth) {
  const { body, ms } = await client.get(listing.path(truth));
  const items = (body[listing.field] as Record<string, unknown>[] | undefined) ?? [];
  if (items.length === 0) throw new Error(`${listing.name}: the first page is empty`);
  listing.check(items, truth);
  return ms;
}

/** Alternate which scale goes first, so neither always runs right after the other's garbage. */
const orderOf = (round: number): readonly BenchScale[] => (round % 2 === 0 ? SCALES : [...SCALES].reverse());

interface ColdResult {
  startupMs: Record<BenchScale, number[]>;
  firstPageMs: Map<string, Record<BenchScale, number[]>>;
}

async function measureCold(options: Options, truths: Record<BenchScale, Truth>): Promise<ColdResult> {
  const result: ColdResult = { startupMs: { small: [], large: [] }, firstPageMs: new Map() };
  for (const listing of LISTINGS) result.firstPageMs.set(listing.name, { small: [], large: [] });
  for (let rep = 0; rep < options.cold; rep++) {
    for (const scale of orderOf(rep)) {
      const child = await startChildEmulator({ scale, seed: options.seed, clock: options.clock });
      const client = createJsonClient(child.url);
      try {
        result.startupMs[scale].push(child.startupMs);
        // Each listing's first request to a fresh process: nothing of it is computed or compiled yet.
        for (const listing of LISTINGS)
          result.firstPageMs.get(listing.name)?.[scale].push(await firstPage(client, listing, truths[scale]));
      } finally {
        await client.close();
        await child.stop();
      }
    }
  }
  return result;
}

interface WalkState {
  token: string | undefined;
  pages: number;
  records: number;
  ms: number;
  laps: number;
}

/** Walks on from where the state stands for `seconds` or until `maxPages`; a finished listing restarts. */
async function walkFor(
  client: JsonClient,
  listing: Listing,
  truth: Truth,
  state: WalkState,
  seconds: number,
  maxPages: number,
) {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const base = listing.path(truth);
  while (performance.now() < deadline && state.pages < maxPages) {
    const path = state.token ? `${base}&pageToken=${state.token}` : base;
    const { body } = await client.get(path);
    state.pages++;
    state.records += ((body[listing.field] as unknown[] | undefined) ?? []).length;
    state.token = body.nextPageToken as string | undefined;
    if (state.token === undefined) state.laps++;
  }
  state.ms += performance.now() - started;
}

interface Running {
  child: ChildEmulator;
  client: JsonClient;
  sampler: ReturnType<typeof sampleProcMemory>;
}

async function measureWarm(options: Options, truths: Record<BenchScale, Truth>) {
  const running = {} as Record<BenchScale, Running>;
  for (const scale of SCALES) {
    const child = await startChildEmulator({ scale, seed: options.seed, clock: options.clock });
    running[scale] = { child, client: createJsonClient(child.url), sampler: sampleProcMemory(child.pid) };
  }
  try {
    const rssAt = () => ({
      small: readProcMemory(running.small.child.pid).rss,
      large: readProcMemory(running.large.child.pid).rss,
    });
    const rssAtListening = rssAt();
    const warmMs = new Map<string, Record<BenchScale, number[]>>();
    const walks = new Map<string, Record<BenchScale, WalkState>>();
    // RSS once each listing has been served, in turn: says which listing the emulator's memory went to.
    const rssAfter = new Map<string, Record<BenchScale, number>>();
    for (const listing of LISTINGS) {
      const times: Record<BenchScale, number[]> = { small: [], large: [] };
      warmMs.set(listing.name, times);
      for (const scale of SCALES) await firstPage(running[scale].client, listing, truths[scale]); // warm-up
      for (let rep = 0; rep < options.warm; rep++)
        for (const scale of orderOf(rep))
          times[scale].push(await firstPage(running[scale].client, listing, truths[scale]));

      const states = {} as Record<BenchScale, WalkState>;
      for (const scale of SCALES) states[scale] = { token: undefined, pages: 0, records: 0, ms: 0, laps: 0 };
      walks.set(listing.name, states);
      for (let round = 0; round < options.rounds; round++)
        for (const scale of orderOf(round))
          await walkFor(
            running[scale].client,
            listing,
            truths[scale],
            states[scale],
            options.seconds / options.rounds,
            options.maxPages,
          );
      rssAfter.set(listing.name, rssAt());
    }

    const memory = {} as Record<BenchScale, { peak: number; final: number }>;
    for (const scale of SCALES) {
      const { pid } = running[scale].child;
      const final = readProcMemory(pid).rss;
      memory[scale] = { peak: running[scale].sampler.stop().hwm, final };
    }
    return { warmMs, walks, rssAtListening, rssAfter, memory };
  } finally {
    for (const scale of SCALES) {
      running[scale].sampler.stop();
      await running[scale].client.close();
      await running[scale].child.stop();
    }
  }
}

/** The long walk: the whale's native transactions at large from the newest to `fullRecords` deep. */
async function measureFull(options: Options, truth: Truth) {
  const listing = LISTINGS[0] as Listing;
  const child = await startChildEmulator({ scale: 'large', seed: options.seed, clock: options.clock });
  const client = createJsonClient(child.url);
  const sampler = sampleProcMemory(child.pid, 250);
  const progress: string[][] = [['records', 'elapsed s', 'pages/s (last leg)', 'RSS MB', 'peak RSS MB']];
  const state: WalkState = { token: undefined, pages: 0, records: 0, ms: 0, laps: 0 };
  const PROGRESS_EVERY = 1_000_000;
  let nextReport = PROGRESS_EVERY;
  let legPages = 0;
  let legStarted = performance.now();
  try {
    const base = listing.path(truth);
    do {
      const started = performance.now();
      const { body } = await client.get(state.token ? `${base}&pageToken=${state.token}` : base);
      state.ms += performance.now() - started;
      state.pages++;
      legPages++;
      state.records += ((body[listing.field] as unknown[] | undefined) ?? []).length;
      state.token = body.nextPageToken as string | undefined;
      if (state.records >= nextReport || state.token === undefined) {
        const now = performance.now();
        const m = readProcMemory(child.pid);
        const row = [
          fmt(state.records),
          fmt(state.ms / 1000),
          fmt(legPages / ((now - legStarted) / 1000)),
          fmt(m.rss / MB),
          fmt(m.hwm / MB),
        ];
        progress.push(row);
        process.stderr.write(`  full walk: ${row.join(' | ')}\n`);
        nextReport += PROGRESS_EVERY;
        legPages = 0;
        legStarted = now;
      }
    } while (state.token !== undefined && state.records < options.fullRecords);
    const peak = sampler.peak().hwm;
    // The other listings' first pages on the same process: the P-Chain one builds that chain's ledger.
    for (const other of LISTINGS.slice(1)) await firstPage(client, other, truth);
    return {
      state,
      progress,
      peak,
      peakWithOthers: sampler.stop().hwm,
      reachedEnd: state.token === undefined,
    };
  } finally {
    sampler.stop();
    await client.close();
    await child.stop();
  }
}

async function main() {
  const options = resolveOptions();
  const started = performance.now();
  const log = (msg: string) =>
    process.stderr.write(`[${fmt((performance.now() - started) / 1000)} s] ${msg}\n`);
  const truths = { small: truthOf('small', options), large: truthOf('large', options) };

  log(`cold first pages: ${options.cold} fresh processes per scale`);
  const cold = await measureCold(options, truths);
  log(`warm first pages (${options.warm}×) and walks (${options.seconds} s per listing and scale)`);
  const warm = await measureWarm(options, truths);

  const out: string[] = [];
  out.push(
    `avalake emulator benchmark — seed ${options.seed}, clock ${options.clock}, page size ${PAGE_SIZE}, node ${process.version}`,
  );
  out.push(
    `whale: small ${truths.small.whale}, large ${truths.large.whale} (served pages checked against them)`,
  );
  out.push('');
  const rows: string[][] = [['', 'small', 'large', 'large/small']];
  const s = median(cold.startupMs.small);
  const l = median(cold.startupMs.large);
  rows.push([`start-up to listening, ms (median of ${options.cold})`, fmt(s), fmt(l), ratio(l, s)]);
  rows.push([
    'emulator RSS at listening, MB',
    fmt(warm.rssAtListening.small / MB),
    fmt(warm.rssAtListening.large / MB),
    '',
  ]);
  const verdicts: string[] = [];
  for (const listing of LISTINGS) {
    rows.push([listing.name, '', '', '']);
    const c = cold.firstPageMs.get(listing.name) as Record<BenchScale, number[]>;
    const w = warm.warmMs.get(listing.name) as Record<BenchScale, number[]>;
    const walk = warm.walks.get(listing.name) as Record<BenchScale, WalkState>;
    const cs = median(c.small);
    const cl = median(c.large);
    const ws = median(w.small);
    const wl = median(w.large);
    rows.push([`  first page cold, ms (median of ${options.cold})`, fmt(cs), fmt(cl), ratio(cl, cs)]);
    rows.push([`  first page warm, ms (median of ${options.warm})`, fmt(ws), fmt(wl), ratio(wl, ws)]);
    const pps = (x: WalkState) => x.pages / (x.ms / 1000);
    const rps = (x: WalkState) => x.records / (x.ms / 1000);
    rows.push([
      '  pages/s',
      fmt(pps(walk.small)),
      fmt(pps(walk.large)),
      ratio(pps(walk.large), pps(walk.small)),
    ]);
    rows.push([
      '  records/s',
      fmt(rps(walk.small)),
      fmt(rps(walk.large)),
      ratio(rps(walk.large), rps(walk.small)),
    ]);
    rows.push([
      '  walked: records (full laps)',
      `${fmt(walk.small.records)} (${walk.small.laps})`,
      `${fmt(walk.large.records)} (${walk.large.laps})`,
      '',
    ]);
    const rss = warm.rssAfter.get(listing.name) as Record<BenchScale, number>;
    rows.push(['  emulator RSS after this listing, MB', fmt(rss.small / MB), fmt(rss.large / MB), '']);
    const warmOk = wl / ws <= FIRST_PAGE_RATIO_LIMIT;
    verdicts.push(
      `${warmOk ? 'ok  ' : 'SLOW'} ${listing.name}: warm first page large/small ${ratio(wl, ws)} (limit ${FIRST_PAGE_RATIO_LIMIT}×), cold ${ratio(cl, cs)}`,
    );
  }
  rows.push(['emulator memory', '', '', '']);
  rows.push([
    '  peak RSS (VmHWM), MB',
    fmt(warm.memory.small.peak / MB),
    fmt(warm.memory.large.peak / MB),
    ratio(warm.memory.large.peak, warm.memory.small.peak),
  ]);
  rows.push([
    '  RSS at the end, MB',
    fmt(warm.memory.small.final / MB),
    fmt(warm.memory.large.final / MB),
    ratio(warm.memory.large.final, warm.memory.small.final),
  ]);
  out.push(table(rows));
  out.push('');
  const memOk = warm.memory.large.peak < MEMORY_LIMIT_BYTES;
  verdicts.push(
    `${memOk ? 'ok  ' : 'OVER'} peak RSS at large ${fmt(warm.memory.large.peak / MB)} MB < 500 MB over this run's walks`,
  );

  if (options.full) {
    log(`full walk: whale native transactions at large, up to ${fmt(options.fullRecords)} records`);
    const full = await measureFull(options, truths.large);
    out.push(
      `full walk at large: ${fmt(full.state.records)} whale native transactions, ${fmt(full.state.pages)} pages in ${fmt(full.state.ms / 1000)} s${full.reachedEnd ? ' (the whole listing)' : ''}`,
    );
    out.push(table(full.progress));
    out.push('');
    out.push(
      `then the first page of each other listing on the same process: peak RSS ${fmt(full.peakWithOthers / MB)} MB`,
    );
    out.push('');
    verdicts.push(
      `${full.peak < MEMORY_LIMIT_BYTES ? 'ok  ' : 'OVER'} peak RSS at large ${fmt(full.peak / MB)} MB < 500 MB across ${fmt(full.state.records)} records`,
      `${full.peakWithOthers < MEMORY_LIMIT_BYTES ? 'ok  ' : 'OVER'} peak RSS at large ${fmt(full.peakWithOthers / MB)} MB < 500 MB after that walk and the other listings' first pages`,
    );
  } else {
    verdicts.push('     (run with --full for the ten-million-record walk)');
  }
  out.push(...verdicts);
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
