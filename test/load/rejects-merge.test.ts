import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { MERGE_FILES } from '../../src/load/compact.ts';
import { type Lake, openLake, readLakeState } from '../../src/load/lake.ts';
import { lake as lakeTypes } from '../../src/schemas/lake.ts';
import { columnTypes, query } from './duck.ts';

const STREAM = 'erc20_transfers';
const partitions = [
  { network: 'mainnet', chain: '43114', address: '0xa' },
  { network: 'mainnet', chain: '43114', address: '0xb' },
];
const schema = z.object({ id: lakeTypes.int64(), note: z.string() });
const FOLDER = join('lake', '_rejects', `stream=${STREAM}`, 'network=mainnet');

let dataDir: string;
let lake: Lake | undefined;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-rejects-'));
});
afterEach(async () => {
  await lake?.close();
  lake = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

/** `runs` runs that each refuse one record of every partition (an upstream change every run trips over). */
async function runsWithRejects(l: Lake, runs: number, from = 0) {
  for (let run = from; run < from + runs; run++)
    for (const partition of partitions) {
      const flush = l.begin({ stream: STREAM, partition, schema });
      await flush.append([{ id: run, note: 'fine' }]);
      await flush.reject([
        { raw: `{"id":${run},"address":"${partition.address}"}`, reason: 'type: unknown value' },
      ]);
      await flush.commit({ next: run + 1 });
    }
}

const rejectsFiles = async () =>
  ((await readLakeState(dataDir)).get(STREAM)?.files ?? []).filter((f) => f.table === 'rejects');
const glob = () => `read_parquet('${join(dataDir, FOLDER)}/*.parquet')`;

it('merges the rejects files every run leaves, when the log folds, keeping every reject and its types', async () => {
  lake = await openLake({ dataDir, runId: 'rejects-test' });
  await runsWithRejects(lake, 1);
  const typesBefore = await columnTypes(glob());
  const runs = 3 * MERGE_FILES;
  await runsWithRejects(lake, runs - 1, 1);
  await lake.close();
  lake = undefined;

  // The folds of those commits merged the tiny files, a tier at a time: far fewer than one per flush.
  const files = await rejectsFiles();
  expect(files.length).toBeLessThan(MERGE_FILES);
  expect(files.some((f) => f.replaces && f.replaces.length >= MERGE_FILES)).toBe(true);
  // The folder holds exactly the files the state names (the replaced ones deleted).
  expect((await readdir(join(dataDir, FOLDER))).sort()).toEqual(
    files.map((f) => f.path.split('/').at(-1)).sort(),
  );
  // Every reject once, as written, with the same columns and types.
  const rows = await query(
    `select raw, reason, json_extract_string("partition", '$.address') as address from ${glob()} order by raw`,
  );
  const expected = Array.from({ length: runs }, (_, run) =>
    partitions.map((p) => ({
      raw: `{"id":${run},"address":"${p.address}"}`,
      reason: 'type: unknown value',
      address: p.address,
    })),
  )
    .flat()
    .sort((a, b) => (a.raw < b.raw ? -1 : 1));
  expect(rows).toEqual(expected);
  expect(await columnTypes(glob())).toEqual(typesBefore);
  // The state's count of rejects per partition is unchanged by merging.
  const state = (await readLakeState(dataDir)).get(STREAM);
  expect([...(state?.partitions.values() ?? [])].map((p) => p.rejects)).toEqual([runs, runs]);
});

it('removes a rejects file no state names when the lake opens (a merge whose fold never committed)', async () => {
  lake = await openLake({ dataDir, runId: 'rejects-test' });
  await runsWithRejects(lake, 2);
  await lake.close();
  lake = undefined;
  const named = (await rejectsFiles()).map((f) => f.path.split('/').at(-1)).sort();
  const [first] = named;
  // As a fold killed after its merge and before its state: the merged file is in the folder, unnamed.
  await copyFile(join(dataDir, FOLDER, first as string), join(dataDir, FOLDER, 'part-0000000099-m0.parquet'));
  lake = await openLake({ dataDir, runId: 'rejects-test' });
  expect((await readdir(join(dataDir, FOLDER))).sort()).toEqual(named);
  const [count] = await query(`select count(*)::integer as n from ${glob()}`);
  expect(count?.n).toBe(2 * partitions.length);
});
