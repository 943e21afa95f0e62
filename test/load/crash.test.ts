import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { openLake, readLakeState } from '../../src/load/lake.ts';
import { idsAgainstCheckpoints, query } from './duck.ts';
import { PARTITIONS, STREAM } from './fixtures/crash-shape.ts';
import { startWriter } from './fixtures/writer-process.ts';

const KILLS = 20;
/** Kills land up to this long after the writer is ready: long enough for several commits. */
const MAX_KILL_DELAY_MS = 400;
const fixture = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));

let dataDir: string | undefined;
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** What the writers' recoveries did: shows which instants the kills hit. */
const recovered = { rolledForward: 0, discarded: 0 };

async function runAndKill(dir: string, maxDelayMs = MAX_KILL_DELAY_MS): Promise<void> {
  const writer = startWriter(fixture, [dir]);
  const report = await writer.ready;
  recovered.rolledForward += report.rolledForward.length;
  recovered.discarded += report.discarded.length;
  await sleep(Math.random() * maxDelayMs);
  await writer.kill();
}

async function everyPartitionCommitted(dir: string): Promise<boolean> {
  const state = (await readLakeState(dir)).get(STREAM);
  return (state?.partitions.size ?? 0) === PARTITIONS.length;
}

it(`loses and duplicates nothing when the writer is SIGKILLed ${KILLS} times`, async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-crash-'));
  for (let i = 0; i < KILLS; i++) await runAndKill(dataDir);
  // On a busy machine a writer may die before its first commit run after run (its first flush loads
  // the Parquet encoder): go on, each writer living longer than the last, until every partition has a
  // commit, so that the check below covers both.
  for (let more = 0; more < KILLS && !(await everyPartitionCommitted(dataDir)); more++)
    await runAndKill(dataDir, MAX_KILL_DELAY_MS * (2 + more));

  const l = await openLake({ dataDir });
  try {
    const files = await query(`select file from glob('${dataDir}/lake/${STREAM}/**/*.parquet')`);
    const committed = new Set<string>();
    for (const name of await readdir(join(dataDir, 'lake', '_commits', STREAM))) {
      const record = JSON.parse(await readFile(join(dataDir, 'lake', '_commits', STREAM, name), 'utf8'));
      for (const f of record.files) if (f.table === 'data') committed.add(join(dataDir, 'lake', f.path));
    }
    // No orphan: every file the analysts' glob sees is named by a commit record, and the reverse.
    expect(new Set(files.map((r) => r.file))).toEqual(committed);
    expect(await readdir(join(dataDir, 'lake', '_staging', STREAM))).toEqual([]);

    const { actual: stats, expected } = await idsAgainstCheckpoints(join(dataDir, 'lake'), l);
    console.log(
      `after ${KILLS} kills: ${committed.size} files, checkpoints ${expected.map((e) => e.n).join(', ')}; ` +
        `recoveries rolled ${recovered.rolledForward} staged files forward and discarded ${recovered.discarded}`,
    );
    expect(expected.every((e) => e.n > 0)).toBe(true);
    expect(stats).toEqual(expected);

    // No reject twice. A busy machine may kill every writer before a flush with rejects commits: then
    // there are no rejects files, and nothing to count (read_parquet refuses an empty glob).
    const rejectFiles = await query(
      `select file from glob('${dataDir}/lake/_rejects/stream=${STREAM}/**/*.parquet')`,
    );
    if (rejectFiles.length > 0) {
      const rejects = await query(
        `select count(*)::integer as n, count(distinct raw)::integer as d
         from read_parquet('${dataDir}/lake/_rejects/stream=${STREAM}/**/*.parquet', hive_partitioning = true)`,
      );
      expect(rejects[0]?.n).toBe(rejects[0]?.d);
    }
  } finally {
    await l.close();
  }
  // Up to 40 writers, each a process that loads its modules: 20 s on a quiet machine, three times that
  // and more while other test files use both cores.
}, 240_000);
