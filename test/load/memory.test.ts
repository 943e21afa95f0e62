import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wasmMemory } from 'parquet-wasm';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { BATCH_ROWS } from '../../src/load/arrow.ts';
import { openLake } from '../../src/load/lake.ts';
import { lake } from '../../src/schemas/lake.ts';
import { query } from './duck.ts';

const ROWS = 2_000_000;
const PAGE_ROWS = 10_000;
const MiB = 1024 * 1024;

const schema = z.object({
  height: lake.int64(),
  timestamp: lake.timestamp(),
  amount: lake.amount(),
  nodeId: z.string(),
  ok: z.boolean(),
});

function* page(start: number) {
  for (let i = start; i < start + PAGE_ROWS; i++) {
    yield {
      height: i,
      timestamp: 1_600_000_000 + i,
      amount: `${i}000000000`,
      nodeId: `NodeID-${i % 1000}`,
      ok: i % 2 === 0,
    };
  }
}

let dataDir: string | undefined;
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

it(`writes ${ROWS} rows in one flush with bounded memory`, async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-memory-'));
  const l = await openLake({ dataDir });
  let peakRss = process.memoryUsage().rss;
  const startRss = peakRss;
  const sample = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);
  try {
    const flush = l.begin({ stream: 'blocks', partition: { network: 'mainnet' }, schema });
    for (let start = 0; start < ROWS; start += PAGE_ROWS) await flush.append(page(start));
    const record = await flush.commit({ height: ROWS });
    expect(record.files).toHaveLength(Math.ceil(ROWS / BATCH_ROWS));
    expect(record.files.reduce((n, f) => n + f.rows, 0)).toBe(ROWS);
  } finally {
    clearInterval(sample);
    await l.close();
  }
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  console.log(
    `${ROWS} rows: RSS ${Math.round(startRss / MiB)} MiB at start, peak ${Math.round(peakRss / MiB)} MiB ` +
      `(maxRSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB); parquet-wasm memory ` +
      `${Math.round(wasmMemory().buffer.byteLength / MiB)} MiB`,
  );

  const [stats] = await query(
    `select count(*)::integer as n, count(distinct height)::integer as d, sum(amount)::varchar as total
     from read_parquet('${dataDir}/lake/blocks/**/*.parquet', hive_partitioning = true)`,
  );
  const total = ((BigInt(ROWS) * BigInt(ROWS - 1)) / 2n) * 1_000_000_000n;
  expect(stats).toEqual({ n: ROWS, d: ROWS, total: total.toString() });
});
