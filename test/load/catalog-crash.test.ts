import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openLake, readLakeState } from '../../src/load/lake.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';
import { idsAgainstCheckpoints, query } from './duck.ts';
import { STREAM } from './fixtures/crash-shape.ts';
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

async function runAndKill(dir: string, catalog: string): Promise<void> {
  const writer = startWriter(fixture, [dir, catalog], { AVALAKE_LEASE_SECONDS: String(LEASE_SECONDS) });
  const report = await writer.ready;
  recovered.rolledForward += report.rolledForward.length;
  recovered.discarded += report.discarded.length;
  await sleep(Math.random() * MAX_KILL_DELAY_MS);
  await writer.kill();
}

it(`with a catalog, loses and duplicates nothing when the writer is SIGKILLed ${KILLS} times`, async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-catalog-crash-'));
  const catalog = await freshDatabase(server.url);
  // Each writer starts at once after the kill, while the killed one still looks alive: its staged
  // files wait, and the writer after the lease lapses rolls them forward or drops them.
  for (let i = 0; i < KILLS; i++) await runAndKill(dataDir, catalog);
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
