import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CopyObjectCommand, DeleteObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { openLake, readLakeState } from '../../src/load/lake.ts';
import { lake } from '../../src/schemas/lake.ts';
import { mirrorLake } from '../../src/warehouse/mirror.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';
import {
  downloadPrefix,
  freshBucket,
  listKeys,
  parseS3Url,
  type S3TestServer,
  s3Client,
  startS3,
} from '../helpers/s3.ts';
import { idsAgainstCheckpoints, query } from './duck.ts';
import { PARTITIONS, STREAM } from './fixtures/crash-shape.ts';
import { startWriter } from './fixtures/writer-process.ts';

/**
 * The crash tests of the local lake, against a lake on S3 (s3rver) with its commit log in PostgreSQL:
 * writers SIGKILLed at random instants and inside compactions lose nothing and duplicate nothing, and a
 * reader listing the bucket sees exactly the committed files.
 */

/** The writers' heartbeat lease: a killed writer's staged objects are its own until it lapses. */
const LEASE_SECONDS = 1;
const crashWriter = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));
/** The crash writers' record schema. */
const crashSchema = z.object({ id: lake.int64(), amount: lake.amount(), note: z.string() });
const compactWriter = fileURLToPath(new URL('./fixtures/compact-writer.ts', import.meta.url));

let s3: S3TestServer;
let pg: Awaited<ReturnType<typeof startPostgres>>;
const scratch: string[] = [];
beforeAll(async () => {
  [s3, pg] = await Promise.all([startS3(), startPostgres()]);
  // The lake opened here, in the test, finds the test server the way a worker does: AWS_* variables.
  for (const [name, value] of Object.entries(s3.env)) vi.stubEnv(name, value);
}, 60_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  await Promise.all([s3?.stop(), pg?.stop()]);
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

/** A writer fixture on the lake, finding S3 and the short lease through its environment. */
const writerOn = (fixture: string, dataDir: string, catalog: string) =>
  startWriter(fixture, [dataDir, catalog], { ...s3.env, AVALAKE_LEASE_SECONDS: String(LEASE_SECONDS) });

/**
 * After the last kill: recovery by one more opening, then the bucket holds exactly the live files of the
 * commit log under the stream's folder, nothing staged, and every partition the ids below its checkpoint
 * once each.
 */
async function expectExactLake(dataDir: string, catalog: string) {
  await sleep(LEASE_SECONDS * 1000 + 500);
  const l = await openLake({ dataDir, catalog });
  try {
    const state = (await readLakeState(dataDir, catalog)).get(STREAM);
    const live = (state?.files ?? []).filter((f) => f.table === 'data').map((f) => `lake/${f.path}`);
    const keys = await listKeys(s3, dataDir);
    expect(keys.filter((k) => k.startsWith(`lake/${STREAM}/`))).toEqual(live.sort());
    expect(keys.filter((k) => k.startsWith('lake/_staging/'))).toEqual([]);

    const local = await mkdtemp(join(tmpdir(), 'avalake-s3-read-'));
    scratch.push(local);
    await downloadPrefix(s3, dataDir, local);
    const { actual: stats, expected } = await idsAgainstCheckpoints(join(local, 'lake'), l);
    expect(expected.every((e) => e.n > 0)).toBe(true);
    expect(stats).toEqual(expected);
    return { files: live.length, checkpoints: expected.map((e) => e.n), recovery: l.recovery };
  } finally {
    await l.close();
  }
}

it('on S3, loses and duplicates nothing when the writer is SIGKILLed 10 times', async () => {
  const dataDir = await freshBucket(s3, 'crash');
  const catalog = await freshDatabase(pg.url);
  const runAndKill = async (maxDelayMs: number) => {
    const w = writerOn(crashWriter, dataDir, catalog);
    await w.ready;
    await sleep(Math.random() * maxDelayMs);
    await w.kill();
  };
  for (let i = 0; i < 10; i++) await runAndKill(800);
  // On a busy machine a writer may die before its first commit run after run: go on, each writer
  // living longer than the last, until every partition has a commit, which the check below expects.
  const everyPartitionCommitted = async () =>
    ((await readLakeState(dataDir, catalog)).get(STREAM)?.partitions.size ?? 0) === PARTITIONS.length;
  for (let more = 0; more < 10 && !(await everyPartitionCommitted()); more++)
    await runAndKill(800 * (2 + more));
  const result = await expectExactLake(dataDir, catalog);
  console.log(`S3 after 10 kills: ${result.files} files, checkpoints ${result.checkpoints.join(', ')}`);
}, 240_000);

it('on S3, loses and duplicates nothing when compaction is SIGKILLed in its merge or its commit', async () => {
  const dataDir = await freshBucket(s3, 'compact');
  const catalog = await freshDatabase(pg.url);
  const landed: Record<string, number> = {};
  for (let i = 0; i < 9; i++) {
    const w = writerOn(compactWriter, dataDir, catalog);
    await w.ready;
    const target = ['merge', 'commit', 'any'][i % 3] as string;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && target !== 'any' && w.step() !== target) await sleep(1);
    await sleep(Math.random() * (target === 'any' ? 600 : 40));
    const at = w.step();
    await w.kill();
    landed[at] = (landed[at] ?? 0) + 1;
    // A killed writer's lease must lapse before the next one may take its staged objects over.
    await sleep(LEASE_SECONDS * 1000 + 200);
  }
  console.log(`S3 compaction kills landed at: ${JSON.stringify(landed)}`);
  expect(landed.merge ?? 0).toBeGreaterThan(0);
  expect(landed.commit ?? 0).toBeGreaterThan(0);
  const result = await expectExactLake(dataDir, catalog);
  // Compaction ran: fewer files than the flushes that wrote them.
  const state = (await readLakeState(dataDir, catalog)).get(STREAM);
  expect(state?.files.some((f) => f.replaces !== undefined)).toBe(true);
  console.log(
    `S3 after compaction kills: ${result.files} files, checkpoints ${result.checkpoints.join(', ')}`,
  );
}, 300_000);

it('a build reads a file committed but not yet copied into place from its staged copy; gone from both, it fails naming it', async () => {
  const dataDir = await freshBucket(s3, 'mirror');
  const catalog = await freshDatabase(pg.url);
  const l = await openLake({ dataDir, catalog });
  const partition = PARTITIONS[0] as (typeof PARTITIONS)[number];
  const flush = l.begin({ stream: STREAM, partition, schema: crashSchema });
  await flush.append(
    Array.from({ length: 10 }, (_, id) => ({ id, amount: String(id), note: partition.address })),
  );
  const [file] = (await flush.commit({ next: 10 })).files;
  await l.close();
  if (!file) throw new Error('the flush committed no file');

  // Back in staging, as a writer leaves it between its commit record and its copy into place.
  const { bucket, prefix } = parseS3Url(dataDir);
  const client = s3Client(s3.endpoint);
  const key = (path: string) => `${prefix}/lake/${path}`;
  const staged = `_staging/${STREAM}/${file.staged}`;
  try {
    await client.send(
      new CopyObjectCommand({ Bucket: bucket, Key: key(staged), CopySource: `${bucket}/${key(file.path)}` }),
    );
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key(file.path) }));
    const mirror = await mkdtemp(join(tmpdir(), 'avalake-mirror-'));
    scratch.push(mirror);
    const { lakeDir } = await mirrorLake(dataDir, catalog, mirror);
    const ids = await query(
      `select list(id order by id)::varchar as ids from read_parquet('${lakeDir}/${file.path}')`,
    );
    expect(ids).toEqual([{ ids: '[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]' }]);

    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key(staged) }));
    const empty = await mkdtemp(join(tmpdir(), 'avalake-mirror-'));
    scratch.push(empty);
    // Named as the commit log names it, not by the staged key a build looked at last.
    await expect(mirrorLake(dataDir, catalog, empty)).rejects.toThrow(
      `lake file ${file.path} of stream ${STREAM} is missing, where the commit log records ${file.bytes} bytes`,
    );
  } finally {
    client.destroy();
  }
});
