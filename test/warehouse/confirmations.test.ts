import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { type Lake, openLake } from '../../src/load/index.ts';
import { lake as lakeTypes } from '../../src/schemas/lake.ts';
import { type ConfirmationsSync, syncConfirmations } from '../../src/warehouse/confirmations.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { lakeSources } from '../../src/warehouse/lake-sources.ts';

const STREAM = 'validators';
const PARTITIONS = [
  { network: 'fuji', chain: 'p' },
  { network: 'mainnet', chain: 'p' },
];
const schema = z.object({ id: lakeTypes.int64(), note: z.string() });

let dataDir: string;
let lake: Lake;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-confirmations-'));
  lake = await openLake({ dataDir, runId: 'confirmations-test' });
  // One stored snapshot per partition, stamped 1,000 ms; every later answer repeats it.
  for (const partition of PARTITIONS) {
    const flush = lake.begin({ stream: STREAM, partition, schema });
    await flush.append([{ id: 1, note: partition.network }]);
    await flush.commit({ snapshotAt: 1_000, answer: 'same' });
  }
});
afterEach(async () => {
  await lake.close();
  await rm(dataDir, { recursive: true, force: true });
});

let confirmedAt = 2_000;
/**
 * One run that finds every partition's snapshot unchanged and ends as runs do, the lake closed (which
 * makes its checks durable, their confirmations pending in the state); `fold`: compacted first, which
 * folds the pending confirmations into a file.
 */
async function quietRun(fold: boolean) {
  confirmedAt += 900_000;
  for (const partition of PARTITIONS) await lake.check(STREAM, partition, { confirmedAt });
  if (fold) await lake.compact('all');
  await lake.close();
  lake = await openLake({ dataDir, runId: 'confirmations-test' });
}

/** Syncs the warehouse file `name` of the data directory with the lake as it is now. */
const syncInto = async (name: string): Promise<ConfirmationsSync> => {
  const sources = await lakeSources(join(dataDir, 'lake'));
  return withDuckDB(join(dataDir, name), (db) => syncConfirmations(db, sources));
};

/** The confirmations table of the kept warehouse, set against one synced from nothing now. */
async function compareWithScratch() {
  await rm(join(dataDir, 'scratch.duckdb'), { force: true });
  expect((await syncInto('scratch.duckdb')).kind).toBe('whole');
  return withDuckDB(':memory:', async (db) => {
    await db.run(`attach '${join(dataDir, 'kept.duckdb')}' as kept (read_only)`);
    await db.run(`attach '${join(dataDir, 'scratch.duckdb')}' as scratch (read_only)`);
    const [row] = await queryRows(
      db,
      `select (select count(*) from kept._lake.snapshot_confirmations) as kept,
              (select count(*) from (select * from kept._lake.snapshot_confirmations
                                     except all select * from scratch._lake.snapshot_confirmations)) as only_kept,
              (select count(*) from (select * from scratch._lake.snapshot_confirmations
                                     except all select * from kept._lake.snapshot_confirmations)) as only_scratch,
              (select list(path order by path) from kept._lake.confirmation_files) as kept_files,
              (select list(path order by path) from scratch._lake.confirmation_files) as scratch_files`,
    );
    const times = await queryRows(
      db,
      `select epoch_ms(confirmed_at) as confirmed_ms, count(*) as partitions from kept._lake.snapshot_confirmations
       group by all order by confirmed_ms`,
    );
    return { row, times: times.map((t) => [Number(t.confirmed_ms), Number(t.partitions)]) };
  });
}

it('a build appends only new confirmation files and pending ones, equal to a table built from nothing', async () => {
  const expected: number[][] = [];
  const syncs: ConfirmationsSync[] = [];
  let merges = 0;
  for (let run = 0; run < 14; run++) {
    // Folded every other run, so files pile up and are merged (every third fold), and some runs leave
    // confirmations pending in the commit log's state.
    await quietRun(run % 2 === 1);
    expected.push([confirmedAt, PARTITIONS.length]);
    syncs.push(await syncInto('kept.duckdb'));
    const { row, times } = await compareWithScratch();
    expect(times).toEqual(expected);
    expect({ only_kept: row?.only_kept, only_scratch: row?.only_scratch }).toEqual({
      only_kept: '0',
      only_scratch: '0',
    });
    expect(row?.kept_files).toEqual(row?.scratch_files);
    const state = (await lakeSources(join(dataDir, 'lake'))).streams.get(STREAM);
    if (state?.files.some((f) => f.table === 'confirmations' && f.replaces !== undefined)) merges++;
  }
  expect(merges).toBeGreaterThan(0);
  expect(syncs[0]).toEqual({ kind: 'whole', why: 'not built by this version yet', rows: 2 });
  // Every later build read only what was new: the run's pending confirmations, or the file they were
  // folded into (never the merged file, whose rows it held).
  for (const [i, sync] of syncs.slice(1).entries()) {
    const folded = (i + 1) % 2 === 1;
    expect(sync, `run ${i + 1}`).toEqual(
      folded
        ? { kind: 'appended', files: 1, rows: 2 * PARTITIONS.length }
        : { kind: 'appended', files: 0, rows: PARTITIONS.length },
    );
  }
});

it('builds the table whole when a merged file took a file the warehouse never read', async () => {
  await quietRun(true);
  expect((await syncInto('kept.duckdb')).kind).toBe('whole');
  // Four folds with no build between: the fourth merges the files, one of them never read.
  for (let run = 0; run < 4; run++) await quietRun(true);
  expect(await syncInto('kept.duckdb')).toEqual({
    kind: 'whole',
    why: 'a merge took 1 file(s) it held together with ones it never read',
    rows: 5 * PARTITIONS.length,
  });
  const { row, times } = await compareWithScratch();
  expect(times.length).toBe(5);
  expect({ only_kept: row?.only_kept, only_scratch: row?.only_scratch }).toEqual({
    only_kept: '0',
    only_scratch: '0',
  });
  // The next build appends again.
  await quietRun(true);
  expect(await syncInto('kept.duckdb')).toEqual({ kind: 'appended', files: 1, rows: PARTITIONS.length });
});

it('builds the table whole in a warehouse whose table has the shape of before', async () => {
  await quietRun(true);
  await withDuckDB(join(dataDir, 'kept.duckdb'), async (db) => {
    await db.run('create schema _lake');
    await db.run(
      'create table _lake.snapshot_confirmations (stream varchar, "partition" varchar, snapshot_at timestamptz, confirmed_at timestamptz)',
    );
  });
  expect(await syncInto('kept.duckdb')).toEqual({
    kind: 'whole',
    why: 'not built by this version yet',
    rows: PARTITIONS.length,
  });
  expect((await compareWithScratch()).row?.only_scratch).toBe('0');
});
