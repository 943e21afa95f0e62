import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { type LiveFile, readLakeState } from '../../src/load/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, fewMetrics } from '../helpers/extract.ts';
import { type CliResult, runCli } from '../helpers/output.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';
import {
  type FaultyProxy,
  freshBucket,
  listKeys,
  parseS3Url,
  readObject,
  type S3TestServer,
  s3Client,
  startFaultyProxy,
  startS3,
  writeObject,
} from '../helpers/s3.ts';
import { queryWarehouse } from '../helpers/warehouse.ts';

/**
 * An object of a bucket's lake deleted (a lifecycle rule expired it, `aws s3 rm`) or replaced by a
 * shorter one, on a lake whose commit log is in PostgreSQL: each command names the object in one line,
 * says what can put it right there (a copy, or `avalake repair`: test/cli/catalog-repair.test.ts), exits
 * 1, and leaves the lake, its checkpoints and the warehouse as they were.
 */

const DAY = 86_400;
const CUT_BYTES = 1000;

let emulator: Emulator;
let pg: Awaited<ReturnType<typeof startPostgres>>;
let s3: S3TestServer;
let counter: FaultyProxy;
beforeAll(async () => {
  [emulator, pg, s3] = await Promise.all([startEmulator(), startPostgres(), startS3()]);
  // No faults: it counts the requests a command makes.
  counter = await startFaultyProxy(s3.endpoint, {});
}, 60_000);
afterAll(async () => {
  await counter?.stop();
  await Promise.all([emulator?.close(), pg?.stop(), s3?.stop()]);
});

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { ...s3.env, ...env });

/** A bucket lake extracted on two days, with a compaction between: day one's commits folded, day two's not. */
async function bucketLake() {
  const w = coreWorkspace(emulator, (p) => {
    p.flush = { rows: 200 };
    fewMetrics(p);
  });
  const dataDir = await freshBucket(s3, 'damage');
  const catalog = await freshDatabase(pg.url);
  const lake = ['--data-dir', dataDir, '--catalog', catalog];
  const extract = async () => {
    const out = await cli(['extract', w.pipelinePath, ...lake, '--quiet']);
    expect(out.code, out.stderr).toBe(0);
  };
  await extract();
  const compacted = await cli(['compact', ...lake]);
  expect(compacted.code, compacted.stderr).toBe(0);
  const folded = await committedFiles(dataDir, catalog);
  emulator.advance(DAY);
  await extract();
  return { ...w, dataDir, catalog, lake, folded };
}

type Committed = LiveFile & { stream: string };

/** Every live data file the catalog names, with its stream. */
async function committedFiles(dataDir: string, catalog: string): Promise<Committed[]> {
  const states = await readLakeState(dataDir, catalog);
  return [...states].flatMap(([stream, state]) =>
    state.files.filter((f) => f.table === 'data').map((f) => ({ ...f, stream })),
  );
}

/** The object of a lake file: deleted, or (`cutTo`) replaced by its first bytes. Returns its bytes. */
async function damage(dataDir: string, file: LiveFile, cutTo?: number): Promise<Buffer> {
  const bytes = await readObject(s3, dataDir, `lake/${file.path}`);
  if (cutTo !== undefined) {
    await writeObject(s3, dataDir, `lake/${file.path}`, bytes.subarray(0, cutTo));
    return bytes;
  }
  const { bucket, prefix } = parseS3Url(dataDir);
  const client = s3Client(s3.endpoint);
  try {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}/lake/${file.path}` }));
  } finally {
    client.destroy();
  }
  return bytes;
}

/** One line on stderr, no stack, exit 1. */
function expectOneLineFailure(out: CliResult): void {
  expect(out.code, out.stderr).toBe(1);
  expect(out.stderr.trimEnd().split('\n'), out.stderr).toHaveLength(1);
  expect(out.stderr).not.toMatch(/^\s+at\s/m);
}

/** What the commit log and the bucket hold: unchanged by a command that refused. */
const lakeAsItIs = async (dataDir: string, catalog: string) => ({
  keys: await listKeys(s3, dataDir),
  heads: [...(await readLakeState(dataDir, catalog))].map(([stream, s]) => [
    stream,
    [...s.partitions.values()].map((p) => [p.seq, p.checkpoint]),
  ]),
});

/** What a catalog's bucket lake tells its user to do about a damaged object. */
const BUCKET_REMEDY =
  'restore it from a backup or from the mirror of a host that built from the bucket (mirror/<bucket>/<prefix>/lake/ under its --local-dir), or, without one, run "avalake repair" to drop it and have the next run read its partitions again';

it('extract and compact name a deleted object and say to restore it or run a repair', async () => {
  const w = await bucketLake();
  const files = await committedFiles(w.dataDir, w.catalog);
  const foldedPaths = new Set(w.folded.map((f) => f.path));
  // A file of day two, whose commit is not folded yet: every writer's open checks it.
  const recent = files.find((f) => f.stream === 'delegators' && !foldedPaths.has(f.path));
  if (!recent) throw new Error('no unfolded delegators file');
  const bytes = await damage(w.dataDir, recent);
  const before = await lakeAsItIs(w.dataDir, w.catalog);

  emulator.advance(DAY);
  for (const args of [
    ['extract', w.pipelinePath, ...w.lake, '--quiet'],
    ['compact', ...w.lake],
  ]) {
    const out = await cli(args);
    expectOneLineFailure(out);
    expect(out.stderr).toContain(`${recent.path} (${recent.bytes} bytes) but the lake has no such file`);
    expect(out.stderr).toContain(`else ${BUCKET_REMEDY}`);
    expect(await lakeAsItIs(w.dataDir, w.catalog)).toEqual(before);
  }
  // Restored, as the message says: the same commands go on.
  await writeObject(s3, w.dataDir, `lake/${recent.path}`, bytes);

  // A file of day one, folded: compaction leaves its stream as it was and compacts the others.
  const old = files.find((f) => f.stream === 'utxos' && foldedPaths.has(f.path));
  if (!old) throw new Error('no folded utxos file');
  await damage(w.dataDir, old);
  const compacted = await cli(['compact', ...w.lake, '--json']);
  expectOneLineFailure(compacted);
  expect(compacted.stderr).toBe(
    `avalake: lake file ${old.path} of stream utxos is missing, where the commit log records ${old.bytes} bytes ` +
      `(sha256 ${old.sha256}): ${BUCKET_REMEDY}; until then its rows are not in the lake, and a build from ` +
      "scratch and the stream's compaction stop on it\n",
  );
  const report = JSON.parse(compacted.stdout) as { streams: { stream: string; damaged?: string }[] };
  expect(report.streams.filter((s) => s.damaged).map((s) => s.stream)).toEqual(['utxos']);
  expect((await committedFiles(w.dataDir, w.catalog)).filter((f) => f.stream === 'utxos')).toEqual(
    files.filter((f) => f.stream === 'utxos'),
  );
}, 300_000);

it('status lists deleted and cut-short objects as it does a local lake’s, from a LIST per folder, and exits 1', async () => {
  const w = await bucketLake();
  const files = await committedFiles(w.dataDir, w.catalog);
  const foldedPaths = new Set(w.folded.map((f) => f.path));
  const missing = files.find((f) => f.stream === 'utxos' && foldedPaths.has(f.path));
  const cut = files.find((f) => f.stream === 'delegators' && !foldedPaths.has(f.path));
  if (!missing || !cut) throw new Error('no files to damage');
  const bytes = { missing: await damage(w.dataDir, missing), cut: await damage(w.dataDir, cut, CUT_BYTES) };

  const before = counter.stats.requests;
  const standing = await cli(['status', ...w.lake, '--json'], {
    AWS_ENDPOINT_URL_S3: counter.endpoint,
    AWS_ENDPOINT_URL: counter.endpoint,
  });
  expect(standing.code, standing.stderr).toBe(1);
  expect((JSON.parse(standing.stdout) as { damaged: unknown[] }).damaged).toEqual(
    expect.arrayContaining([
      { stream: 'utxos', path: missing.path, bytes: missing.bytes, foundBytes: null },
      { stream: 'delegators', path: cut.path, bytes: cut.bytes, foundBytes: CUT_BYTES },
    ]),
  );
  // A LIST per folder of live files, never a HEAD per file; besides, the bucket's own check, the lake's
  // mark, and a second look at the folders of the two files found wanting (and the staging folder of
  // the missing one: a file committed and not yet moved in is not missing).
  const live = [...(await readLakeState(w.dataDir, w.catalog)).values()].flatMap((s) => s.files);
  const folders = new Set(live.map((f) => f.path.slice(0, f.path.lastIndexOf('/'))));
  const requests = counter.stats.requests - before;
  expect(requests).toBeLessThanOrEqual(folders.size + 8);
  expect(requests).toBeLessThan(live.length / 2);

  const text = await cli(['status', ...w.lake]);
  expect(text.code).toBe(1);
  expect(text.stdout).toContain(
    `damaged: lake file ${missing.path} of stream utxos is missing, where the commit log records ${missing.bytes}: ${BUCKET_REMEDY} (until then its rows are not in the lake)`,
  );
  expect(text.stdout).toContain(
    `damaged: lake file ${cut.path} of stream delegators has ${CUT_BYTES} bytes, where the commit log records ${cut.bytes}: restore it`,
  );

  // Without the bucket (no credentials on this host, or it is down): the catalog's view, and a warning
  // that no file was checked, as before status looked at files.
  const blind = await cli(['status', ...w.lake], {
    AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    AWS_MAX_ATTEMPTS: '1',
  });
  expect(blind.code, blind.stderr).toBe(0);
  expect(blind.stdout).toContain(
    "warning: the lake's files were not checked for damage: HeadBucket of s3://",
  );
  expect(blind.stdout).not.toContain('damaged:');
  // A bucket that answers, then fails (every second request refused, no retry): the same view and warning,
  // wherever the failure falls (the lake's mark, a folder's listing), not a failed status.
  const flaky = await startFaultyProxy(s3.endpoint, { failEvery: 2 });
  try {
    const faltering = await cli(['status', ...w.lake], {
      AWS_ENDPOINT_URL_S3: flaky.endpoint,
      AWS_ENDPOINT_URL: flaky.endpoint,
      AWS_MAX_ATTEMPTS: '1',
    });
    expect(faltering.code, faltering.stderr).toBe(0);
    expect(faltering.stdout).toContain("warning: the lake's files were not checked for damage: ");
    expect(flaky.stats.failed).toBeGreaterThanOrEqual(1);
  } finally {
    await flaky.stop();
  }

  // Restored: nothing damaged, exit 0.
  await writeObject(s3, w.dataDir, `lake/${missing.path}`, bytes.missing);
  await writeObject(s3, w.dataDir, `lake/${cut.path}`, bytes.cut);
  const whole = await cli(['status', ...w.lake, '--json']);
  expect(whole.code, whole.stderr).toBe(0);
  expect((JSON.parse(whole.stdout) as { damaged: unknown[] }).damaged).toEqual([]);
}, 300_000);

it('a build that meets a deleted or cut-short object names it in one line, exits 1, and keeps its warehouse', async () => {
  const w = await bucketLake();
  const localDir = join(w.dir, 'local');
  const build = () => cli(['build', ...w.lake, '--local-dir', localDir]);
  expect((await build()).code).toBe(0);
  const warehouse = join(localDir, 'warehouse.duckdb');
  const built = readFileSync(warehouse);
  const rows = () => queryWarehouse(localDir, 'select count(*)::integer as n from stg_delegators');
  const rowsBuilt = await rows();

  const mirrorOf = (file: LiveFile) => {
    const { bucket, prefix } = parseS3Url(w.dataDir);
    return join(localDir, 'mirror', bucket, prefix, 'lake', file.path);
  };
  /** A day's new commits, which this host has not mirrored yet: a file of the stream's among them. */
  const newFile = async (stream: string) => {
    emulator.advance(DAY);
    const mirrored = new Set((await committedFiles(w.dataDir, w.catalog)).map((f) => f.path));
    const extracted = await cli(['extract', w.pipelinePath, ...w.lake, '--quiet']);
    expect(extracted.code, extracted.stderr).toBe(0);
    const file = (await committedFiles(w.dataDir, w.catalog)).find(
      (f) => f.stream === stream && !mirrored.has(f.path),
    );
    if (!file) throw new Error(`no new ${stream} file`);
    return file;
  };

  const missing = await newFile('delegators');
  const missingBytes = await damage(w.dataDir, missing);
  const refused = await build();
  expectOneLineFailure(refused);
  expect(refused.stderr).toBe(
    `avalake: lake file ${missing.path} of stream delegators is missing, where the commit log records ${missing.bytes} bytes ` +
      `(sha256 ${missing.sha256}): ${BUCKET_REMEDY}; until then its rows are not in the lake, and a build from ` +
      "scratch and the stream's compaction stop on it\n",
  );
  expect(readFileSync(warehouse).equals(built)).toBe(true);
  // Restored, as it says: the build goes on.
  await writeObject(s3, w.dataDir, `lake/${missing.path}`, missingBytes);
  const restored = await build();
  expect(restored.code, restored.stderr).toBe(0);
  const rebuilt = readFileSync(warehouse);
  const rowsRebuilt = await rows();
  expect(rowsRebuilt).not.toEqual(rowsBuilt);

  const cut = await newFile('utxos');
  const cutBytes = await damage(w.dataDir, cut, CUT_BYTES);
  const cutShort = await build();
  expectOneLineFailure(cutShort);
  expect(cutShort.stderr).toContain(
    `avalake: lake file ${cut.path} of stream utxos has ${CUT_BYTES} bytes, where the commit log records ${cut.bytes} bytes`,
  );
  expect(cutShort.stderr).toContain(BUCKET_REMEDY);
  // The short copy is not left in the mirror for a later build to take as current.
  expect(existsSync(mirrorOf(cut))).toBe(false);
  expect(readFileSync(warehouse).equals(rebuilt)).toBe(true);
  expect(await rows()).toEqual(rowsRebuilt);

  await writeObject(s3, w.dataDir, `lake/${cut.path}`, cutBytes);
  const again = await build();
  expect(again.code, again.stderr).toBe(0);
  expect(readFileSync(mirrorOf(cut)).equals(cutBytes)).toBe(true);
}, 300_000);
