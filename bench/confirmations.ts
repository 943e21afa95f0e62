/**
 * A year of cron, for the warehouse's record of unchanged snapshots (`_lake.snapshot_confirmations`).
 * Every run that finds a snapshot partition unchanged confirms it: a row per partition per run, 35,040
 * a year at every 15 minutes. Each build brings the table up to date with the lake; before, it wrote
 * the whole table again every build.
 *
 * The lake as a build sees it after a year (built in memory, as the commit log would hand it over):
 * one stream of --partitions partitions, whose --runs runs of confirmations are folded into one file
 * (as the lake's merges leave them), one fold of 16 runs since the last build, and one run's
 * confirmations still pending in the state. The warehouse of the last build holds the year file.
 * --rounds rounds, alternated, each on a fresh copy of that warehouse: the build's step as it is now
 * (reads the new fold and the pending run) and the table written whole (the record of held files
 * removed from the copy first, so the step rebuilds it, as every build did before), each with the
 * checkpoint that writes it. Both tables are checked equal.
 *
 * Usage: npx tsx bench/confirmations.ts [--partitions 100] [--runs 35040] [--rounds 5]
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type LiveFile, partitionId } from '../src/load/index.ts';
import { applyRecord, emptyState } from '../src/load/state.ts';
import { syncConfirmations } from '../src/warehouse/confirmations.ts';
import { queryRows, withDuckDB } from '../src/warehouse/duckdb.ts';
import type { LakeSources } from '../src/warehouse/lake-sources.ts';
import { median, ratio } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    partitions: { type: 'string', default: '100' },
    runs: { type: 'string', default: '35040' },
    rounds: { type: 'string', default: '5' },
  },
});
const PARTITIONS = Number(values.partitions);
const RUNS = Number(values.runs);
const ROUNDS = Number(values.rounds);
if (![PARTITIONS, RUNS, ROUNDS].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error('--partitions, --runs and --rounds take whole numbers ≥ 1 (100, 35040, 5)');
  process.exit(2);
}

const STREAM = 'validators';
const FOLD_RUNS = 16;
const STEP_MS = 15 * 60 * 1000;
const SNAPSHOT_AT = Date.UTC(2025, 10, 25);
const seconds = (since: number) => (performance.now() - since) / 1000;

const dir = mkdtempSync(join(tmpdir(), 'avalake-bench-confirmations-'));
const lakeDir = join(dir, 'lake');
const partitions = Array.from({ length: PARTITIONS }, (_, i) => ({ network: 'mainnet', node: `node-${i}` }));

/** Confirmations of runs [from, to) of every partition, as a Parquet file of the lake's bookkeeping. */
async function writeRuns(path: string, from: number, to: number): Promise<LiveFile> {
  const ids = partitions.map((p) => `'${partitionId(p)}'`).join(', ');
  const file = join(lakeDir, ...path.split('/'));
  await withDuckDB(':memory:', (db) =>
    db.run(
      `copy (select ids[1 + p] as "partition", make_timestamptz(${SNAPSHOT_AT * 1000}) as snapshotAt,
                   make_timestamptz((${SNAPSHOT_AT} + r * ${STEP_MS}) * 1000) as confirmedAt
             from (select [${ids}] as ids), range(${from}, ${to}) as runs(r), range(${PARTITIONS}) as ps(p))
       to '${file}' (format parquet, compression zstd)`,
    ),
  );
  return {
    path,
    table: 'confirmations',
    seq: to,
    rows: (to - from) * PARTITIONS,
    bytes: statSync(file).size,
    sha256: '0'.repeat(64),
  };
}

/** The lake's state: these confirmation files, and `pendingRun`'s confirmations still in the state. */
function lakeWith(files: LiveFile[], pendingRun: number | undefined): LakeSources {
  const state = emptyState(STREAM);
  for (const [i, partition] of partitions.entries())
    applyRecord(state, {
      format: 1,
      stream: STREAM,
      seq: i + 1,
      partition,
      runId: 'bench',
      committedAt: new Date(SNAPSHOT_AT).toISOString(),
      files: [],
      checkpoint: { snapshotAt: SNAPSHOT_AT },
      ...(pendingRun === undefined ? {} : { confirmedAt: SNAPSHOT_AT + pendingRun * STEP_MS }),
    });
  state.files = files;
  return { lakeDir, streams: new Map([[STREAM, state]]) };
}

mkdirSync(join(lakeDir, '_confirmations', STREAM), { recursive: true });
const year = await writeRuns(`_confirmations/${STREAM}/year.parquet`, 0, RUNS);
const fold = await writeRuns(`_confirmations/${STREAM}/fold.parquet`, RUNS, RUNS + FOLD_RUNS);
const lastBuild = join(dir, 'last.duckdb');
await withDuckDB(lastBuild, async (db) => {
  await syncConfirmations(db, lakeWith([year], undefined));
  await db.run('checkpoint');
});
const now = lakeWith([year, fold], RUNS + FOLD_RUNS);
console.log(
  `${PARTITIONS} partitions × ${RUNS.toLocaleString('en-US')} runs: ${year.rows.toLocaleString('en-US')} confirmations ` +
    `(${(year.bytes / 1e6).toFixed(1)} MB of Parquet); since the last build ${fold.rows.toLocaleString('en-US')} folded and ${PARTITIONS} pending`,
);

/** A copy of the last build's warehouse, synced with the lake as it is now, checkpoint included. */
async function step(name: string, whole: boolean): Promise<{ s: number; kind: string }> {
  const file = join(dir, `${name}.duckdb`);
  rmSync(file, { force: true });
  copyFileSync(lastBuild, file);
  if (whole) await withDuckDB(file, (db) => db.run('drop table _lake.confirmation_files'));
  const started = performance.now();
  const sync = await withDuckDB(file, async (db) => {
    const result = await syncConfirmations(db, now);
    await db.run('checkpoint');
    return result;
  });
  return { s: seconds(started), kind: sync.kind };
}

const appended: number[] = [];
const wholes: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? [false, true] : [true, false];
  for (const whole of order) {
    const { s, kind } = await step(whole ? 'whole' : 'appended', whole);
    if (kind !== (whole ? 'whole' : 'appended'))
      throw new Error(`expected ${whole ? 'whole' : 'appended'}, got ${kind}`);
    (whole ? wholes : appended).push(s);
  }
}

const differences = await withDuckDB(':memory:', async (db) => {
  await db.run(`attach '${join(dir, 'appended.duckdb')}' as a (read_only)`);
  await db.run(`attach '${join(dir, 'whole.duckdb')}' as w (read_only)`);
  const [row] = await queryRows(
    db,
    `select (select count(*) from a._lake.snapshot_confirmations) as rows,
            (select count(*) from (select * from a._lake.snapshot_confirmations except all select * from w._lake.snapshot_confirmations))
          + (select count(*) from (select * from w._lake.snapshot_confirmations except all select * from a._lake.snapshot_confirmations)) as differ`,
  );
  return row;
});
rmSync(dir, { recursive: true, force: true });
if (Number(differences?.differ) !== 0)
  throw new Error(`the two tables differ in ${differences?.differ} rows`);

const fmt = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(', ');
console.log(
  `rows after the step: ${Number(differences?.rows).toLocaleString('en-US')} in both tables, equal`,
);
console.log(`appended (s):      ${fmt(appended)}  median ${median(appended).toFixed(3)}`);
console.log(`written whole (s): ${fmt(wholes)}  median ${median(wholes).toFixed(3)}`);
console.log(`appended / whole:  ${ratio(median(appended), median(wholes))}`);
