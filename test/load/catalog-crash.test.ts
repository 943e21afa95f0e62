import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { openLake, readLakeState } from '../../src/load/lake.ts';
import { lake } from '../../src/schemas/lake.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';
import { idsAgainstCheckpoints, query } from './duck.ts';
import { PARTITIONS, STREAM } from './fixtures/crash-shape.ts';
import { startWriter } from './fixtures/writer-process.ts';

const KILLS = 12;
const MAX_KILL_DELAY_MS = 400;
/** The writers' heartbeat lease: a killed writer's staged files are its own until it lapses. */
const LEASE_SECONDS = 1;
const fixture = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));

let server: Awaited<ReturnType<typeof startPostgres>>;
let dataDir: string | undefined;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** What the writers' recoveries did over the whole test: shows which instants the kills hit. */
const recovered = { rolledForward: 0, discarded: 0 };

async function runAndKill(dir: string, catalog: string, maxDelayMs = MAX_KILL_DELAY_MS): Promise<void> {
  const writer = startWriter(fixture, [dir, catalog], { AVALAKE_LEASE_SECONDS: String(LEASE_SECONDS) });
  const report = await writer.ready;
  recovered.rolledForward += report.rolledForward.length;
  recovered.discarded += report.discarded.length;
  await sleep(Math.random() * maxDelayMs);
  await writer.kill();
}

async function everyPartitionCommitted(dir: string, catalog: string): Promise<boolean> {
  const state = (await readLakeState(dir, catalog)).get(STREAM);
  return (state?.partitions.size ?? 0) === PARTITIONS.length;
}

it(`with a catalog, loses and duplicates nothing when the writer is SIGKILLed ${KILLS} times`, async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-catalog-crash-'));
  const catalog = await freshDatabase(server.url);
  // Each writer starts at once after the kill, while the killed one still looks alive: its staged
  // files wait, and the writer after the lease lapses rolls them forward or drops them.
  for (let i = 0; i < KILLS; i++) await runAndKill(dataDir, catalog);
  // On a busy machine a writer may die before its first commit run after run (its first flush loads
  // the Parquet encoder): go on, each writer living longer than the last, until every partition has a
  // commit, so that the check below covers both.
  for (let more = 0; more < 2 * KILLS && !(await everyPartitionCommitted(dataDir, catalog)); more++)
    await runAndKill(dataDir, catalog, MAX_KILL_DELAY_MS * (2 + more));
  await sleep(LEASE_SECONDS * 1000 + 500);

  const l = await openLake({ dataDir, catalog });
  try {
    const files = await query(`select file from glob('${dataDir}/lake/${STREAM}/**/*.parquet')`);
    const state = (await readLakeState(dataDir, catalog)).get(STREAM);
    const committed = new Set(
      (state?.files ?? [])
        .filter((f) => f.table === 'data')
        .map((f) => join(dataDir as string, 'lake', f.path)),
    );
    // Every file the analysts' glob sees is named by a commit, and the reverse; nothing left staged.
    expect(new Set(files.map((r) => r.file))).toEqual(committed);
    expect(await readdir(join(dataDir, 'lake', '_staging', STREAM))).toEqual([]);

    const { actual: stats, expected } = await idsAgainstCheckpoints(join(dataDir, 'lake'), l);
    console.log(
      `after ${KILLS} kills: ${committed.size} files, checkpoints ${expected.map((e) => e.n).join(', ')}; ` +
        `recoveries rolled ${recovered.rolledForward + l.recovery.rolledForward.length} staged files forward ` +
        `and discarded ${recovered.discarded + l.recovery.discarded.length}`,
    );
    expect(expected.every((e) => e.n > 0)).toBe(true);
    expect(stats).toEqual(expected);
  } finally {
    await l.close();
  }
}, 240_000);

it("opens a lake whose stream's first commit is recorded but its folder not yet made, as a writer killed in between leaves it", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'avalake-catalog-first-'));
  const catalog = await freshDatabase(server.url);
  const schema = z.object({ id: lake.int64(), amount: lake.amount(), note: z.string() });
  const partition = PARTITIONS[0] as (typeof PARTITIONS)[number];
  try {
    // A file stands where the stream's folder goes: the commit is recorded in the catalog, then fails
    // before the stream's folder is made and its file moves in, where a kill would have stopped it.
    const first = await openLake({ dataDir: dir, catalog });
    await mkdir(join(dir, 'lake'), { recursive: true });
    await writeFile(join(dir, 'lake', STREAM), 'in the way');
    const flush = first.begin({ stream: STREAM, partition, schema });
    await flush.append([{ id: 0, amount: '1', note: 'alice' }]);
    await expect(flush.commit({ next: 1 })).rejects.toThrow();
    await rm(join(dir, 'lake', STREAM));

    // Another writer opens while the first still holds its lease: the file waits in staging for it.
    const second = await openLake({ dataDir: dir, catalog });
    expect(second.readCheckpoint(STREAM, partition)).toEqual({ next: 1 });
    expect(await readdir(join(dir, 'lake', '_staging', STREAM))).toHaveLength(1);
    await second.close();
    await first.close().catch(() => undefined);

    // Once the first writer's run is over, the next open moves the file in.
    const third = await openLake({ dataDir: dir, catalog });
    try {
      expect(third.recovery.rolledForward).toHaveLength(1);
      const ids = await query(`select id from read_parquet('${dir}/lake/${STREAM}/**/*.parquet')`);
      expect(ids.map((r) => Number(r.id))).toEqual([0]);
    } finally {
      await third.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);
