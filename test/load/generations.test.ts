import { existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LakeCorruptError } from '../../src/load/errors.ts';
import { createGenerations } from '../../src/load/generations.ts';
import { lakePaths } from '../../src/load/layout.ts';
import { emptyState, type StreamState } from '../../src/load/state.ts';

/**
 * A stream whose first commit is in the commit log while its files are still staged: with a shared
 * catalog, what a writer SIGKILLed between recording the commit and making the stream's folder leaves,
 * as the next writer finds it before the killed one's lease runs out (its staged files are not yet
 * rolled forward). The catalog's SIGKILL test (test/load/catalog-crash.test.ts) met it now and then.
 */

const STREAM = 'crashy';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A lake with the first commit of STREAM recorded, its data file staged (or not) and no folder yet. */
function firstCommitRecorded(staged: boolean) {
  const dataDir = mkdtempSync(join(tmpdir(), 'avalake-generations-'));
  dirs.push(dataDir);
  const paths = lakePaths(dataDir);
  mkdirSync(paths.lakeDir, { recursive: true });
  const name = 'part-0000000001-0.parquet';
  if (staged) {
    mkdirSync(paths.stagingDir(STREAM), { recursive: true });
    writeFileSync(join(paths.stagingDir(STREAM), name), 'parquet bytes');
  }
  const state: StreamState = {
    ...emptyState(STREAM),
    seq: 1,
    nextSeq: 2,
    files: [
      {
        path: `${STREAM}/network=fuji/${name}`,
        table: 'data',
        rows: 1,
        bytes: 13,
        sha256: '0'.repeat(64),
        seq: 1,
      },
    ],
  };
  const generations = createGenerations(
    paths,
    () => state,
    () => undefined,
  );
  return { paths, generations };
}

it("makes the stream's folder when its first commit's files are still staged, as their writer would have", async () => {
  const { paths, generations } = firstCommitRecorded(true);
  await generations.settle(STREAM);
  expect(readlinkSync(paths.streamDir(STREAM))).toBe(join('_generations', STREAM, 'g0000000000'));
  expect(existsSync(paths.generationDir(STREAM, 0))).toBe(true);
});

it('still says the lake is damaged when committed files are neither in their folder nor staged', async () => {
  const { generations } = firstCommitRecorded(false);
  await expect(generations.settle(STREAM)).rejects.toThrow(LakeCorruptError);
  await expect(generations.settle(STREAM)).rejects.toThrow(
    /says its files are in _generations\/crashy\/g0000000000, which is missing/,
  );
});
