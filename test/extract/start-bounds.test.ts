import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { postingKey } from '../../src/emulator/world/primary/index.ts';
import { resolveExtractConfig } from '../../src/extract/config.ts';
import { type Pipeline, PipelineSchema } from '../../src/extract/pipeline.ts';
import type { RunSummary } from '../../src/extract/run.ts';
import { pathOf, type StreamDefinition } from '../../src/extract/stream.ts';
import { STREAMS } from '../../src/extract/streams/index.ts';
import { fetchJson, startEmulator, TEST_EPOCH } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { queryLake, streamTable } from '../helpers/lake.ts';

/**
 * Every stream whose records have a time honours the pipeline's `start` on its first run: it reads its
 * listing down to `start` and no further (issue 11). The truth is a bare walk of the same listing,
 * without time bounds, read down to the first record older than `start` (for the ascending cursor
 * listings: every record at or after it); the lake must hold exactly that, nothing older, after a
 * bounded number of requests. `end` bounds a backfill window the same way.
 */

const DAY = 86_400;
const date = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 10);
const START = TEST_EPOCH - 3 * DAY;
/** Query parameters that bound a listing by time or block: the bare walk sends none. */
const BOUNDS = ['startTimestamp', 'endTimestamp', 'startBlock', 'endBlock'];

interface Case {
  stream: string;
  /** SQL over the stream's table: a record's time, in Unix seconds. */
  time: string;
  /** Fewer partitions, where the demo pipeline's would make the test slow. */
  edit?(pipeline: Record<string, unknown>): void;
}

const oneChain = (chain: string) => (p: Record<string, unknown>) => {
  (p.evm as { chains: string[] }).chains = [chain];
};

const CASES: Case[] = [
  // A validator's fee is paid at the end of the validator's period, which its row does not carry.
  { stream: 'rewards', time: "case when rewardType = 'VALIDATOR_FEE' then null else endTimestamp end" },
  { stream: 'delegators', time: 'startTimestamp' },
  { stream: 'staking_transactions', time: 'blockTimestamp' },
  { stream: 'p_chain_transactions', time: 'blockTimestamp' },
  { stream: 'x_chain_transactions', time: 'timestamp' },
  { stream: 'c_chain_transactions', time: 'timestamp' },
  { stream: 'p_chain_latest_transactions', time: 'blockTimestamp' },
  { stream: 'x_chain_latest_transactions', time: 'timestamp' },
  { stream: 'c_chain_latest_transactions', time: 'timestamp' },
  { stream: 'utxos', time: 'coalesce(blockTimestamp, timestamp)' },
  { stream: 'node_blocks', time: 'blockTimestamp' },
  { stream: 'x_chain_vertices', time: 'vertexTimestamp' },
  { stream: 'erc20_transfers', time: 'blockTimestamp' },
  { stream: 'native_transactions', time: 'blockTimestamp' },
  { stream: 'evm_transactions', time: 'blockTimestamp', edit: oneChain('770012') },
  { stream: 'evm_blocks', time: 'blockTimestamp', edit: oneChain('770012') },
  { stream: 'icm_messages', time: 'sourceTransaction.timestamp' },
  {
    stream: 'metrics',
    time: 'timestamp',
    edit: (p) => {
      p.metrics = {
        chains: ['43113', 'testnet'],
        metrics: ['txCount', 'activeAddresses'],
        intervals: ['day'],
      };
    },
  },
  { stream: 'avg_tps', time: 'timestamp' },
];

const streamNamed = (name: string): StreamDefinition => {
  const stream = STREAMS.find((s) => s.name === name);
  if (!stream) throw new Error(`no stream ${name}`);
  return stream;
};

/** A record's time as the stream reads it (its cursor, or its time for newest-first listings). */
const timeOf = (stream: StreamDefinition, record: unknown): number | undefined => {
  const r = record as never;
  if (stream.strategy === 'cursor') return stream.cursorOf(r);
  if (stream.strategy === 'newest-first') return stream.timeOf?.(r);
  throw new Error(`${stream.name} is not a listing`);
};

/**
 * The records of one partition's listing in the window: a bare walk with the stream's largest page and
 * no time bounds; a newest-first listing is read down to its first record older than `start`.
 */
async function truthOf(
  emulator: Emulator,
  stream: StreamDefinition,
  pipeline: Pipeline,
  partition: Record<string, string>,
  window: { start: number; end?: number },
): Promise<number> {
  if (stream.strategy !== 'cursor' && stream.strategy !== 'newest-first') throw new Error('not a listing');
  const request = stream.request(pipeline, partition, undefined);
  const url = new URL(`${emulator.url}${pathOf(request)}`);
  for (const [k, v] of Object.entries(request.query))
    if (v !== undefined && !BOUNDS.includes(k)) url.searchParams.set(k, String(v));
  if (stream.maxPageSize) url.searchParams.set('pageSize', String(stream.maxPageSize));
  let n = 0;
  for (;;) {
    const res = await fetchJson<Record<string, unknown>>(url.toString());
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(res.body)}`);
    for (const record of stream.records(res.body)) {
      const t = timeOf(stream, record);
      if (t !== undefined && t < window.start) {
        if (stream.strategy === 'newest-first') return n;
        continue;
      }
      if (window.end === undefined || t === undefined || t < window.end) n++;
    }
    const token = res.body.nextPageToken;
    if (typeof token !== 'string' || token === '') return n;
    url.searchParams.set('pageToken', token);
  }
}

/** Rows of the stream's table, and how many are older than `start` (none read: zero). */
async function lakeOf(dataDir: string, stream: string, time: string, start: number) {
  try {
    const [row] = await queryLake(
      `select count(*)::int as n, count(*) filter (where epoch(${time}) < ${start})::int as older from ${streamTable(dataDir, stream)}`,
    );
    return { rows: row?.n as number, older: row?.older as number };
  } catch (error) {
    if (/No files found/.test(String(error))) return { rows: 0, older: 0 };
    throw error;
  }
}

const pageOf = (stream: StreamDefinition) => stream.maxPageSize ?? 100;

/** Each partition made at most ceil(rows / page) + 1 requests: one page of slack. */
function expectBoundedRequests(summary: RunSummary, stream: StreamDefinition) {
  for (const p of summary.partitions) {
    expect({ partition: p.partition, requests: p.requests }).toEqual({
      partition: p.partition,
      requests: expect.toBeOneOf([...Array(Math.ceil(p.rows / pageOf(stream)) + 2).keys()].slice(1)),
    });
  }
}

function workspaceOf(emulator: Emulator, c: Case, bounds: { start: string; end?: string }) {
  const workspace = demoWorkspace(emulator, (p) => {
    p.streams = [c.stream];
    p.start = bounds.start;
    if (bounds.end) p.end = bounds.end;
    c.edit?.(p);
  });
  const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
  return { ...workspace, pipeline };
}

describe('start bounds the first run of every stream whose records have a time', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(() => emulator.close());

  it('covers every listing whose records have a time', () => {
    const timed = STREAMS.filter(
      (s) =>
        s.strategy === 'cursor' ||
        (s.strategy === 'newest-first' && s.timeOf !== undefined) ||
        (s.strategy === 'height-walk' && s.timeOf !== undefined),
    ).map((s) => s.name);
    const listings = STREAMS.filter((s) => s.strategy === 'cursor' || s.strategy === 'newest-first');
    // Every listing has a time; the height walks are tested below.
    expect(listings.filter((s) => !timed.includes(s.name)).map((s) => s.name)).toEqual([]);
    expect([...CASES.map((c) => c.stream), 'p_chain_blocks', 'p_chain_block_transactions'].sort()).toEqual(
      timed.sort(),
    );
  });

  it.each(CASES)('$stream: nothing older than start, a bounded number of requests', async (c) => {
    const stream = streamNamed(c.stream);
    const { pipeline, pipelinePath, dataDir } = workspaceOf(emulator, c, { start: date(START) });
    const summary = await extractOnce(pipelinePath, dataDir);
    expect(summary.status).toBe('ok');
    let expected = 0;
    for (const p of stream.partitions(pipeline))
      expected += await truthOf(emulator, stream, pipeline, p, { start: START });
    expect(expected).toBeGreaterThan(0);
    const lake = await lakeOf(dataDir, c.stream, c.time, START);
    expect(lake).toEqual({ rows: expected, older: 0 });
    expectBoundedRequests(summary, stream);
  });

  it('rewards: every reward paid since start, a validator fee included when its delegation ended before', async () => {
    const c = CASES.find((x) => x.stream === 'rewards') as Case;
    const stream = streamNamed(c.stream);
    const primary = emulator.truth.primary('fuji');
    const now = emulator.clock.now();
    const { pipeline: demo } = workspaceOf(emulator, c, { start: date(START) });
    // Each subject's rewards in the world, with when they were paid (their UTXO created).
    const rewardsOf = (subject: string) =>
      primary
        .postings(
          subject.startsWith('NodeID-')
            ? postingKey.reward('*', subject)
            : postingKey.reward(subject.replace(/^P-/, ''), '*'),
          now,
        )
        .map((i) => primary.reward(i))
        .filter((r) => r.utxo.createdAt <= now);
    // `start`: the UTC midnight before the newest fee paid on a later day than its delegation ended.
    const late = stream
      .partitions(demo)
      .flatMap((p) => rewardsOf(p.subject as string))
      .map((r) => ({ r, midnight: Math.floor(r.utxo.createdAt / DAY) * DAY }))
      .filter(({ r, midnight }) => r.stake.end < midnight)
      .sort((a, b) => b.midnight - a.midnight)[0];
    expect(late, 'the world has a fee paid on a later day than its delegation ended').toBeDefined();
    const start = late?.midnight as number;
    const { pipeline, pipelinePath, dataDir } = workspaceOf(emulator, c, { start: date(start) });
    expect((await extractOnce(pipelinePath, dataDir)).status).toBe('ok');
    let paidSinceStart = 0;
    for (const partition of stream.partitions(pipeline)) {
      const subject = partition.subject as string;
      const rows = await queryLake(
        `select utxoId from ${streamTable(dataDir, c.stream)} where subject = '${subject}'`,
      );
      const inLake = new Set(rows.map((r) => r.utxoId as string));
      for (const r of rewardsOf(subject).filter((x) => x.utxo.createdAt >= start)) {
        paidSinceStart++;
        expect(inLake.has(r.utxo.id), `${subject}: ${r.utxo.id} paid ${r.utxo.createdAt}`).toBe(true);
      }
    }
    expect(paidSinceStart).toBeGreaterThan(0);
  });

  it('--full-refresh reads down to start again, no further', async () => {
    const c = CASES.find((x) => x.stream === 'erc20_transfers') as Case;
    const stream = streamNamed(c.stream);
    const { pipeline, pipelinePath, dataDir } = workspaceOf(emulator, c, { start: date(START) });
    await extractOnce(pipelinePath, dataDir);
    emulator.advance(3600);
    const again = await extractOnce(pipelinePath, dataDir, { fullRefresh: true });
    let expected = 0;
    let requests = 0;
    for (const p of stream.partitions(pipeline)) {
      const n = await truthOf(emulator, stream, pipeline, p, { start: START });
      expected += n;
      requests += Math.ceil(n / pageOf(stream)) + 1;
    }
    // Whether a full refresh appends the records it already held again is the lake's business (staging
    // keeps one per key); what it reads is the window, no further.
    const [row] = await queryLake(
      `select count(distinct (chain, address, txHash, logIndex))::int as n, count(*) filter (where epoch(${c.time}) < ${START})::int as older from ${streamTable(dataDir, c.stream)}`,
    );
    expect(row).toEqual({ n: expected, older: 0 });
    expect(again.partitions.reduce((n, p) => n + p.requests, 0)).toBeLessThanOrEqual(requests);
  });
});

describe('a rolling start never cuts a partition off from what it read before', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(() => emulator.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  // The machine is off for five days with "start": "2d": when it is back, the window begins after
  // everything the last run read. The walk still goes down to its head, so nothing listed meanwhile
  // is skipped (it used to stop at the window: a hole no later run filled, and the runs said ok).
  it.each(['erc20_transfers', 'native_transactions'])(
    '%s: a gap longer than the window leaves no hole',
    async (name) => {
      const c = CASES.find((x) => x.stream === name) as Case;
      const stream = streamNamed(name);
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(emulator.clock.now() * 1000);
      const { pipeline, pipelinePath, dataDir } = workspaceOf(emulator, c, { start: '2d' });
      const firstStart = Math.floor(emulator.clock.now() / DAY - 2) * DAY;
      expect((await extractOnce(pipelinePath, dataDir)).status).toBe('ok');
      emulator.advance(5 * DAY);
      vi.setSystemTime(emulator.clock.now() * 1000);
      expect((await extractOnce(pipelinePath, dataDir)).status).toBe('ok');
      let expected = 0;
      for (const p of stream.partitions(pipeline))
        expected += await truthOf(emulator, stream, pipeline, p, { start: firstStart });
      const lake = await lakeOf(dataDir, c.stream, c.time, firstStart);
      expect(lake).toEqual({ rows: expected, older: 0 });
    },
  );
});

/** The P-Chain blocks of the emulator's Fuji world at its current time, and the bisection's budget. */
const blocksOf = (emulator: Emulator) =>
  emulator.truth.primary('fuji').blocks(Math.floor(emulator.clock.now()));
const bisection = (heights: number) => Math.ceil(Math.log2(heights + 1)) + 1;

const HEIGHT_WALKS = [
  { stream: 'p_chain_blocks', time: 'time', rows: (b: { txs: unknown[] }[]) => b.length },
  {
    stream: 'p_chain_block_transactions',
    time: 'blockTime',
    rows: (b: { txs: unknown[] }[]) => b.reduce((n, x) => n + x.txs.length, 0),
  },
];

describe('height walks start at the first height at or after start', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(() => emulator.close());

  it.each(HEIGHT_WALKS)('$stream: found by bisection, then one request per height', async (c) => {
    const { pipelinePath, dataDir } = workspaceOf(emulator, c, { start: date(START) });
    const summary = await extractOnce(pipelinePath, dataDir);
    expect(summary.status).toBe('ok');
    const all = blocksOf(emulator);
    const inWindow = all.filter((b) => b.time >= START);
    expect(inWindow.length).toBeGreaterThan(10);
    expect(inWindow.length).toBeLessThan(all.length);
    expect(await lakeOf(dataDir, c.stream, c.time, START)).toEqual({ rows: c.rows(inWindow), older: 0 });
    // The tip, the bisection, then each height of the window.
    expect(summary.partitions[0]?.requests).toBeLessThanOrEqual(1 + bisection(all.length) + inWindow.length);

    // The next run goes on from the committed height: no bisection.
    emulator.advance(6 * 3600);
    const next = await extractOnce(pipelinePath, dataDir);
    const added = blocksOf(emulator).length - all.length;
    expect(added).toBeGreaterThan(0);
    expect(next.partitions[0]?.requests).toBe(1 + added);
  });
});

describe('end bounds a backfill window', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(() => emulator.close());
  const window = { start: TEST_EPOCH - 4 * DAY, end: TEST_EPOCH - 2 * DAY };
  const bounds = { start: date(window.start), end: date(window.end) };

  // One stream per way a listing is bounded: ascending by cursor with endTimestamp, newest first with
  // endTimestamp, newest first with no time bound at all.
  it.each(
    ['p_chain_transactions', 'metrics', 'erc20_transfers'].map(
      (name) => CASES.find((c) => c.stream === name) as Case,
    ),
  )('$stream: only records in [start, end), and nothing new once the window is read', async (c) => {
    const stream = streamNamed(c.stream);
    const { pipeline, pipelinePath, dataDir } = workspaceOf(emulator, c, bounds);
    const first = await extractOnce(pipelinePath, dataDir);
    expect(first.status).toBe('ok');
    let expected = 0;
    for (const p of stream.partitions(pipeline))
      expected += await truthOf(emulator, stream, pipeline, p, window);
    expect(expected).toBeGreaterThan(0);
    const [row] = await queryLake(
      `select count(*)::int as n, count(*) filter (where epoch(${c.time}) < ${window.start} or epoch(${c.time}) >= ${window.end})::int as outside from ${streamTable(dataDir, c.stream)}`,
    );
    expect(row).toEqual({ n: expected, outside: 0 });
    emulator.advance(DAY);
    const second = await extractOnce(pipelinePath, dataDir);
    expect(second.partitions.reduce((n, p) => n + p.rows, 0)).toBe(0);
  });

  it('p_chain_blocks: the heights of [start, end), by two bisections', async () => {
    const c = HEIGHT_WALKS[0] as (typeof HEIGHT_WALKS)[0];
    const { pipelinePath, dataDir } = workspaceOf(emulator, c, bounds);
    const first = await extractOnce(pipelinePath, dataDir);
    const all = blocksOf(emulator);
    const inWindow = all.filter((b) => b.time >= window.start && b.time < window.end);
    const [row] = await queryLake(
      `select count(*)::int as n, min(height)::int as low, max(height)::int as high from ${streamTable(dataDir, c.stream)}`,
    );
    expect(row).toEqual({ n: inWindow.length, low: inWindow[0]?.height, high: inWindow.at(-1)?.height });
    expect(first.partitions[0]?.requests).toBeLessThanOrEqual(
      1 + 2 * bisection(all.length) + inWindow.length,
    );
    emulator.advance(DAY);
    const second = await extractOnce(pipelinePath, dataDir);
    expect(second.partitions[0]?.rows).toBe(0);
  });

  it.each([
    { start: '2026-02-01', end: '2026-01-01', says: /end: got "2026-01-01"; expected a date after start/ },
    { start: '2026-01-01', end: '2026-01-01', says: /end: got "2026-01-01"; expected a date after start/ },
    { start: '7d', end: '8d', says: /start "7d" \(\d{4}-\d\d-\d\d\) is not before end "8d"/ },
    {
      start: '2999-01-01',
      end: undefined,
      says: /start: got "2999-01-01"; expected a date not after today in UTC \(\d{4}-\d\d-\d\d UTC; start is a UTC date\): history from a later day has nothing to read yet/,
    },
    {
      start: '2026-01-01',
      end: 'yesterday',
      says: /end: got "yesterday"; expected a date such as "2026-01-31", or a number of days/,
    },
  ])('start $start, end $end is refused with a clear message', async ({ start, end, says }) => {
    const { pipelinePath, dataDir } = demoWorkspace(emulator, (p) => {
      p.start = start;
      if (end !== undefined) p.end = end;
    });
    await expect(resolveExtractConfig({ pipeline: pipelinePath, dataDir }, {})).rejects.toThrow(says);
  });
});
