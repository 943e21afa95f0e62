import { lstat, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compactLake } from '../../src/cli/compact.ts';
import { FOLD_RECORDS } from '../../src/load/commit.ts';
import { MERGE_FILES } from '../../src/load/compact.ts';
import { type Lake, openLake, readLakeState } from '../../src/load/lake.ts';
import { acquireLock, LockHeldError } from '../../src/load/lock.ts';
import { lake } from '../../src/schemas/lake.ts';
import { query } from './duck.ts';
import { PARTITIONS, STREAM } from './fixtures/crash-shape.ts';
import { startWriter } from './fixtures/writer-process.ts';

const schema = z.object({ id: lake.int64(), amount: lake.amount(), note: z.string() });
const writer = fileURLToPath(new URL('./fixtures/compact-writer.ts', import.meta.url));

let dataDir: string;
const open: Lake[] = [];
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-compact-'));
});
afterEach(async () => {
  for (const l of open.splice(0)) await l.close().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
});

async function openTest(): Promise<Lake> {
  const l = await openLake({ dataDir, runId: 'compact-test' });
  open.push(l);
  return l;
}

/** `count` commits of `rows` rows each, alternating the two partitions, ids counting up per partition. */
async function commitMany(l: Lake, count: number, rows = 5) {
  for (let i = 0; i < count; i++) {
    const partition = PARTITIONS[i % PARTITIONS.length] as (typeof PARTITIONS)[number];
    const next = (l.readCheckpoint(STREAM, partition)?.next as number | undefined) ?? 0;
    const flush = l.begin({ stream: STREAM, partition, schema });
    await flush.append(
      Array.from({ length: rows }, (_, j) => ({
        id: next + j,
        amount: String(next + j),
        note: partition.address,
      })),
    );
    await flush.commit({ next: next + rows });
  }
}

const glob = () => `read_parquet('${dataDir}/lake/${STREAM}/**/*.parquet', hive_partitioning = true)`;
const globFiles = async () =>
  (await query(`select file from glob('${dataDir}/lake/${STREAM}/**/*.parquet') order by file`)).map((r) =>
    String(r.file),
  );

/** Per partition: rows, distinct ids and the highest id, as a reader globbing the stream sees them. */
const perPartition = () =>
  query(
    `select note as address, count(*)::integer as n, count(distinct id)::integer as distinct_ids, max(id)::integer as hi
     from ${glob()} group by note order by note`,
  );

/** What the lake must hold: each partition's ids below its checkpoint, once each. */
async function expectedFrom(l: Lake) {
  return PARTITIONS.map((p) => {
    const next = l.readCheckpoint(STREAM, p)?.next as number;
    return { address: p.address, n: next, distinct_ids: next, hi: next - 1 };
  });
}

describe('compaction', () => {
  it('merges a folder of small files into one as a commit of its own: same rows, same checkpoints', async () => {
    const l = await openTest();
    await commitMany(l, 20);
    const checkpoints = PARTITIONS.map((p) => l.readCheckpoint(STREAM, p));
    const before = await query(`select id, amount, note, network, chain from ${glob()} order by note, id`);
    expect(await globFiles()).toHaveLength(20);

    const [result] = await l.compact('all');
    expect(result).toMatchObject({ stream: STREAM, merged: 20, written: 1 });
    const files = await globFiles();
    expect(files).toHaveLength(1);
    expect(await query(`select id, amount, note, network, chain from ${glob()} order by note, id`)).toEqual(
      before,
    );
    expect(PARTITIONS.map((p) => l.readCheckpoint(STREAM, p))).toEqual(checkpoints);
    // Readers glob through the stream's link; the generation it points to is the compaction's.
    const link = join(dataDir, 'lake', STREAM);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readlink(link)).toMatch(/^_generations\/crashy\/g\d{10}$/);
    expect(await readdir(join(dataDir, 'lake', '_generations', STREAM))).toHaveLength(1);

    // A new flush after the compaction lands beside the merged file; the next open agrees.
    await commitMany(l, 1);
    await l.close();
    open.splice(0);
    const again = await openTest();
    expect(await perPartition()).toEqual(await expectedFrom(again));
    expect((await readLakeState(dataDir)).get(STREAM)?.files.map((f) => f.path)).toHaveLength(2);
  });

  it('waits its turn with a build of the warehouse, which reads the files compaction deletes', async () => {
    const l = await openTest();
    await commitMany(l, 20);
    await l.close();
    open.splice(0);
    const files = await globFiles();
    const build = await acquireLock(join(dataDir, 'warehouse.duckdb.lock'), {
      command: 'a build in the test',
    });
    try {
      const refused = compactLake({ dataDir, mode: 'all' });
      await expect(refused).rejects.toThrow(LockHeldError);
      await expect(refused).rejects.toThrow(`pid ${process.pid}`);
      expect(await globFiles()).toEqual(files);
    } finally {
      await build.release();
    }
    const done = await compactLake({ dataDir, mode: 'all' });
    expect(done.streams).toMatchObject([{ stream: STREAM, merged: 20, written: 1 }]);
    expect(await globFiles()).toHaveLength(1);
  });

  it('after a run, merges only a size tier that reached its threshold', async () => {
    const l = await openTest();
    await commitMany(l, MERGE_FILES - 1);
    expect(await l.compact('due')).toEqual([]);
    await commitMany(l, 1);
    const [result] = await l.compact('due');
    expect(result?.merged).toBe(MERGE_FILES);
    expect(await perPartition()).toEqual(await expectedFrom(l));
  });

  it('folds the commit log: opening reads one state and the records after it', async () => {
    const l = await openTest();
    await commitMany(l, 3 * FOLD_RECORDS + 1);
    const checkpoints = PARTITIONS.map((p) => l.readCheckpoint(STREAM, p));
    await l.close();
    open.splice(0);
    const names = await readdir(join(dataDir, 'lake', '_commits', STREAM));
    expect(names).toEqual([`state-${String(3 * FOLD_RECORDS + 1).padStart(10, '0')}.json`]);
    const again = await openTest();
    expect(PARTITIONS.map((p) => again.readCheckpoint(STREAM, p))).toEqual(checkpoints);
    // The state keeps counting what it folded: the first partition took every other commit.
    expect(again.partitionState(STREAM, PARTITIONS[0] as (typeof PARTITIONS)[number])?.commits).toBe(
      Math.ceil((3 * FOLD_RECORDS + 1) / 2),
    );
    await commitMany(again, 2);
    expect(await perPartition()).toEqual(await expectedFrom(again));
  });
});

it('folds snapshot confirmations into at most a few Parquet files, every confirmation kept', async () => {
  const l = await openTest();
  const partition = PARTITIONS[0] as (typeof PARTITIONS)[number];
  const flush = l.begin({ stream: STREAM, partition, schema });
  await flush.append([{ id: 0, amount: '1', note: 'snapshot' }]);
  await flush.commit({ snapshotAt: 1_000, answer: 'same' });
  const times = Array.from({ length: 9 }, (_, i) => 2_000 + i * 1_000);
  for (const at of times) {
    await l.check(STREAM, partition, { confirmedAt: at });
    await l.compact('all'); // folds the log, confirmation included
  }
  const state = (await readLakeState(dataDir)).get(STREAM);
  const files = state?.files.filter((f) => f.table === 'confirmations') ?? [];
  expect(files.length).toBeGreaterThan(0);
  expect(files.length).toBeLessThan(4);
  expect([...(state?.partitions.values() ?? [])].every((p) => p.confirmations.length === 0)).toBe(true);
  const rows = await query(
    `select epoch_ms(confirmedAt)::bigint as confirmed_ms, epoch_ms(snapshotAt)::bigint as version
     from read_parquet([${files.map((f) => `'${join(dataDir, 'lake', f.path)}'`).join(', ')}]) order by confirmed_ms`,
  );
  expect(rows.map((r) => Number(r.confirmed_ms))).toEqual(times);
  expect(new Set(rows.map((r) => Number(r.version)))).toEqual(new Set([1_000]));
  // Nothing but the named files is left in the bookkeeping folder.
  expect((await readdir(join(dataDir, 'lake', '_confirmations', STREAM))).sort()).toEqual(
    files.map((f) => f.path.split('/').at(-1)).sort(),
  );
});

it('compacting named streams moves only their pending confirmations to a file', async () => {
  const l = await openTest();
  const partition = PARTITIONS[0] as (typeof PARTITIONS)[number];
  const other = `${STREAM}_other`;
  for (const stream of [STREAM, other]) {
    const flush = l.begin({ stream, partition, schema });
    await flush.append([{ id: 0, amount: '1', note: 'snapshot' }]);
    await flush.commit({ snapshotAt: 1_000, answer: 'same' });
    await l.check(stream, partition, { confirmedAt: 2_000 });
  }
  await l.compact('all', [STREAM]);
  const states = await readLakeState(dataDir);
  const confirmationFiles = (stream: string) =>
    (states.get(stream)?.files ?? []).filter((f) => f.table === 'confirmations').length;
  const pending = (stream: string) =>
    [...(states.get(stream)?.partitions.values() ?? [])].reduce((n, p) => n + p.confirmations.length, 0);
  expect([confirmationFiles(STREAM), pending(STREAM)]).toEqual([1, 0]);
  expect([confirmationFiles(other), pending(other)]).toEqual([0, 1]);
});

/** The compacting writer on this test's lake. */
const compactingWriter = () => startWriter(writer, [dataDir]);

it('loses and duplicates nothing when compaction is SIGKILLed, in the merge or in the commit', async () => {
  const KILLS = 24;
  const landed: Record<string, number> = {};
  for (let i = 0; i < KILLS; i++) {
    const w = compactingWriter();
    await w.ready;
    // Kill once the writer is inside a compaction step (or, every fourth time, anywhere).
    const target = ['merge', 'commit', 'link', 'any'][i % 4] as string;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && target !== 'any' && w.step() !== target) await sleep(1);
    if (target === 'any') await sleep(Math.random() * 300);
    else await sleep(Math.random() * 15);
    const at = w.step();
    await w.kill();
    landed[at] = (landed[at] ?? 0) + 1;
  }
  console.log(`compaction kills landed at: ${JSON.stringify(landed)}`);
  expect(landed.merge ?? 0).toBeGreaterThan(0);
  expect(landed.commit ?? 0).toBeGreaterThan(0);

  const l = await openTest();
  const expected = await expectedFrom(l);
  expect(expected.every((e) => e.n > 0)).toBe(true);
  expect(await perPartition()).toEqual(expected);
  // No orphan: the files a reader's glob sees are exactly the live files of the commit log.
  const live = (await readLakeState(dataDir)).get(STREAM)?.files.filter((f) => f.table === 'data') ?? [];
  expect(await globFiles()).toEqual(live.map((f) => join(dataDir, 'lake', f.path)).sort());
  expect(await readdir(join(dataDir, 'lake', '_generations', STREAM))).toHaveLength(1);
}, 240_000);

it('a reader globbing the stream while it is compacted never sees a row twice or a gap', async () => {
  const w = compactingWriter();
  await w.ready;
  const db = await (
    await DuckDBInstance.create(':memory:', { autoload_known_extensions: 'false' })
  ).connect();
  let consistent = 0;
  let failedReads = 0;
  const wrong: unknown[] = [];
  try {
    const until = Date.now() + 8_000;
    while (Date.now() < until || w.compactions() < 5) {
      try {
        const rows = (
          await db.runAndReadAll(
            `select note, count(*)::integer as n, count(distinct id)::integer as d, max(id)::integer as hi
             from ${glob()} group by note`,
          )
        ).getRowObjectsJson();
        for (const r of rows) if (r.n !== r.d || r.n !== Number(r.hi) + 1) wrong.push(r);
        consistent++;
      } catch {
        // A file listed by the glob was merged away before it was read: the query fails, it is not wrong.
        failedReads++;
      }
      if (Date.now() > until + 30_000) break;
    }
  } finally {
    await w.kill();
    db.closeSync();
  }
  console.log(
    `${consistent} consistent reads, ${failedReads} failed reads, ${w.compactions()} compactions meanwhile`,
  );
  expect(wrong).toEqual([]);
  expect(w.compactions()).toBeGreaterThanOrEqual(5);
  expect(consistent).toBeGreaterThan(10);
}, 120_000);
