import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { readStatus } from '../../src/cli/status.ts';
import { readLakeState } from '../../src/load/index.ts';
import { openLake } from '../../src/load/lake.ts';
import { lakePaths } from '../../src/load/layout.ts';
import { repairLake } from '../../src/load/repair.ts';
import { STREAM } from './fixtures/crash-shape.ts';
import { startWriter } from './fixtures/writer-process.ts';

/**
 * `repairLake` judges a lake as the next writer's open leaves it. A writer killed between a compaction's
 * commit record and the move of its stream's link leaves the merged files in a generation the link does
 * not point at yet: they only look missing, and recovery moves the link. Dropping them would rewind a
 * healthy stream and leave them behind in its folders, beside the rows read again.
 */

const fixture = fileURLToPath(new URL('./fixtures/compact-killed-writer.ts', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Lake-relative paths of the Parquet files a glob over the stream's folder reads. */
const globbed = (dataDir: string) => {
  const lakeDir = lakePaths(dataDir).lakeDir;
  return readdirSync(join(lakeDir, STREAM), { recursive: true, withFileTypes: true })
    .filter((e) => e.name.endsWith('.parquet'))
    .map((e) => relative(lakeDir, join(e.parentPath, e.name)).replace(/^_generations\/[^/]+\/g\d+/, STREAM))
    .sort();
};

it('leaves alone a compaction whose writer was killed before it moved the link, as status does', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'avalake-repair-')), 'data');
  dirs.push(dataDir);
  const writer = startWriter(fixture, [dataDir]);
  await writer.ready;
  const deadline = Date.now() + 30_000;
  while (writer.step() !== 'recorded' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  expect(writer.step()).toBe('recorded');
  await writer.kill();
  const paths = lakePaths(dataDir);
  expect(readlinkSync(paths.streamDir(STREAM))).toBe(join('_generations', STREAM, 'g0000000000'));
  const before = (await readLakeState(dataDir)).get(STREAM);
  const checkpoints = [...(before?.partitions.values() ?? [])].map((p) => p.checkpoint);
  expect(checkpoints).toEqual([{ next: 30 }, { next: 30 }]);

  // Nor does status, which reads without recovering, take the merged file for damage.
  expect((await readStatus(dataDir)).damaged).toEqual([]);
  expect(await repairLake({ dataDir, dryRun: true })).toEqual([]);
  expect(await repairLake({ dataDir })).toEqual([]);
  const after = (await readLakeState(dataDir)).get(STREAM);
  expect([...(after?.partitions.values() ?? [])].map((p) => p.checkpoint)).toEqual(checkpoints);
  const named = (after?.files ?? []).filter((f) => f.table === 'data').map((f) => f.path);
  expect(named).toHaveLength(1);
  expect(globbed(dataDir)).toEqual(named.sort());

  // The next writer finds the lake whole: the files it names, and no others.
  const l = await openLake({ dataDir });
  await l.close();
  expect(globbed(dataDir)).toEqual(named.sort());
}, 60_000);
