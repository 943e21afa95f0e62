import { mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatStatus, readStatus } from '../../src/cli/status.ts';
import { DELETE_AT_ONCE, openCatalog } from '../../src/load/catalog.ts';
import { type Lake, openLake, readLakeState } from '../../src/load/lake.ts';
import { CommitConflictError, LeaseLostError } from '../../src/load/records.ts';
import { lake } from '../../src/schemas/lake.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';
import { query } from './duck.ts';

const schema = z.object({ id: lake.int64(), address: z.string() });
const STREAM = 'transfers';
const partition = { network: 'fuji', chain: '43113', address: '0xabc' };
const rowsFrom = (start: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: start + i, address: '0xabc' }));

let server: Awaited<ReturnType<typeof startPostgres>>;
let catalog: string;
let dataDir: string;
const open: Lake[] = [];

const openWriter = async (runId: string) => {
  const l = await openLake({ dataDir, runId, catalog });
  open.push(l);
  return l;
};
const ids = async () =>
  (
    await query(
      `select id::integer as id from read_parquet('${dataDir}/lake/${STREAM}/**/*.parquet') order by id`,
    )
  ).map((r) => r.id as number);

/** `body` with a connection of its own to the catalog's database: the test looking from outside avalake. */
async function withAdmin<T>(body: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: catalog });
  await admin.connect();
  try {
    return await body(admin);
  } finally {
    await admin.end();
  }
}

/** The lake holds rows 0 to n-1, and the state of its one partition counts n commits of a row each. */
async function expectWhole(n: number) {
  expect(await ids()).toEqual(Array.from({ length: n }, (_, i) => i));
  const state = (await readLakeState(dataDir, catalog)).get(STREAM);
  expect([...(state?.partitions.values() ?? [])][0]).toMatchObject({
    commits: n,
    rows: n,
    checkpoint: { next: n },
  });
}

/** As if `runId` had stopped its heartbeat an hour ago. */
async function ageHeartbeat(runId: string) {
  await withAdmin(async (admin) => {
    await admin.query(
      "update avalake.runs set heartbeat_at = clock_timestamp() - interval '1 hour' where run_id = $1",
      [runId],
    );
  });
}

async function until(condition: () => Promise<boolean>) {
  for (let waited = 0; !(await condition()); waited += 20) {
    if (waited > 10_000) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());
beforeEach(async () => {
  catalog = await freshDatabase(server.url);
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-catalog-'));
});
afterEach(async () => {
  for (const l of open.splice(0)) await l.close().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
});

describe('a PostgreSQL catalog', () => {
  it('lets two writers never both advance a partition: the second commit is refused, nothing of it stays', async () => {
    const a = await openWriter('run-a');
    const b = await openWriter('run-b');
    const fromA = a.begin({ stream: STREAM, partition, schema });
    const fromB = b.begin({ stream: STREAM, partition, schema });
    await fromA.append(rowsFrom(0, 3));
    await fromB.append(rowsFrom(100, 4));
    const committed = await fromA.commit({ next: 3 });
    await expect(fromB.commit({ next: 104 })).rejects.toBeInstanceOf(CommitConflictError);

    expect(await ids()).toEqual([0, 1, 2]);
    expect(await readdir(join(dataDir, 'lake', '_staging', STREAM))).toEqual([]);
    const state = (await readLakeState(dataDir, catalog)).get(STREAM);
    expect(state?.partitions.size).toBe(1);
    expect([...(state?.partitions.values() ?? [])][0]).toMatchObject({ checkpoint: { next: 3 }, rows: 3 });

    // B claims the partition and carries on from A's checkpoint, as the chain's next link.
    expect(await b.claim(STREAM, partition)).toBe('claimed');
    expect(b.readCheckpoint(STREAM, partition)).toEqual({ next: 3 });
    const next = b.begin({ stream: STREAM, partition, schema });
    await next.append(rowsFrom(3, 2));
    const record = await next.commit({ next: 5 });
    expect(record.parent).toBe(committed.seq);
    expect(await ids()).toEqual([0, 1, 2, 3, 4]);
  });

  it("writes a repair's records together or not at all: one whose partition moved on refuses them all", async () => {
    const a = await openWriter('run-a');
    const other = { ...partition, address: '0xdef' };
    for (const [p, next] of [
      [partition, 1],
      [other, 2],
    ] as const) {
      const flush = a.begin({ stream: STREAM, partition: p, schema });
      await flush.append(rowsFrom(next * 10, 1));
      await flush.commit({ next });
    }
    const heads = async () =>
      [...((await readLakeState(dataDir, catalog)).get(STREAM)?.partitions.values() ?? [])].map((p) => [
        p.seq,
        p.checkpoint,
      ]);
    const before = await heads();
    const [own, stale] = [
      ...((await readLakeState(dataDir, catalog)).get(STREAM)?.partitions.values() ?? []),
    ];
    if (!own || !stale) throw new Error('two partitions expected');
    const repairer = await openCatalog(catalog);
    try {
      await repairer.register('repair-run');
      const record = async (p: typeof own, parent: number) => ({
        format: 1 as const,
        kind: 'repair' as const,
        stream: STREAM,
        seq: Number(await repairer.allocateSeq(STREAM)),
        runId: 'repair-run',
        committedAt: new Date().toISOString(),
        partition: p.partition,
        parent,
        removed: [],
      });
      // The second names a parent that is no longer its partition's newest commit.
      const refused = repairer.appendAll([await record(own, own.seq), await record(stale, stale.seq - 1)]);
      await expect(refused).rejects.toBeInstanceOf(CommitConflictError);
      expect(await heads()).toEqual(before);
      await repairer.appendAll([await record(own, own.seq), await record(stale, stale.seq)]);
      expect((await heads()).map(([, checkpoint]) => checkpoint)).toEqual([null, null]);
    } finally {
      await repairer.close();
    }
    // The writer that read the partitions before cannot commit from its old checkpoint.
    const late = a.begin({ stream: STREAM, partition, schema });
    await late.append(rowsFrom(99, 1));
    await expect(late.commit({ next: 9 })).rejects.toThrow('"avalake repair" rewound the partition');
  });

  it('fences off the flush of a run taken for gone while it paused: it cannot commit, and the lake stays whole', async () => {
    const a = await openWriter('run-a');
    const paused = a.begin({ stream: STREAM, partition, schema });
    // The first 50,000 rows go to a staged file of their own before the flush commits.
    await paused.append(rowsFrom(0, 50_001));
    const staging = join(dataDir, 'lake', '_staging', STREAM);
    await until(async () => (await readdir(staging).catch(() => [])).length === 1);
    // A stalls past its lease (a suspended VM): its heartbeat is an hour old when B opens the lake.
    await ageHeartbeat('run-a');
    await openWriter('run-b');
    expect(await readdir(staging)).toEqual([]);
    // A wakes and commits: refused, since B discarded what the commit would name.
    await expect(paused.commit({ next: 50_001 })).rejects.toBeInstanceOf(LeaseLostError);
    // Nothing of it is visible or named: a later writer opens the lake whole, the partition not begun.
    const c = await openWriter('run-c');
    expect(c.readCheckpoint(STREAM, partition)).toBeUndefined();
    expect((await readLakeState(dataDir, catalog)).get(STREAM)?.files ?? []).toEqual([]);
    const lakeFiles = await readdir(join(dataDir, 'lake'), { recursive: true });
    expect(lakeFiles.filter((f) => f.endsWith('.parquet'))).toEqual([]);
  });

  it('moves in what a gone writer committed and left staged as soon as its partition is taken over, and discards what it did not commit', async () => {
    const a = await openWriter('run-a');
    // B is already running when A dies: its open saw nothing to recover.
    const b = await openWriter('run-b');
    expect(await a.claim(STREAM, partition)).toBe('claimed');
    const first = a.begin({ stream: STREAM, partition, schema });
    await first.append(rowsFrom(0, 3));
    const committed = await first.commit({ next: 3 });
    // A is killed between its commit record and moving the file in: the file is back in staging.
    const staging = join(dataDir, 'lake', '_staging', STREAM);
    const [file] = committed.files;
    if (!file) throw new Error('the commit names no file');
    await rename(join(dataDir, 'lake', file.path), join(staging, basename(file.path)));
    // …with a second flush staged and never committed.
    const second = a.begin({ stream: STREAM, partition, schema });
    await second.append(rowsFrom(3, 50_001));
    await until(async () => (await readdir(staging)).length === 2);
    await ageHeartbeat('run-a');
    await expect(ids()).rejects.toThrow(/No files found/);

    expect(await b.claim(STREAM, partition)).toBe('claimed');
    expect(await ids()).toEqual([0, 1, 2]);
    expect(await readdir(staging)).toEqual([]);
    expect(b.readCheckpoint(STREAM, partition)).toEqual({ next: 3 });
    expect(b.recovery).toEqual({
      rolledForward: [file.path],
      discarded: [expect.stringMatching(/^_staging\//)],
    });
    // A's uncommitted flush was fenced off with its files.
    await expect(second.commit({ next: 50_004 })).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('hands each partition to one run at a time; a finished one waits for the next wave, a dead holder’s is taken over', async () => {
    const a = await openWriter('run-a');
    const b = await openWriter('run-b');
    expect(await a.claim(STREAM, partition)).toBe('claimed');
    expect(await b.claim(STREAM, partition)).toBe('held');
    await a.finish(STREAM, partition, 'done');
    // Finished after B began: B does not extract it again in this wave.
    expect(await b.claim(STREAM, partition)).toBe('done');
    // A run that begins later does.
    const c = await openWriter('run-c');
    expect(await c.claim(STREAM, partition)).toBe('claimed');
    // C dies without a word (its heartbeat stops): once its lease lapses, B may take the partition.
    await ageHeartbeat('run-c');
    const other = { ...partition, address: '0xdef' };
    expect(await b.claim(STREAM, other)).toBe('claimed');
    expect(await b.claim(STREAM, partition)).toBe('claimed');
    // Given up unfinished (an interrupt, a spent quota): another live worker takes it at once.
    expect(await a.claim(STREAM, other)).toBe('held');
    await b.finish(STREAM, other, 'released');
    expect(await a.claim(STREAM, other)).toBe('claimed');
  });

  it('keeps every commit as one chain per partition across writers, folding included', async () => {
    for (let round = 0; round < 3; round++) {
      const w = await openWriter(`run-${round}`);
      expect(await w.claim(STREAM, partition)).toBe('claimed');
      for (let i = 0; i < 7; i++) {
        const flush = w.begin({ stream: STREAM, partition, schema });
        const start = round * 7 + i;
        await flush.append(rowsFrom(start, 1));
        await flush.commit({ next: start + 1 });
      }
      await w.finish(STREAM, partition, 'done');
      await w.close(); // folds once 16 records pile up
      open.pop();
    }
    await expectWhole(21);
    await withAdmin(async (admin) => {
      const { rows } = await admin.query<{ seq: string; parent: string | null }>(
        "select seq, record->>'parent' as parent from avalake.commits where stream = $1 order by commit_id",
        [STREAM],
      );
      expect(rows).toHaveLength(21);
      rows.forEach((row, i) => {
        expect(row.parent === null ? null : Number(row.parent)).toBe(
          i === 0 ? null : Number(rows[i - 1]?.seq),
        );
      });
      const folded = await admin.query('select through_commit from avalake.states where stream = $1', [
        STREAM,
      ]);
      expect(folded.rowCount).toBe(1);
    });
  });

  it('a fold deletes the numbers a run never committed once it is a day silent, not while its heartbeat only lapsed', async () => {
    const a = await openWriter('run-a');
    // Two numbers run-a never commits: a flush dropped (as an unchanged snapshot's is, every run), and
    // one whose first 50,000 rows were staged when run-a stalled.
    const dropped = a.begin({ stream: STREAM, partition, schema });
    await dropped.append(rowsFrom(0, 1));
    dropped.seal();
    await dropped.abort();
    const stalled = a.begin({ stream: STREAM, partition, schema });
    await stalled.append(rowsFrom(0, 50_001));
    const staging = join(dataDir, 'lake', '_staging', STREAM);
    await until(async () => (await readdir(staging).catch(() => [])).length === 1);
    // A third, of another partition, sealed to commit once run-a's heartbeat is back.
    const elsewhere = { ...partition, address: '0xdef' };
    const resumed = a.begin({ stream: STREAM, partition: elsewhere, schema });
    await resumed.append([{ id: 100, address: '0xdef' }]);
    resumed.seal();
    await withAdmin(async (admin) => {
      const unused = async () =>
        (await admin.query<{ n: number }>('select count(*)::int as n from avalake.seqs where not committed'))
          .rows[0]?.n;
      await until(async () => (await unused()) === 3);
      // run-a is live: it may still commit them, and a fold keeps them.
      const b = await openWriter('run-b');
      const first = b.begin({ stream: STREAM, partition, schema });
      await first.append(rowsFrom(0, 1));
      await first.commit({ next: 1 });
      await b.compact('all');
      expect(await unused()).toBe(3);
      // Past its lease, an hour silent: a heartbeat that lapsed (a catalog failover, a stall) may come
      // back, and the numbers stay for it to commit.
      await ageHeartbeat('run-a');
      const second = b.begin({ stream: STREAM, partition, schema });
      await second.append(rowsFrom(1, 1));
      await second.commit({ next: 2 });
      await b.compact('all');
      expect(await unused()).toBe(3);
      await admin.query("update avalake.runs set heartbeat_at = clock_timestamp() where run_id = 'run-a'");
      await resumed.commit({ next: 101 });
      expect(await unused()).toBe(2);
      // A day silent: the next fold deletes them, and their fence with them.
      await admin.query(
        "update avalake.runs set heartbeat_at = clock_timestamp() - interval '25 hours' where run_id = 'run-a'",
      );
      const third = b.begin({ stream: STREAM, partition, schema });
      await third.append(rowsFrom(2, 1));
      await third.commit({ next: 3 });
      await b.compact('all');
      expect(await unused()).toBe(0);
    });
    // The staged file of a number that has no row any more is a gone run's: the next open deletes it.
    expect(await readdir(staging)).toHaveLength(1);
    await openWriter('run-c');
    expect(await readdir(staging)).toEqual([]);
    // run-a wakes: refused, its number gone.
    await expect(stalled.commit({ next: 50_001 })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await ids()).toEqual([0, 1, 2, 100]);
  });

  it('deletes folded records once a week old and older than every live run; the lake reads the same', async () => {
    const a = await openWriter('run-a');
    const commitNext = async () => {
      const next = (a.readCheckpoint(STREAM, partition)?.next as number | undefined) ?? 0;
      const flush = a.begin({ stream: STREAM, partition, schema });
      await flush.append(rowsFrom(next, 1));
      await flush.commit({ next: next + 1 });
    };
    await withAdmin(async (admin) => {
      const seqs = async () =>
        (
          await admin.query<{ seq: string }>(
            'select seq from avalake.commits where stream = $1 and partition_id is not null order by seq',
            [STREAM],
          )
        ).rows.map((r) => Number(r.seq));
      const age = (sql: string, params: unknown[] = []) => admin.query(sql, params);
      for (let i = 0; i < 5; i++) await commitNext();
      await a.compact('all'); // folds: the records stay, a day old or not
      const first = await seqs();
      expect(first).toHaveLength(5);

      // A week and a day later, by the server's clock: the next fold deletes what is folded.
      await age("update avalake.commits set written_at = written_at - interval '8 days'");
      await commitNext();
      await commitNext();
      await a.compact('all');
      const kept = await seqs();
      expect(kept).toHaveLength(2);
      // The deleted records' seqs go too; the kept ones' stay.
      const numbered = await admin.query<{ seq: string }>(
        'select seq from avalake.seqs where seq = any($1::bigint[])',
        [[...first, ...kept]],
      );
      expect(numbered.rows.map((r) => Number(r.seq)).sort((x, y) => x - y)).toEqual(kept);
      expect(kept.every((seq) => seq > Math.max(...first))).toBe(true);

      // A live run older than the records keeps them: it may still ask for a partition's newer ones.
      const b = await openWriter('run-b');
      await age(
        "update avalake.runs set started_at = started_at - interval '10 days' where run_id = 'run-b'",
      );
      await age("update avalake.commits set written_at = written_at - interval '8 days'");
      await commitNext();
      await a.compact('all');
      const guarded = await seqs();
      expect(guarded).toHaveLength(3);
      expect(guarded.slice(0, 2)).toEqual(kept);
      await b.close();
      await ageHeartbeat('run-b'); // gone (here, closed too): it reads nothing more
      await commitNext();
      await a.compact('all');
      const last = await seqs();
      expect(last).toHaveLength(2);
      expect(last.every((seq) => seq > Math.max(...kept))).toBe(true);
    });

    // The lake is whole: every row, and the partition's state counts every commit.
    await expectWhole(9);
    const again = await openWriter('run-c');
    expect(again.readCheckpoint(STREAM, partition)).toEqual({ next: 9 });
  });

  it('a catalog from before records were dated gets the column without rewriting them: dated at the upgrade', async () => {
    const a = await openWriter('run-a');
    const flush = a.begin({ stream: STREAM, partition, schema });
    await flush.append(rowsFrom(0, 1));
    await flush.commit({ next: 1 });
    await a.close();
    open.splice(0);
    await withAdmin(async (admin) => {
      await admin.query('drop index avalake.commits_by_age');
      await admin.query('alter table avalake.commits drop column written_at');
      const upgradedAt = Date.now();
      await openWriter('run-b'); // the schema's statements run again
      const { rows } = await admin.query<{ n: number; oldest: Date; column_default: string }>(
        `select count(*)::int as n, min(written_at) as oldest,
                (select column_default from information_schema.columns
                 where table_schema = 'avalake' and table_name = 'commits' and column_name = 'written_at') as column_default
         from avalake.commits`,
      );
      expect(rows[0]?.n).toBe(1);
      expect(Math.abs(new Date(rows[0]?.oldest ?? 0).getTime() - upgradedAt)).toBeLessThan(60_000);
      // Records written from now on are dated when written.
      expect(rows[0]?.column_default).toBe('clock_timestamp()');
    });
  });

  it('deletes a backlog of folded records a bounded number at a time, over the next folds', async () => {
    const a = await openWriter('run-a');
    const commitOne = async (next: number) => {
      const flush = a.begin({ stream: STREAM, partition, schema });
      await flush.append(rowsFrom(next, 1));
      await flush.commit({ next: next + 1 });
    };
    await commitOne(0);
    await a.compact('all');
    await withAdmin(async (admin) => {
      // A week-old backlog, as a catalog from before records were deleted has: older than any record.
      await admin.query(
        `insert into avalake.commits (commit_id, stream, seq, partition_id, record, written_at)
         select -i, $1, -i, 'old', '{}'::jsonb, now() - interval '8 days' from generate_series(1, $2::int) as i`,
        [STREAM, DELETE_AT_ONCE + 10],
      );
      const backlog = async () =>
        Number(
          (await admin.query<{ n: string }>('select count(*) as n from avalake.commits where commit_id < 0'))
            .rows[0]?.n,
        );
      await commitOne(1);
      await a.compact('all');
      expect(await backlog()).toBe(10);
      await commitOne(2);
      await a.compact('all');
      expect(await backlog()).toBe(0);
    });
    expect(await ids()).toEqual([0, 1, 2]);
  });

  it('keeps one compute-unit allowance per host for every worker: what one takes, the others cannot', async () => {
    const a = (await openWriter('run-a')).allowance;
    const b = (await openWriter('run-b')).allowance;
    if (!a || !b) throw new Error('a lake with a catalog has an allowance');
    const origin = 'https://data.example';
    expect(await a.take(origin, 20)).toEqual({ kind: 'unknown' });
    await a.learn(origin, { limit: 100, remaining: 80, resetSeconds: 30, windowSeconds: 60 });
    expect(await b.take(origin, 50)).toEqual({ kind: 'taken' }); // 80 → 30
    expect(await a.take(origin, 20)).toEqual({ kind: 'taken' }); // 30 → 10
    const wait = await b.take(origin, 20);
    expect(wait).toMatchObject({ kind: 'wait', limit: 100, windowSeconds: 60 });
    expect(wait.kind === 'wait' && wait.ms > 29_000 && wait.ms <= 30_000).toBe(true);
    // A later answer of the same window does not raise the count: what is in flight is already taken.
    await b.learn(origin, { limit: 100, remaining: 60, resetSeconds: 30, windowSeconds: 60 });
    expect((await a.take(origin, 20)).kind).toBe('wait');
    // The next window starts full, whoever takes first.
    await b.learn(origin, { limit: 100, remaining: 100, resetSeconds: 0, windowSeconds: 60 });
    expect(await a.take(origin, 100)).toEqual({ kind: 'taken' });
    expect((await b.take(origin, 1)).kind).toBe('wait');
  });

  it('status lists the catalog’s workers: live ones with what they hold, gone ones counted', async () => {
    const a = await openWriter('run-a');
    await openWriter('run-b');
    expect(await a.claim(STREAM, partition)).toBe('claimed');
    await withAdmin(async (admin) => {
      await admin.query(
        "update avalake.runs set heartbeat_at = clock_timestamp() - interval '1 hour' where run_id = 'run-b'",
      );
    });
    const status = await readStatus(dataDir, Date.now(), catalog);
    expect(status.workers?.map((w) => [w.runId, w.live, w.holding, w.pid])).toEqual([
      ['run-a', true, 1, process.pid],
      ['run-b', false, 0, process.pid],
    ]);
    expect(formatStatus(status)).toContain(
      `workers on the catalog: 1 live, 1 gone\n  pid ${process.pid} on ${hostname()} since ${status.workers?.[0]?.startedAt}, holding 1 partition`,
    );
  });

  it('forgets a run gone for a week when the next one starts; one gone an hour is still listed', async () => {
    const a = await openWriter('run-a');
    expect(await a.claim(STREAM, partition)).toBe('claimed');
    await openWriter('run-b');
    await withAdmin(async (admin) => {
      await admin.query(
        "update avalake.runs set heartbeat_at = clock_timestamp() - interval '8 days' where run_id = 'run-a'",
      );
      await admin.query(
        "update avalake.runs set heartbeat_at = clock_timestamp() - interval '1 hour' where run_id = 'run-b'",
      );
      const c = await openWriter('run-c');
      const status = await readStatus(dataDir, Date.now(), catalog);
      expect(status.workers?.map((w) => [w.runId, w.live])).toEqual([
        ['run-b', false],
        ['run-c', true],
      ]);
      // What the forgotten run held is free for the others.
      expect(await c.claim(STREAM, partition)).not.toBe('held');
    });
  });
});
