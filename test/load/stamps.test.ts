import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type Lake, openLake } from '../../src/load/lake.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';
import { query } from './duck.ts';

/**
 * `_extracted_at` orders a record's versions. The clock that stamps it may step back (NTP correcting a
 * clock that ran ahead) or be another worker's, behind: the stamps of a stream never go back.
 */

const schema = z.object({ id: z.string(), status: z.string() });
const STREAM = 'delegations';
/** One delegation is listed under its node and under its reward address: two partitions. */
const byNode = { network: 'fuji', subject: 'NodeID-1' };
const byRewardAddress = { network: 'fuji', subject: 'P-fuji1abc' };

let dataDir: string;
const opened: Lake[] = [];
const openTest = async (catalog?: string) => {
  const lake = await openLake({ dataDir, ...(catalog ? { catalog } : {}) });
  opened.push(lake);
  return lake;
};

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-stamps-'));
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(async () => {
  vi.useRealTimers();
  for (const lake of opened.splice(0)) await lake.close().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
});

/** Each version of the record, oldest stamp first. */
const versions = async () =>
  (
    await query(
      `select status, epoch_ms(_extracted_at)::bigint::varchar as at
       from read_parquet('${dataDir}/lake/${STREAM}/**/*.parquet', hive_partitioning = true)
       order by _extracted_at, status`,
    )
  ).map((r) => [r.status, Number(r.at)]);

describe('row stamps', () => {
  it('follow the stream’s newest stamp after the clock stepped back, in another partition too', async () => {
    const now = Date.parse('2026-11-29T12:00:00Z');
    vi.setSystemTime(now + 6 * 3_600_000); // six hours ahead
    let lake = await openTest();
    let flush = lake.begin({ stream: STREAM, partition: byNode, schema });
    await flush.append([{ id: 'd1', status: 'pending' }]);
    await flush.commit({});
    await lake.close();

    vi.setSystemTime(now); // NTP steps the clock back; the reward address's partition reads it next
    lake = await openTest();
    flush = lake.begin({ stream: STREAM, partition: byRewardAddress, schema });
    await flush.append([{ id: 'd1', status: 'active' }]);
    await flush.commit({});
    expect(await versions()).toEqual([
      ['pending', now + 6 * 3_600_000],
      ['active', now + 6 * 3_600_000 + 1],
    ]);
  });

  it('follow the stream’s newest stamp when the clock steps back between two partitions of one run', async () => {
    const now = Date.parse('2026-11-29T12:00:00Z');
    vi.setSystemTime(now + 6 * 3_600_000);
    const lake = await openTest();
    const byNodeFlush = lake.begin({ stream: STREAM, partition: byNode, schema });
    await byNodeFlush.append([{ id: 'd1', status: 'pending' }]);
    await byNodeFlush.commit({});
    vi.setSystemTime(now);
    const byAddressFlush = lake.begin({ stream: STREAM, partition: byRewardAddress, schema });
    await byAddressFlush.append([{ id: 'd1', status: 'active' }]);
    await byAddressFlush.commit({});
    expect((await versions()).map(([status]) => status)).toEqual(['pending', 'active']);
  });

  it('of two appends in one flush differ while the clock is behind; in one millisecond of a right clock, they tie', async () => {
    const now = Date.parse('2026-11-29T12:00:00Z');
    vi.setSystemTime(now + 3_600_000);
    const lake = await openTest();
    const ahead = lake.begin({ stream: STREAM, partition: byNode, schema });
    await ahead.append([{ id: 'd0', status: 'pending' }]);
    await ahead.commit({});
    vi.setSystemTime(now); // behind the stamps: each call after the last
    const behind = lake.begin({ stream: STREAM, partition: byNode, schema });
    await behind.append([{ id: 'd1', status: 'pending' }]);
    await behind.append([{ id: 'd1', status: 'active' }]);
    await behind.commit({});
    vi.setSystemTime(now + 7_200_000); // past them: the clock's time, the same for two calls in one ms
    const right = lake.begin({ stream: STREAM, partition: byNode, schema });
    await right.append([{ id: 'd2', status: 'pending' }]);
    await right.append([{ id: 'd2', status: 'active' }]);
    await right.commit({});
    expect(await versions()).toEqual([
      ['pending', now + 3_600_000],
      ['pending', now + 3_600_001],
      ['active', now + 3_600_002],
      ['active', now + 7_200_000],
      ['pending', now + 7_200_000],
    ]);
  });
});

describe('row stamps of workers sharing a catalog', () => {
  let server: Awaited<ReturnType<typeof startPostgres>>;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(() => server?.stop());

  it('follow what another worker, its clock ahead, committed to another partition since this one opened', async () => {
    const catalog = await freshDatabase(server.url);
    const now = Date.parse('2026-11-29T12:00:00Z');
    vi.setSystemTime(now);
    const behind = await openTest(catalog); // opened first: it knows no stamp of the stream yet
    vi.setSystemTime(now + 6 * 3_600_000);
    const ahead = await openTest(catalog);
    expect(await ahead.claim(STREAM, byNode)).toBe('claimed');
    const pending = ahead.begin({ stream: STREAM, partition: byNode, schema });
    await pending.append([{ id: 'd1', status: 'pending' }]);
    await pending.commit({});
    await ahead.finish(STREAM, byNode, 'done');

    vi.setSystemTime(now + 60_000);
    expect(await behind.claim(STREAM, byRewardAddress)).toBe('claimed');
    const active = behind.begin({ stream: STREAM, partition: byRewardAddress, schema });
    await active.append([{ id: 'd1', status: 'active' }]);
    await active.commit({});
    expect(await versions()).toEqual([
      ['pending', now + 6 * 3_600_000],
      ['active', now + 6 * 3_600_000 + 1],
    ]);
  });
});
