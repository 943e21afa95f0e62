import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { readLakeState } from '../../src/load/lake.ts';
import { acquireLock } from '../../src/load/lock.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { buildLockOf, warehouseIn } from '../../src/warehouse/paths.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce, fewMetrics, workersWorkspace } from '../helpers/extract.ts';
import { lakeRows } from '../helpers/lake.ts';
import { runCli } from '../helpers/output.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';
import {
  downloadPrefix,
  type FaultyProxy,
  freshBucket,
  listKeys,
  parseS3Url,
  type S3TestServer,
  startFaultyProxy,
  startS3,
} from '../helpers/s3.ts';
import { MART_STREAMS } from '../helpers/truth.ts';
import { queryWarehouse } from '../helpers/warehouse.ts';

/**
 * `avalake run` with its lake on S3 and its commit log in PostgreSQL, through a proxy that fails and
 * drops S3 requests: the lake holds the same rows as a local run's, and the warehouse built from its
 * mirror the same tables.
 */

let emulator: Emulator;
let pg: Awaited<ReturnType<typeof startPostgres>>;
let s3: S3TestServer;
let proxy: FaultyProxy;
const scratch: string[] = [];
beforeAll(async () => {
  [emulator, pg, s3] = await Promise.all([startEmulator(), startPostgres(), startS3()]);
  // At most 3 spoiled attempts in a row of one request, fewer than its 6: the run must ride the faults
  // out, and cannot be unlucky enough to meet six in a row (the count is shared by concurrent requests).
  proxy = await startFaultyProxy(s3.endpoint, { failEvery: 7, dropEvery: 23, maxInARow: 3 });
}, 60_000);
afterAll(async () => {
  await proxy?.stop();
  await Promise.all([emulator?.close(), pg?.stop(), s3?.stop()]);
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

/** The bucket's lake holds the same streams and rows as a local one; returns the streams. */
async function expectSameLake(dataDir: string, catalog: string, reference: string): Promise<string[]> {
  const copy = await mkdtemp(join(tmpdir(), 'avalake-s3-copy-'));
  scratch.push(copy);
  await downloadPrefix(s3, dataDir, copy);
  const streams = [...(await readLakeState(reference)).keys()].sort();
  expect([...(await readLakeState(dataDir, catalog)).keys()].sort()).toEqual(streams);
  const [s3Rows, localRows] = await Promise.all([lakeRows(copy, streams), lakeRows(reference, streams)]);
  for (const stream of streams) expect(s3Rows[stream], stream).toEqual(localRows[stream]);
  return streams;
}

/** Columns that say when a run read a row: two runs a few seconds apart differ there and nowhere else. */
const READ_TIME =
  /^(_?run_id|_?extracted_at|_?snapshot_at|status_observed_at|first_seen_at|last_seen_at|valid_from|valid_to)$/;

/** `avalake ARGS` as a process that finds the test server through the standard AWS variables. */
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { ...s3.env, ...env });

const through = (endpoint: string) => ({ AWS_ENDPOINT_URL_S3: endpoint, AWS_ENDPOINT_URL: endpoint });

/** Every file under a directory, relative to it with `/`, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

it('run on an S3 lake through failing and dropped requests: the lake and the warehouse equal a local run’s', async () => {
  const w = coreWorkspace(emulator, (p) => {
    p.streams = [...MART_STREAMS];
    // Small flushes: many objects staged, moved and (at the run's end) compacted.
    p.flush = { rows: 200 };
    fewMetrics(p);
  });
  const reference = join(w.dir, 'reference');
  expect((await extractOnce(w.pipelinePath, reference)).status).toBe('ok');
  await buildWarehouse({ dataDir: reference });

  const dataDir = await freshBucket(s3, 'run');
  const catalog = await freshDatabase(pg.url);
  const localDir = join(w.dir, 'local');
  const run = await cli(
    ['run', w.pipelinePath, '--data-dir', dataDir, '--catalog', catalog, '--local-dir', localDir, '--json'],
    through(proxy.endpoint),
  );
  expect(run.code, run.stderr).toBe(0);
  const report = JSON.parse(run.stdout);
  expect(report.status).toBe('ok');
  expect(report.build.warehouse).toBe(join(localDir, 'warehouse.duckdb'));
  expect(report.test.failed).toEqual([]);
  // The faults reached the run, and its S3 client went through them.
  expect(proxy.stats.failed).toBeGreaterThan(0);
  expect(proxy.stats.dropped).toBeGreaterThan(0);

  // The bucket: committed files only, nothing staged, the same rows as the local lake.
  const keys = await listKeys(s3, dataDir);
  expect(keys.filter((k) => k.startsWith('lake/_staging/'))).toEqual([]);
  const state = await readLakeState(dataDir, catalog);
  const live = [...state.values()].flatMap((s) => s.files.map((f) => `lake/${f.path}`));
  // Besides them, the mark that binds the bucket's lake to its catalog: one, named by the lake's id.
  const [mark, ...more] = keys.filter((k) => k.startsWith('lake/_lake/'));
  expect({ mark, more }).toEqual({ mark: expect.stringMatching(/^lake\/_lake\/[0-9a-f-]{36}$/), more: [] });
  expect(keys.filter((k) => k.startsWith('lake/') && k !== mark).sort()).toEqual(live.sort());
  const streams = await expectSameLake(dataDir, catalog, reference);

  // The warehouse built from the mirror: every model, the same rows as the local build's.
  const models = await queryWarehouse(
    reference,
    "select table_name from information_schema.tables where table_schema = 'main' order by 1",
  );
  expect(models.length).toBeGreaterThan(15);
  for (const { table_name: name } of models) {
    const columns = (
      await queryWarehouse(
        reference,
        `select column_name from information_schema.columns where table_name = '${name}' order by 1`,
      )
    ).filter((c) => !READ_TIME.test(String(c.column_name)));
    const select = `select ${columns.map((c) => `"${c.column_name}"`).join(', ')} from "${name}" order by all`;
    const [fromS3, fromLocal] = await Promise.all([
      queryWarehouse(localDir, select),
      queryWarehouse(reference, select),
    ]);
    expect(fromS3.length, String(name)).toBe(fromLocal.length);
    expect(fromS3, String(name)).toEqual(fromLocal);
  }

  // A build of this machine's warehouse holds its lock: compaction, which deletes the files it merges,
  // waits its turn (exit 75 without --wait), as run's own compaction does.
  const building = await acquireLock(buildLockOf(warehouseIn(localDir)));
  try {
    const refused = await cli([
      'compact',
      '--data-dir',
      dataDir,
      '--catalog',
      catalog,
      '--local-dir',
      localDir,
    ]);
    expect(refused.code, refused.stderr).toBe(75);
    expect(refused.stderr).toContain('warehouse.duckdb.lock');
  } finally {
    await building.release();
  }
  // Compacting the bucket, then building again: the mirror follows, holding the live files and no others.
  const compacted = await cli(['compact', '--data-dir', dataDir, '--catalog', catalog, '--json']);
  expect(compacted.code, compacted.stderr).toBe(0);
  expect((JSON.parse(compacted.stdout) as { streams: unknown[] }).streams.length).toBeGreaterThan(0);
  const rebuilt = await cli(['build', '--data-dir', dataDir, '--catalog', catalog, '--local-dir', localDir]);
  expect(rebuilt.code, rebuilt.stderr).toBe(0);
  const after = await readLakeState(dataDir, catalog);
  const mirrored = await listFiles(join(localDir, 'mirror'));
  const { bucket, prefix } = parseS3Url(dataDir);
  expect(mirrored).toEqual(
    [...after.values()]
      .flatMap((s) => s.files.filter((f) => f.table !== 'rejects'))
      .map((f) => `${bucket}/${prefix}/lake/${f.path}`)
      .sort(),
  );
  const counts = (dir: string) =>
    queryWarehouse(dir, 'select count(*) as n, sum(reward_navax) as navax from stg_rewards');
  expect(await counts(localDir)).toEqual(await counts(reference));

  // `status` reads the bucket's lake through the catalog.
  const status = await cli(['status', '--data-dir', dataDir, '--catalog', catalog, '--json']);
  expect(status.code, status.stderr).toBe(0);
  const standing = JSON.parse(status.stdout) as { extracted: boolean; partitions: { stream: string }[] };
  expect(standing.extracted).toBe(true);
  expect(new Set(standing.partitions.map((p) => p.stream))).toEqual(new Set(streams));

  // A second run finds the snapshots unchanged: confirmed without rows, held in the catalog's state,
  // and read back as a second observation of every snapshot.
  const again = await cli(
    ['run', w.pipelinePath, '--data-dir', dataDir, '--catalog', catalog, '--local-dir', localDir, '--json'],
    through(proxy.endpoint),
  );
  expect(again.code, again.stderr).toBe(0);
  const confirmationFiles = async () =>
    [...(await readLakeState(dataDir, catalog)).values()].flatMap((s) =>
      s.files.filter((f) => f.table === 'confirmations').map((f) => `lake/${f.path}`),
    );
  const pending = [...(await readLakeState(dataDir, catalog)).values()].flatMap((s) =>
    [...s.partitions.values()].flatMap((p) => p.confirmations),
  );
  expect(pending.length).toBeGreaterThan(0);
  expect(await confirmationFiles()).toEqual([]);
  const snapshots = () =>
    queryWarehouse(localDir, 'select count(distinct snapshot_at)::integer as n from stg_validators');
  expect(await snapshots()).toEqual([{ n: 2 }]);

  // `compact` moves them to the bucket's bookkeeping; the warehouse reads them there.
  const folded = await cli(['compact', '--data-dir', dataDir, '--catalog', catalog], through(proxy.endpoint));
  expect(folded.code, folded.stderr).toBe(0);
  const confirmations = await confirmationFiles();
  expect(confirmations.length).toBeGreaterThan(0);
  expect((await listKeys(s3, dataDir)).filter((k) => k.startsWith('lake/_confirmations/')).sort()).toEqual(
    confirmations.sort(),
  );
  const built = await cli(['build', '--data-dir', dataDir, '--catalog', catalog, '--local-dir', localDir]);
  expect(built.code, built.stderr).toBe(0);
  expect(await snapshots()).toEqual([{ n: 2 }]);
}, 300_000);

it('two workers on one bucket, built from while they commit: every build succeeds, the lake equals one process’s', async () => {
  const w = workersWorkspace(emulator);
  const reference = join(w.dir, 'reference');
  expect((await extractOnce(w.pipelinePath, reference)).status).toBe('ok');
  const dataDir = await freshBucket(s3, 'workers');
  const catalog = await freshDatabase(pg.url);
  const lake = ['--data-dir', dataDir, '--catalog', catalog];
  const workers = [0, 1].map(() => cli(['extract', w.pipelinePath, ...lake, '--quiet']));
  let done = false;
  void Promise.all(workers).then(() => {
    done = true;
  });
  // Builds race the workers' commits: a file committed but not yet copied into place is read staged.
  const builds: { code: number | null; stderr: string }[] = [];
  while (!done) {
    builds.push(await cli(['build', ...lake, '--local-dir', join(w.dir, 'local')]));
  }
  for (const out of await Promise.all(workers)) expect(out.code, out.stderr).toBe(0);
  console.log(`${builds.length} builds while two workers committed to the bucket`);
  expect(builds.length).toBeGreaterThan(0);
  for (const build of builds) expect(build.code, build.stderr).toBe(0);

  await expectSameLake(dataDir, catalog, reference);
}, 300_000);

it('bad object-storage settings: exit 2 naming the setting, exit 1 for a bucket that does not answer; nothing written', async () => {
  const w = coreWorkspace(emulator);
  const dataDir = await freshBucket(s3, 'bad');
  const catalog = await freshDatabase(pg.url);
  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  const [noCatalog, badBucket, localWithLocalDir, sqlOnBucket, down, missingBucket] = await Promise.all([
    cli(['extract', w.pipelinePath, '--data-dir', dataDir]),
    cli(['build', '--data-dir', 's3://Not_A_Bucket/x', '--catalog', catalog]),
    cli(['build', '--data-dir', w.dataDir, '--local-dir', join(w.dir, 'elsewhere')]),
    cli(['sql', 'select 1', '--data-dir', dataDir]),
    cli(['extract', w.pipelinePath, '--data-dir', dataDir, '--catalog', catalog], {
      ...through(`http://127.0.0.1:${closed}`),
      AWS_MAX_ATTEMPTS: '2',
    }),
    cli(['extract', w.pipelinePath, '--data-dir', 's3://no-such-bucket-here/x', '--catalog', catalog]),
  ]);
  expect(noCatalog.code).toBe(2);
  expect(noCatalog.stderr).toContain('a lake on object storage keeps its commit log in a catalog');
  expect(badBucket.code).toBe(2);
  expect(badBucket.stderr).toContain('"Not_A_Bucket" is not a bucket name');
  expect(localWithLocalDir.code).toBe(2);
  expect(localWithLocalDir.stderr).toContain('--local-dir is for a lake on object storage');
  expect(sqlOnBucket.code).toBe(2);
  expect(sqlOnBucket.stderr).toContain('the warehouse is a local file');
  for (const out of [down, missingBucket]) {
    expect(out.code, out.stderr).toBe(1);
    expect(out.stderr).toContain('HeadBucket of s3://');
    expect(out.stderr).not.toContain(s3.env.AWS_SECRET_ACCESS_KEY);
    expect(out.stderr).not.toMatch(/^\s+at\s/m);
  }
  expect(missingBucket.stderr).toContain('no-such-bucket-here');
  expect(await listKeys(s3, dataDir)).toEqual([]);
  expect(existsSync(w.dataDir)).toBe(false);
  expect(existsSync(join(w.dir, 'elsewhere'))).toBe(false);
}, 120_000);
