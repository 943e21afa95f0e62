import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { RunSummary } from '../../src/extract/run.ts';
import { openCatalog } from '../../src/load/catalog.ts';
import { createCommitLog } from '../../src/load/commit.ts';
import { lakePaths, readLakeState } from '../../src/load/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce, requestsOf } from '../helpers/extract.ts';
import { expectLakeAsReference, lakeRows } from '../helpers/lake.ts';
import { runCli } from '../helpers/output.ts';
import { freshDatabase, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import {
  downloadPrefix,
  freshBucket,
  listKeys,
  readObject,
  type S3TestServer,
  startS3,
  writeObject,
} from '../helpers/s3.ts';

let emulator: Emulator;
let server: TestPostgres;
let s3: S3TestServer;
beforeAll(async () => {
  [emulator, server, s3] = await Promise.all([startEmulator(), startPostgres(), startS3()]);
}, 60_000);
afterAll(async () => {
  await emulator?.close();
  await server?.stop();
  await s3?.stop();
});

it('catalog-import moves a lake of one box into a catalog; workers with it go on where the box stood', async () => {
  const box = coreWorkspace(emulator);
  const reference = join(box.dir, 'reference'); // the same pipeline, on the box all along
  expect((await extractOnce(box.pipelinePath, box.dataDir)).status).toBe('ok');
  expect((await extractOnce(box.pipelinePath, reference)).status).toBe('ok');
  const before = await readLakeState(box.dataDir);

  const catalog = await freshDatabase(server.url);
  const moved = await runCli(['catalog-import', '--data-dir', box.dataDir, '--catalog', catalog]);
  expect(moved.code, moved.stderr).toBe(0);
  expect(moved.stdout).toContain(`moved the commit log of ${before.size} streams`);
  expect(existsSync(join(box.dataDir, 'lake', '_catalog'))).toBe(true);
  expect(existsSync(join(box.dataDir, 'lake', '_commits'))).toBe(false);
  expect(existsSync(join(box.dataDir, 'lake', '_commits-imported'))).toBe(true);
  // The catalog holds what the box's log held: every partition's checkpoint, every file.
  const adopted = await readLakeState(box.dataDir, catalog);
  expect([...adopted.keys()].sort()).toEqual([...before.keys()].sort());
  for (const [stream, state] of before) {
    expect(adopted.get(stream)?.files, stream).toEqual(state.files);
    expect(adopted.get(stream)?.partitions, stream).toEqual(state.partitions);
  }

  // A day later, a worker on the catalog reads what is new, as the box would have.
  emulator.advance(86_400);
  const worker = await runCli([
    'extract',
    box.pipelinePath,
    '--data-dir',
    box.dataDir,
    '--catalog',
    catalog,
    '--json',
  ]);
  expect(worker.code, worker.stderr).toBe(0);
  const onBox = await extractOnce(box.pipelinePath, reference);
  expect(onBox.status).toBe('ok');
  expect(requestsOf(JSON.parse(worker.stdout) as RunSummary)).toBe(requestsOf(onBox));
  await expectLakeAsReference(box.dataDir, reference, catalog);

  // Moved once: again, or without the catalog, it is refused (exit 2).
  const again = await runCli(['catalog-import', '--data-dir', box.dataDir, '--catalog', catalog]);
  expect(again.code).toBe(2);
  expect(again.stderr).toContain('keeps its commit log in a catalog already');
  expect((await runCli(['status', '--data-dir', box.dataDir])).code).toBe(2);
  // Another box's lake into the same catalog: its streams are taken, so nothing of it is adopted.
  const other = await runCli(['catalog-import', '--data-dir', reference, '--catalog', catalog]);
  expect(other.code).toBe(2);
  expect(other.stderr).toMatch(/already holds the stream \w+/);
  expect(existsSync(join(reference, 'lake', '_catalog'))).toBe(false);
  expect(existsSync(join(reference, 'lake', '_commits'))).toBe(true);
}, 180_000);

it('catalog-import run again after a crash between the catalog and the mark finishes the move', async () => {
  const box = coreWorkspace(emulator);
  expect((await extractOnce(box.pipelinePath, box.dataDir)).status).toBe('ok');
  const catalog = await freshDatabase(server.url);
  // What the import does before it marks the lake, then stops (as if killed).
  const log = createCommitLog(lakePaths(box.dataDir));
  await log.open();
  await log.fold(1);
  const store = await openCatalog(catalog);
  await store.adopt(log.streams().flatMap((s) => log.state(s) ?? []));
  await store.close();
  expect(existsSync(join(box.dataDir, 'lake', '_catalog'))).toBe(false);

  const moved = await runCli(['catalog-import', '--data-dir', box.dataDir, '--catalog', catalog]);
  expect(moved.code, moved.stderr).toBe(0);
  expect(existsSync(join(box.dataDir, 'lake', '_catalog'))).toBe(true);
  const status = await runCli(['status', '--data-dir', box.dataDir, '--catalog', catalog]);
  expect(status.code, status.stderr).toBe(0);
}, 120_000);

it('catalog-import --to moves the files to a bucket too: workers go on there, the box’s directory is closed', async () => {
  const box = coreWorkspace(emulator);
  const reference = join(box.dir, 'reference');
  expect((await extractOnce(box.pipelinePath, box.dataDir)).status).toBe('ok');
  expect((await extractOnce(box.pipelinePath, reference)).status).toBe('ok');
  const files = [...(await readLakeState(box.dataDir)).values()].reduce((n, s) => n + s.files.length, 0);
  const catalog = await freshDatabase(server.url);
  const bucket = await freshBucket(s3, 'moved');
  // Both boxes have built their warehouse.
  for (const dataDir of [box.dataDir, reference])
    expect((await runCli(['build', '--data-dir', dataDir])).code).toBe(0);

  const moved = await runCli(
    ['catalog-import', '--data-dir', box.dataDir, '--catalog', catalog, '--to', bucket],
    s3.env,
  );
  expect(moved.code, moved.stderr).toBe(0);
  expect(moved.stdout).toContain(`uploaded ${files} of its files to ${bucket}`);
  // The box's directory is no lake any more: every command says where it went.
  const local = await runCli(['status', '--data-dir', box.dataDir, '--catalog', catalog]);
  expect(local.code).toBe(2);
  expect(local.stderr).toContain(`its lake moved to ${bucket}`);

  emulator.advance(86_400);
  const localDir = await mkdtemp(join(tmpdir(), 'avalake-moved-'));
  try {
    const worker = await runCli(
      [
        'extract',
        box.pipelinePath,
        '--data-dir',
        bucket,
        '--catalog',
        catalog,
        '--local-dir',
        localDir,
        '--json',
      ],
      s3.env,
    );
    expect(worker.code, worker.stderr).toBe(0);
    const onBox = await extractOnce(box.pipelinePath, reference);
    expect(requestsOf(JSON.parse(worker.stdout) as RunSummary)).toBe(requestsOf(onBox));
    // The bucket's lake holds what the box would hold, row for row.
    await downloadPrefix(s3, bucket, localDir);
    const streams = [...(await readLakeState(reference)).keys()];
    expect([...(await readLakeState(bucket, catalog)).keys()].sort()).toEqual([...streams].sort());
    expect(await lakeRows(localDir, streams)).toEqual(await lakeRows(reference, streams));
    // The box's warehouse goes on from the lake on the bucket (the box's directory as the local one):
    // its first build does what the box's would, model for model, from the last build.
    const modes = (stdout: string) =>
      Object.fromEntries(
        (JSON.parse(stdout) as { built: { name: string; mode: string }[] }).built.map((b) => [
          b.name,
          b.mode,
        ]),
      );
    const fromBucket = await runCli(
      ['build', '--data-dir', bucket, '--catalog', catalog, '--local-dir', box.dataDir, '--json'],
      s3.env,
    );
    expect(fromBucket.code, fromBucket.stderr).toBe(0);
    const onTheBox = await runCli(['build', '--data-dir', reference, '--json']);
    expect(modes(fromBucket.stdout)).toEqual(modes(onTheBox.stdout));
    expect(Object.values(modes(fromBucket.stdout))).toContain('incremental');
    expect(JSON.parse(fromBucket.stdout).startedFrom).not.toBe('scratch');
  } finally {
    await rm(localDir, { recursive: true, force: true });
  }
}, 180_000);

it('catalog-import --to refuses a prefix where another file has one of the lake’s names, before moving anything', async () => {
  const box = coreWorkspace(emulator);
  expect((await extractOnce(box.pipelinePath, box.dataDir)).status).toBe('ok');
  const catalog = await freshDatabase(server.url);
  const bucket = await freshBucket(s3, 'taken');
  const file = [...(await readLakeState(box.dataDir)).values()].flatMap((s) => s.files)[0];
  if (!file) throw new Error('the extract committed no file');
  // Another lake's file of that name and size, one byte apart: its size alone would pass it as this one.
  const other = await readFile(join(box.dataDir, 'lake', ...file.path.split('/')));
  const middle = Math.floor(other.length / 2);
  other[middle] = (other[middle] ?? 0) ^ 0xff;
  // The data directory's lake is under `lake/` in the bucket's prefix.
  const key = `lake/${file.path}`;
  await writeObject(s3, bucket, key, other);

  const refused = await runCli(
    ['catalog-import', '--data-dir', box.dataDir, '--catalog', catalog, '--to', bucket],
    s3.env,
  );
  expect(refused.code, refused.stdout).toBe(2);
  expect(refused.stderr).toContain(`--to ${bucket}: the lake's file ${file.path} is there already`);
  expect(refused.stderr).toContain('nothing was moved');
  // Nothing moved: the object is as it was and alone, the catalog has no stream, the box's lake is its own.
  expect(await listKeys(s3, bucket)).toEqual([key]);
  expect((await readObject(s3, bucket, key)).equals(other)).toBe(true);
  expect((await readLakeState(box.dataDir, catalog)).size).toBe(0);
  const status = await runCli(['status', '--data-dir', box.dataDir]);
  expect(status.code, status.stderr).toBe(0);
}, 120_000);

it('catalog-import --to into a catalog that holds the lake’s streams refuses before uploading anything', async () => {
  const box = coreWorkspace(emulator);
  const other = join(box.dir, 'other'); // another box of the same pipeline, its streams in the catalog
  expect((await extractOnce(box.pipelinePath, box.dataDir)).status).toBe('ok');
  expect((await extractOnce(box.pipelinePath, other)).status).toBe('ok');
  const catalog = await freshDatabase(server.url);
  const first = await runCli(['catalog-import', '--data-dir', other, '--catalog', catalog]);
  expect(first.code, first.stderr).toBe(0);
  const bucket = await freshBucket(s3, 'held');

  const refused = await runCli(
    ['catalog-import', '--data-dir', box.dataDir, '--catalog', catalog, '--to', bucket],
    s3.env,
  );
  expect(refused.code, refused.stdout).toBe(2);
  expect(refused.stderr).toMatch(/already holds the stream \w+/);
  expect(refused.stderr.trim().split('\n')).toHaveLength(1);
  // Nothing moved: not one object under the prefix, the box's lake its own as it was.
  expect(await listKeys(s3, bucket)).toEqual([]);
  expect(existsSync(join(box.dataDir, 'lake', '_moved'))).toBe(false);
  expect(existsSync(join(box.dataDir, 'lake', '_commits'))).toBe(true);
  const status = await runCli(['status', '--data-dir', box.dataDir]);
  expect(status.code, status.stderr).toBe(0);
}, 120_000);

it('catalog-import --to of a copy of the same box to another prefix is refused: the catalog keeps the lake it moved', async () => {
  const box = coreWorkspace(emulator);
  expect((await extractOnce(box.pipelinePath, box.dataDir)).status).toBe('ok');
  const copy = join(box.dir, 'copy');
  await cp(box.dataDir, copy, { recursive: true });
  const catalog = await freshDatabase(server.url);
  const [first, second] = [await freshBucket(s3, 'first'), await freshBucket(s3, 'second')];
  const moved = await runCli(
    ['catalog-import', '--data-dir', box.dataDir, '--catalog', catalog, '--to', first],
    s3.env,
  );
  expect(moved.code, moved.stderr).toBe(0);

  // The same states (the copy is the box's): before lakes had ids, this passed as a re-run after a crash,
  // and workers on the second prefix then wrote there while those on the first broke.
  const refused = await runCli(
    ['catalog-import', '--data-dir', copy, '--catalog', catalog, '--to', second],
    s3.env,
  );
  expect(refused.code, refused.stderr).toBe(2);
  const quoted = (url: string) => url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  expect(refused.stderr).toMatch(
    new RegExp(
      `keeps the commit log of the lake at ${quoted(first)}/lake, and ${quoted(second)}/lake holds none of its files`,
    ),
  );
  expect(await listKeys(s3, second)).toEqual([]);
  expect(existsSync(join(copy, 'lake', '_moved'))).toBe(false);
}, 120_000);

it('catalog-import --to with a catalog that names no database is refused (exit 2) before uploading anything', async () => {
  const box = coreWorkspace(emulator);
  expect((await extractOnce(box.pipelinePath, box.dataDir)).status).toBe('ok');
  const bucket = await freshBucket(s3, 'no-catalog');
  // The server is there, the database is not: the catalog cannot be opened.
  const wrong = new URL(server.url);
  wrong.pathname = '/avalake_no_such_database';

  const failed = await runCli(
    ['catalog-import', '--data-dir', box.dataDir, '--catalog', wrong.toString(), '--to', bucket],
    s3.env,
  );
  // Configuration to fix, not a server to wait for: exit 2, as for any usage mistake; the same catalog
  // given to status and extract says the same.
  expect(failed.code, failed.stderr).toBe(2);
  expect(failed.stderr).toMatch(
    /^avalake: the catalog \S+avalake_no_such_database refused avalake: .*does not exist; check the database name, or create the database/,
  );
  expect(failed.stderr.trim().split('\n')).toHaveLength(1);
  for (const command of [
    ['status', '--data-dir', join(box.dir, 'worker'), '--catalog', wrong.toString()],
    [
      'extract',
      box.pipelinePath,
      '--data-dir',
      join(box.dir, 'worker'),
      '--catalog',
      wrong.toString(),
      '--json',
    ],
  ]) {
    const refused = await runCli(command);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('refused avalake');
  }
  expect(await listKeys(s3, bucket)).toEqual([]);
  expect(existsSync(join(box.dataDir, 'lake', '_moved'))).toBe(false);
  const status = await runCli(['status', '--data-dir', box.dataDir]);
  expect(status.code, status.stderr).toBe(0);
}, 120_000);

it('catalog-import --to run again after a crash between the catalog and the mark finishes the move', async () => {
  const box = coreWorkspace(emulator);
  expect((await extractOnce(box.pipelinePath, box.dataDir)).status).toBe('ok');
  const catalog = await freshDatabase(server.url);
  const bucket = await freshBucket(s3, 'rerun');
  // What the import does before it marks the lake, then stops (as if killed): every file uploaded, the
  // states adopted.
  const log = createCommitLog(lakePaths(box.dataDir));
  await log.open();
  await log.fold(1);
  const states = log.streams().flatMap((s) => log.state(s) ?? []);
  const files = states.flatMap((s) => s.files);
  for (const file of files)
    await writeObject(
      s3,
      bucket,
      `lake/${file.path}`,
      await readFile(join(box.dataDir, 'lake', ...file.path.split('/'))),
    );
  const store = await openCatalog(catalog);
  await store.adopt(states);
  await store.close();

  const moved = await runCli(
    ['catalog-import', '--data-dir', box.dataDir, '--catalog', catalog, '--to', bucket],
    s3.env,
  );
  expect(moved.code, moved.stderr).toBe(0);
  expect(moved.stdout).toContain(`uploaded 0 of its files to ${bucket}`);
  expect(existsSync(join(box.dataDir, 'lake', '_moved'))).toBe(true);
  expect((await readLakeState(bucket, catalog)).size).toBe(states.length);
}, 120_000);
