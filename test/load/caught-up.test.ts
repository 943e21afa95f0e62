import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { caughtUpAtOf, type Lake, openLake, readLakeState } from '../../src/load/index.ts';
import { freshDatabase, postgresAvailable, startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/**
 * When a partition was last caught up (a walk reached the source's head) is kept beside its checkpoint:
 * through folds and compaction, in a file log and a PostgreSQL catalog; and a lake of an older avalake,
 * whose commits never said, counts as caught up at its newest commit, as that avalake judged it.
 */

const schema = z.object({ id: z.string() });
const STREAM = 'rewards';
const partition = { network: 'fuji', subject: 'P-fuji1abc' };
const DAY = 86_400_000;
const T = Date.parse('2026-11-02T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

let dataDir: string;
const opened: Lake[] = [];
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-caught-up-'));
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(async () => {
  vi.useRealTimers();
  for (const lake of opened.splice(0)) await lake.close().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
});

/** One commit of a row at `at`, saying `caughtUp` (undefined: as an older avalake, which did not say). */
async function commitAt(at: number, id: string, caughtUp: boolean | undefined, catalog?: string) {
  vi.setSystemTime(at);
  const lake = await openLake({ dataDir, ...(catalog ? { catalog } : {}) });
  opened.push(lake);
  const flush = lake.begin({ stream: STREAM, partition, schema });
  await flush.append([{ id }]);
  await flush.commit({ next: id }, undefined, caughtUp);
  await lake.close();
  opened.splice(opened.indexOf(lake), 1);
}

const stateOf = async (catalog?: string) =>
  [...((await readLakeState(dataDir, catalog)).get(STREAM)?.partitions.values() ?? [])][0];

/** The same story in either commit log: a walk stopped early, one that reached the head, another stopped. */
async function story(catalog?: string) {
  await commitAt(T, 'a', false, catalog);
  expect((await stateOf(catalog))?.caughtUpAt).toBeNull();
  await commitAt(T + DAY, 'b', true, catalog);
  expect((await stateOf(catalog))?.caughtUpAt).toBe(iso(T + DAY));
  await commitAt(T + 2 * DAY, 'c', false, catalog);
  const state = await stateOf(catalog);
  expect(state?.committedAt).toBe(iso(T + 2 * DAY));
  expect(state?.caughtUpAt).toBe(iso(T + DAY));
  return state;
}

describe('caughtUpAt', () => {
  it('is kept by a file commit log through folds and compaction', async () => {
    await story();
    // Folded (compaction folds every stream) and read back from the state file alone.
    vi.setSystemTime(T + 3 * DAY);
    const lake = await openLake({ dataDir });
    opened.push(lake);
    await lake.compact('all');
    await lake.close();
    opened.splice(0);
    expect((await stateOf())?.caughtUpAt).toBe(iso(T + DAY));
  });

  it('an older avalake’s lake loads, and its partitions count as caught up at their newest commit until a commit says otherwise', async () => {
    await commitAt(T, 'a', undefined);
    const legacy = await stateOf();
    expect(legacy?.caughtUpAt).toBeUndefined();
    expect(legacy && caughtUpAtOf(legacy)).toBe(iso(T));
    // This avalake's first commit of it stops early: it was last caught up (as far as anyone knows) then.
    await commitAt(T + DAY, 'b', false);
    expect((await stateOf())?.caughtUpAt).toBe(iso(T));
    await commitAt(T + 2 * DAY, 'c', true);
    expect((await stateOf())?.caughtUpAt).toBe(iso(T + 2 * DAY));
  });
});

describe.skipIf(!postgresAvailable())('caughtUpAt in a PostgreSQL catalog', () => {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    vi.useRealTimers();
    server = await startPostgres();
  }, 60_000);
  afterAll(() => server?.stop());

  it('is kept by its commits and its folded states', async () => {
    const catalog = await freshDatabase((server as TestPostgres).url);
    await story(catalog);
  });
});
