import { mkdir, mkdtemp, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRecordBatchBuilder } from '../../src/load/arrow.ts';
import { BATCH_ROWS } from '../../src/load/batch-builder.ts';
import { FOLD_RECORDS } from '../../src/load/commit.ts';
import { HELD_CONFIRMATIONS } from '../../src/load/confirmations.ts';
import { LakeCorruptError } from '../../src/load/errors.ts';
import { type Lake, openLake, readLakeState } from '../../src/load/lake.ts';
import { partitionId } from '../../src/load/layout.ts';
import { writeParquetFile } from '../../src/load/parquet.ts';
import { lake } from '../../src/schemas/lake.ts';
import { query } from './duck.ts';

const schema = z.object({ id: lake.int64(), amount: lake.amount(), address: z.string() });
const STREAM = 'transfers';
const partition = { network: 'fuji', chain: '43113', address: '0xabc' };
const rowsFrom = (start: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: start + i,
    amount: `${(start + i) * 10}`,
    address: '0xabc',
  }));

let dataDir: string;
const open: Lake[] = [];

async function openTest(): Promise<Lake> {
  const l = await openLake({ dataDir, runId: 'test-run' });
  open.push(l);
  return l;
}

async function commitRows(l: Lake, start: number, count: number, extra?: () => Promise<void>) {
  const flush = l.begin({ stream: STREAM, partition, schema });
  await flush.append(rowsFrom(start, count));
  await extra?.();
  return flush.commit({ nextId: start + count });
}

const lakeGlob = () => `read_parquet('${dataDir}/lake/${STREAM}/**/*.parquet', hive_partitioning = true)`;
const ids = async () =>
  (await query(`select id::integer as id from ${lakeGlob()} order by id`)).map((r) => r.id as number);
const stagingDir = () => join(dataDir, 'lake', '_staging', STREAM);
const lakeFile = (path: string) => join(dataDir, 'lake', ...path.split('/'));

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-commit-'));
});

afterEach(async () => {
  for (const l of open.splice(0)) await l.close().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
});

describe('commit', () => {
  it('makes files visible only with their checkpoint, in the documented layout', async () => {
    const l = await openTest();
    expect(l.readCheckpoint(STREAM, partition)).toBeUndefined();
    const flush = l.begin({ stream: STREAM, partition, schema });
    await flush.append(rowsFrom(0, 10));
    expect(l.readCheckpoint(STREAM, partition)).toBeUndefined();
    const record = await flush.commit({ nextId: 10, pageToken: 'abc' });

    expect(record.seq).toBe(1);
    expect(record.files).toEqual([
      expect.objectContaining({
        path: 'transfers/network=fuji/chain=43113/part-0000000001-0.parquet',
        rows: 10,
      }),
    ]);
    expect(l.readCheckpoint(STREAM, partition)).toEqual({ nextId: 10, pageToken: 'abc' });
    expect(await ids()).toEqual(rowsFrom(0, 10).map((r) => r.id));
    expect(await readdir(stagingDir())).toEqual([]);
    const [row] = await query(`select network, chain, address, _run_id from ${lakeGlob()} limit 1`);
    expect(row).toEqual({ network: 'fuji', chain: '43113', address: '0xabc', _run_id: 'test-run' });
  });

  it('numbers commits per stream, monotonically, across reopenings', async () => {
    let l = await openTest();
    await commitRows(l, 0, 3);
    const aborted = l.begin({ stream: STREAM, partition, schema });
    await aborted.append(rowsFrom(3, 3));
    await aborted.abort();
    // A flush takes its number when it first stages a file; this one was dropped before.
    expect((await commitRows(l, 3, 3)).seq).toBe(2);
    await l.close();
    l = await openTest();
    expect((await commitRows(l, 6, 1)).seq).toBe(3);
    const other = l.begin({
      stream: 'blocks',
      partition: { network: 'fuji' },
      schema: z.object({ h: lake.int64() }),
    });
    await other.append([{ h: 1n }]);
    expect((await other.commit({})).seq).toBe(1);
    expect(await ids()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(l.readCheckpoint(STREAM, partition)).toEqual({ nextId: 7 });
  });

  it('refuses a second flush of a partition taking rows; one sealed may commit after the next begins', async () => {
    const l = await openTest();
    const flush = l.begin({ stream: STREAM, partition, schema });
    expect(() => l.begin({ stream: STREAM, partition: { ...partition }, schema })).toThrow(
      /already taking rows/,
    );
    await flush.append(rowsFrom(1, 2));
    flush.seal();
    await expect(flush.append(rowsFrom(3, 1))).rejects.toThrow(/sealed/);
    // The next flush takes rows while the sealed one has not committed yet; their commits keep that order.
    const next = l.begin({ stream: STREAM, partition, schema });
    await next.append(rowsFrom(5, 2));
    await flush.commit({ nextId: 3 });
    await next.commit({ nextId: 7 });
    expect(l.readCheckpoint(STREAM, partition)).toEqual({ nextId: 7 });
    expect(await ids()).toEqual([1, 2, 5, 6]);
  });

  it('keeps that order after a restart when the next flush stages a file before the sealed one commits', async () => {
    const l = await openTest();
    const flush = l.begin({ stream: STREAM, partition, schema });
    await flush.append(rowsFrom(0, 2));
    flush.seal();
    // A whole staged file's worth: the next flush stages it (and so is numbered) before the sealed one commits.
    const next = l.begin({ stream: STREAM, partition, schema });
    await next.append(rowsFrom(2, BATCH_ROWS));
    const [first, second] = [
      await flush.commit({ nextId: 2 }),
      await next.commit({ nextId: 2 + BATCH_ROWS }),
    ];
    expect(first.seq).toBeLessThan(second.seq);
    await l.close();
    // The commit log is read again from the files: the newest checkpoint is still the next flush's.
    const reopened = await openTest();
    expect(reopened.readCheckpoint(STREAM, partition)).toEqual({ nextId: 2 + BATCH_ROWS });
  });

  it('commits a checkpoint without rows', async () => {
    const l = await openTest();
    const flush = l.begin({ stream: STREAM, partition, schema });
    const record = await flush.commit({ cursor: 42 });
    expect(record.files).toEqual([]);
    expect(l.readCheckpoint(STREAM, partition)).toEqual({ cursor: 42 });
  });

  it('puts records that do not fit, and explicit rejects, into the rejects table of the same commit', async () => {
    const l = await openTest();
    const flush = l.begin({ stream: STREAM, partition, schema });
    await flush.append([...rowsFrom(0, 2), { id: 2, amount: '2.5', address: '0xabc' }, ...rowsFrom(3, 1)]);
    await flush.reject([{ raw: '{"id":"bad"}', reason: 'id: expected number' }]);
    expect([flush.rows, flush.rejected]).toEqual([3, 2]);
    const record = await flush.commit({ nextId: 4 });
    expect(record.files.map((f) => [f.table, f.path, f.rows])).toEqual([
      ['data', 'transfers/network=fuji/chain=43113/part-0000000001-0.parquet', 3],
      ['rejects', '_rejects/stream=transfers/network=fuji/part-0000000001-1.parquet', 2],
    ]);
    expect(await ids()).toEqual([0, 1, 3]);
    const rejects = await query(
      `select stream, network, raw, reason, partition from read_parquet('${dataDir}/lake/_rejects/**/*.parquet', hive_partitioning = true) order by raw`,
    );
    expect(rejects).toEqual([
      {
        stream: 'transfers',
        network: 'fuji',
        raw: '{"id":"bad"}',
        reason: 'id: expected number',
        partition: JSON.stringify(partition),
      },
      {
        stream: 'transfers',
        network: 'fuji',
        raw: '{"id":2,"amount":"2.5","address":"0xabc"}',
        reason: expect.stringContaining('column amount'),
        partition: JSON.stringify(partition),
      },
    ]);
  });

  it("keeps a run's checks in the state until the lake closes: no record file for each partition checked", async () => {
    const first = await openTest();
    await commitRows(first, 0, 3);
    const snapshot = { ...partition, address: '0xdef' };
    const flush = first.begin({ stream: STREAM, partition: snapshot, schema });
    await flush.append([{ id: 100, amount: '1', address: '0xdef' }]);
    await flush.commit({ snapshotAt: 1_000, answer: 'same' });
    await first.close();
    open.splice(0);
    const commitsDir = join(dataDir, 'lake', '_commits', STREAM);
    const before = (await readdir(commitsDir)).sort();
    expect(before).toEqual(['0000000001.json', '0000000002.json']);

    // A cron run that finds nothing new: each partition is checked, one still-true snapshot confirmed.
    const run = await openTest();
    await run.check(STREAM, partition, { observed: { sourceAt: 5_000 } });
    await run.check(STREAM, snapshot, { confirmedAt: 6_000, observed: { sourceAt: 6_000 } });
    expect(run.partitionState(STREAM, partition)?.sourceAt).toBe(5_000);
    // Nothing of them is on disk yet: a run killed now has lost its checks, and nothing else.
    expect((await readdir(commitsDir)).sort()).toEqual(before);
    const onDisk = (await readLakeState(dataDir)).get(STREAM);
    expect(onDisk?.partitions.get(partitionId(partition))?.sourceAt).toBeUndefined();
    expect(onDisk?.partitions.get(partitionId(snapshot))?.confirmations).toEqual([]);

    await run.close();
    open.splice(0);
    // Closed: one state file holds both records and both checks.
    expect(await readdir(commitsDir)).toEqual(['state-0000000004.json']);
    const again = await openTest();
    expect(again.readCheckpoint(STREAM, partition)).toEqual({ nextId: 3 });
    expect(again.readCheckpoint(STREAM, snapshot)).toEqual({ snapshotAt: 1_000, answer: 'same' });
    expect(again.partitionState(STREAM, partition)?.sourceAt).toBe(5_000);
    // The confirmation waits in the state (a file of them comes once HELD_CONFIRMATIONS are pending).
    expect(again.partitionState(STREAM, snapshot)?.confirmations).toEqual([[6_000, 1_000]]);
    expect(again.partitionState(STREAM, snapshot)?.commits).toBe(2);
  });

  it("holds cron runs' snapshot confirmations in the state until HELD_CONFIRMATIONS are pending", async () => {
    // A stream of 64 snapshot partitions: each run checks them all, four times a fold's worth of records.
    const partitions = Array.from({ length: 64 }, (_, i) => ({ ...partition, address: `0x${i}` }));
    const runs = HELD_CONFIRMATIONS / partitions.length;
    expect(partitions.length).toBeGreaterThan(FOLD_RECORDS);
    const first = await openTest();
    for (const p of partitions) {
      const flush = first.begin({ stream: STREAM, partition: p, schema });
      await flush.append(rowsFrom(0, 1));
      await flush.commit({ snapshotAt: 1_000, answer: 'same' });
    }
    await first.close();
    open.splice(0);
    const stateOnDisk = async () => (await readLakeState(dataDir)).get(STREAM);
    const pendingOnDisk = async () =>
      [...((await stateOnDisk())?.partitions.values() ?? [])].reduce((n, p) => n + p.confirmations.length, 0);
    const confirmationFiles = async () =>
      ((await stateOnDisk())?.files ?? []).filter((f) => f.table === 'confirmations');
    for (let run = 1; run <= runs; run++) {
      const l = await openTest();
      for (const p of partitions) await l.check(STREAM, p, { confirmedAt: 1_000 + run });
      await l.close();
      open.splice(0);
      if (run < runs) {
        expect(await confirmationFiles()).toEqual([]);
        expect(await pendingOnDisk()).toBe(run * partitions.length);
      } else {
        expect(await pendingOnDisk()).toBe(0);
        const [file, ...more] = await confirmationFiles();
        expect(more).toEqual([]);
        expect(file?.rows).toBe(HELD_CONFIRMATIONS);
        const [row] = await query(
          `select count(*)::integer as n, count(distinct "partition")::integer as partitions,
             min(epoch_ms(confirmedAt))::integer as first, max(epoch_ms(confirmedAt))::integer as last
           from read_parquet('${lakeFile(file?.path ?? '')}')`,
        );
        expect(row).toEqual({ n: HELD_CONFIRMATIONS, partitions: 64, first: 1_001, last: 1_000 + runs });
      }
    }
  });

  it('writes rejects alone without moving the checkpoint', async () => {
    const l = await openTest();
    const first = await l.writeRejects(STREAM, partition, [{ raw: 'x', reason: 'r' }]);
    expect(first.checkpoint).toBeNull();
    expect(l.readCheckpoint(STREAM, partition)).toBeUndefined();
    await commitRows(l, 0, 1);
    await l.writeRejects(STREAM, partition, [{ raw: 'y', reason: 'r' }]);
    expect(l.readCheckpoint(STREAM, partition)).toEqual({ nextId: 1 });
  });
});

describe('recovery', () => {
  it('discards staged files that no commit names (crash after the staging write)', async () => {
    let l = await openTest();
    await commitRows(l, 0, 5);
    await l.close();
    // What a flush leaves when killed after writing its staged file, before its commit record.
    const builder = createRecordBatchBuilder(schema);
    for (const r of rowsFrom(5, 5)) builder.append(r);
    await writeParquetFile(join(stagingDir(), 'part-0000000002-0.parquet'), builder.finish());
    await writeFile(join(dataDir, 'lake', '_commits', STREAM, '0000000002.json.tmp-99999'), '{"half":');

    l = await openTest();
    expect(l.recovery).toEqual({
      rolledForward: [],
      discarded: ['_staging/transfers/part-0000000002-0.parquet'],
    });
    expect(await readdir(stagingDir())).toEqual([]);
    expect(await readdir(join(dataDir, 'lake', '_commits', STREAM))).toEqual(['0000000001.json']);
    expect(await ids()).toEqual([0, 1, 2, 3, 4]);
    expect(l.readCheckpoint(STREAM, partition)).toEqual({ nextId: 5 });
    expect((await commitRows(l, 5, 1)).seq).toBe(2);
  });

  it('rolls committed files forward (crash after the commit record, before the renames)', async () => {
    let l = await openTest();
    const record = await commitRows(l, 0, 5);
    await l.close();
    for (const f of record.files) await rename(lakeFile(f.path), join(stagingDir(), f.staged));
    await expect(ids()).rejects.toThrow(/No files found/);

    l = await openTest();
    expect(l.recovery.rolledForward).toEqual(record.files.map((f) => f.path));
    expect(await ids()).toEqual([0, 1, 2, 3, 4]);
    expect(l.readCheckpoint(STREAM, partition)).toEqual({ nextId: 5 });
  });

  it('finishes a half-done move (crash between two renames)', async () => {
    let l = await openTest();
    const record = await commitRows(l, 0, 4, async () => undefined);
    const withRejects = l.begin({ stream: STREAM, partition, schema });
    await withRejects.append(rowsFrom(4, 2));
    await withRejects.reject([{ raw: 'r', reason: 'x' }]);
    const second = await withRejects.commit({ nextId: 6 });
    expect(second.files).toHaveLength(2);
    await l.close();
    const moved = second.files[1];
    if (!moved) throw new Error('unreachable');
    await rename(lakeFile(moved.path), join(stagingDir(), moved.staged));

    l = await openTest();
    expect(l.recovery.rolledForward).toEqual([moved.path]);
    expect(await ids()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(record.seq).toBe(1);
  });

  it('refuses a staged file whose hash differs from its commit record, and deletes nothing', async () => {
    let l = await openTest();
    const record = await commitRows(l, 0, 3);
    await l.close();
    const file = record.files[0];
    if (!file) throw new Error('unreachable');
    const staged = join(stagingDir(), file.staged);
    await rename(lakeFile(file.path), staged);
    const bytes = await readFile(staged);
    const at = bytes.length - 100;
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0xff, at);
    await writeFile(staged, bytes);

    await expect(openLake({ dataDir })).rejects.toThrow(LakeCorruptError);
    expect(await readdir(stagingDir())).toEqual([file.staged]);
    l = await openLake({ dataDir, lock: { wait: false } }).catch((e) => e);
    expect(l).toBeInstanceOf(LakeCorruptError); // the failed open released its lock
  });

  it('refuses a lake whose newest commit names a missing file', async () => {
    const l = await openTest();
    const record = await commitRows(l, 0, 3);
    await l.close();
    await unlink(lakeFile(record.files[0]?.path ?? ''));
    await expect(openLake({ dataDir })).rejects.toThrow(/names transfers\/network=fuji.*no such file/);
  });

  it('ignores foreign files in the commit folder and refuses a malformed record', async () => {
    const l = await openTest();
    await commitRows(l, 0, 1);
    await l.close();
    const commits = join(dataDir, 'lake', '_commits', STREAM);
    await writeFile(join(commits, 'README'), 'notes');
    await (await openTest()).close();
    await mkdir(commits, { recursive: true });
    await writeFile(join(commits, '0000000002.json'), '{"format":1}');
    // One line naming the file by its path (every stream has a 0000000002.json), what is wrong, and what to do.
    const malformed = (await openLake({ dataDir }).catch((e: unknown) => e)) as Error;
    expect(malformed.message).toBe(
      `commit record ${join(commits, '0000000002.json')} is malformed (stream: Invalid input: expected ` +
        'string, received undefined; seq: Invalid input: expected number, received undefined; partition: ' +
        'Invalid input: expected record, received undefined; and 4 more); restore it from a backup',
    );
    await writeFile(join(commits, '0000000002.json'), '{"format":1,');
    const notJson = (await openLake({ dataDir }).catch((e: unknown) => e)) as Error;
    expect(notJson.message).toBe(
      `commit record ${join(commits, '0000000002.json')} is not JSON; restore it from a backup`,
    );
  });
});
