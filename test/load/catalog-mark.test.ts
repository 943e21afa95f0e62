import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { openCatalog } from '../../src/load/catalog.ts';
import { localCommitLogKind } from '../../src/load/commit-log-kind.ts';
import { openLake, readLakeState } from '../../src/load/lake.ts';
import { checkLakeIdentity, LakeMismatchError, markLakeIdentity } from '../../src/load/lake-identity.ts';
import { diskStorage } from '../../src/load/storage.ts';
import { lake } from '../../src/schemas/lake.ts';
import { runCli } from '../helpers/output.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';

/**
 * A catalog keeps one lake (load/lake-identity.ts): opened over a directory that is not that lake, it
 * is refused before anything is read or written there.
 */
let server: Awaited<ReturnType<typeof startPostgres>>;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const dirs: string[] = [];
const dataDir = async (name: string) => {
  const dir = await mkdtemp(join(tmpdir(), `avalake-mark-${name}-`));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Commits rows `ids` of one partition into the lake of `dir` kept by `catalog`. */
async function commit(dir: string, catalog: string, ids: number[]) {
  const writer = await openLake({ dataDir: dir, runId: `run-${ids[0]}`, catalog });
  const flush = writer.begin({
    stream: 'transfers',
    partition: { network: 'fuji', chain: '43113', address: '0xabc' },
    schema: z.object({ id: lake.int64() }),
  });
  await flush.append(ids.map((id) => ({ id })));
  await flush.commit({ next: ids.length });
  await writer.close();
}

/** Every entry under a directory, relative to it. */
const entries = (dir: string) =>
  existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).sort() : [];

it('a catalog opened over a directory holding no lake is refused, and the directory stays unmarked', async () => {
  const catalog = await freshDatabase(server.url);
  const home = await dataDir('home');
  const other = await dataDir('other');
  await commit(home, catalog, [1, 2]);
  expect(await localCommitLogKind(home)).toBe('catalog');

  // The same catalog over another directory: a mistyped --data-dir.
  const refused = openLake({ dataDir: other, runId: 'run-other', catalog });
  await expect(refused).rejects.toBeInstanceOf(LakeMismatchError);
  await expect(refused).rejects.toThrow(
    new RegExp(`keeps the commit log of the lake at ${home}/lake, and ${other}/lake holds none of its files`),
  );
  expect(entries(other)).toEqual([]);
  expect(await localCommitLogKind(other)).toBe('none');
});

it("a catalog opened over another catalog's lake is refused, naming where its own lake is", async () => {
  const [first, second] = [await freshDatabase(server.url), await freshDatabase(server.url)];
  const [lakeOfFirst, lakeOfSecond] = [await dataDir('first'), await dataDir('second')];
  await commit(lakeOfFirst, first, [1]);
  await commit(lakeOfSecond, second, [10, 11]);
  const before = entries(lakeOfSecond);

  await expect(openLake({ dataDir: lakeOfSecond, runId: 'run-x', catalog: first })).rejects.toThrow(
    new RegExp(
      `${lakeOfSecond}/lake is not the lake the catalog .* keeps \\(that one is at ${lakeOfFirst}/lake\\)`,
    ),
  );
  // A fresh catalog given a lake another one keeps: it would read every stream again beside its files.
  const fresh = await freshDatabase(server.url);
  await expect(openLake({ dataDir: lakeOfSecond, runId: 'run-y', catalog: fresh })).rejects.toThrow(
    /is the lake of another catalog, and the catalog .* keeps none of its commits/,
  );
  expect(entries(lakeOfSecond)).toEqual(before);
  expect([
    ...((await readLakeState(lakeOfSecond, second)).get('transfers')?.partitions.values() ?? []),
  ]).toEqual([expect.objectContaining({ rows: 2 })]);
});

it.each([
  ['before the worker binds the catalog', false],
  ['after the worker binds the catalog, before it marks the lake', true],
])(
  'a reader opening a new lake beside a worker starting on it: read %s, it is the same lake',
  async (_, bindFirst) => {
    const url = await freshDatabase(server.url);
    const [reader, worker] = [await openCatalog(url), await openCatalog(url)];
    try {
      const home = await dataDir('race');
      const lakeFiles = diskStorage(join(home, 'lake'));
      const binding = { id: 'lake-being-started', location: lakeFiles.where };
      if (bindFirst) await worker.bindLake(binding);
      // The worker's steps land between the reader's look for its mark and its listing of the marks: what
      // a build racing the first workers on a bucket met in CI.
      const racing = {
        ...lakeFiles,
        async list(folder: string) {
          if (!bindFirst) await worker.bindLake(binding);
          await markLakeIdentity(worker, lakeFiles);
          return lakeFiles.list(folder);
        },
      };
      expect(await checkLakeIdentity(reader, racing)).toBe(true);
      expect(entries(home)).toEqual(['lake', 'lake/_lake', 'lake/_lake/lake-being-started']);
    } finally {
      await Promise.all([reader.close(), worker.close()]);
    }
  },
);

it('a lake and a catalog of an earlier avalake, neither marked, are bound when first opened together', async () => {
  const catalog = await freshDatabase(server.url);
  const home = await dataDir('home');
  await commit(home, catalog, [1]);
  // As an avalake before lake ids left them.
  const admin = new pg.Client({ connectionString: catalog });
  await admin.connect();
  try {
    await admin.query('delete from avalake.lake');
    await rm(join(home, 'lake', '_lake'), { recursive: true });
    await commit(home, catalog, [2, 3]);
    const { rows } = await admin.query('select lake_id, location from avalake.lake');
    expect(rows).toEqual([{ lake_id: expect.any(String), location: `${home}/lake` }]);
    expect(readdirSync(join(home, 'lake', '_lake'))).toEqual([rows[0].lake_id]);
  } finally {
    await admin.end();
  }
});

it('build and status over a directory that is not the catalog’s lake exit 2, reading and writing nothing there', async () => {
  const catalog = await freshDatabase(server.url);
  const home = await dataDir('home');
  const other = await dataDir('other');
  await commit(home, catalog, [1, 2]);
  await commit(other, await freshDatabase(server.url), [7]); // another catalog's lake
  const before = entries(other);

  await expect(readLakeState(other, catalog)).rejects.toBeInstanceOf(LakeMismatchError);
  expect((await readLakeState(home, catalog)).get('transfers')?.files).toHaveLength(1);
  for (const command of ['build', 'status']) {
    const refused = await runCli([command, '--data-dir', other, '--catalog', catalog]);
    expect(refused.code, `${command}: ${refused.stderr}`).toBe(2);
    expect(refused.stderr).toContain(`${other}/lake is not the lake the catalog`);
    expect(refused.stderr).toContain(`that one is at ${home}/lake`);
  }
  expect(entries(other)).toEqual(before);
  // The catalog's own lake builds.
  const built = await runCli(['build', '--data-dir', home, '--catalog', catalog]);
  expect(built.code, built.stderr).toBe(0);
});

it("a lake missing files its catalog's commits name asks for the right data directory before a backup", async () => {
  const catalog = await freshDatabase(server.url);
  const home = await dataDir('home');
  await commit(home, catalog, [1]);
  // The lake's folders gone, its mark kept (a partial copy, a restore that missed them).
  for (const name of readdirSync(join(home, 'lake')))
    if (!['_lake', '_catalog'].includes(name)) await rm(join(home, 'lake', name), { recursive: true });
  await expect(openLake({ dataDir: home, runId: 'run-again', catalog })).rejects.toThrow(
    /transfers.*if .* is not the lake this commit log keeps \(a mistyped --data-dir, or the catalog of another lake\), name the right one; else restore/,
  );
});
