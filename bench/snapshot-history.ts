/**
 * A year of cron, for the marts over the validators snapshots. `run` every 15 minutes stores a snapshot
 * of the validator set each time (35,040 a year), and validators_history, apr_realized and
 * stake_distribution_daily read them. Does a build's cost grow with the snapshots before it?
 *
 * For each --snapshots size, a fresh lake:
 * 1. one extract from an in-process emulator (fixed clock) of the streams those marts read;
 * 2. the validators stream grown by one synthetic file of that many earlier snapshots, each the
 *    extracted one stamped 15 minutes before the last, its validators copied to --validators (the
 *    emulator's world has 17; mainnet ~1,500), committed through the commit log;
 * 3. a full build;
 * 4. --rounds cron rounds, each one more snapshot 15 minutes after the last (committed the same way)
 *    and a build of every model (validators_history extends its last build), then `--select
 *    validators_history` (that model built whole from every snapshot, as every build did before).
 * Prints, per size, validators_history's seconds extended and whole (medians, and their ratio), the
 * other two marts' seconds in the cron builds, and `avalake test` after each cron build beside the one
 * query of stg_validators' key it no longer runs every time (the build records that the key held).
 *
 * Usage: npx tsx bench/snapshot-history.ts [--snapshots 1000,10000] [--validators 1500] [--rounds 3] [--keep]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { demoPipelineOf } from '../src/emulator/demo-pipeline.ts';
import { createEmulator } from '../src/emulator/index.ts';
import { createCommitLog } from '../src/load/commit.ts';
import { lakePaths, type Partition } from '../src/load/layout.ts';
import { acquireLock } from '../src/load/lock.ts';
import { type BuildResult, buildWarehouse } from '../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../src/warehouse/duckdb.ts';
import { runWarehouseTests } from '../src/warehouse/test.ts';
import { TEST_EPOCH } from '../test/helpers/emulator.ts';
import { extractOnce } from '../test/helpers/extract.ts';
import { median, ratio } from './lib/stats.ts';
import { commitSelected, folderFiles, foldersOf } from './lib/synthetic-files.ts';

const { values } = parseArgs({
  options: {
    snapshots: { type: 'string', default: '1000,10000' },
    validators: { type: 'string', default: '1500' },
    rounds: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
  },
});
const SIZES = values.snapshots.split(',').map(Number);
const ROUNDS = Number(values.rounds);
const VALIDATORS = Number(values.validators);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1) || !Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error('--snapshots takes whole numbers ≥ 1, separated by commas (1000,10000); --rounds one (3)');
  process.exit(2);
}

const STEP_SECONDS = 15 * 60;
const STREAMS = ['validators', 'rewards', 'delegators', 'staking_transactions', 'current_supply'];
const MARTS = ['validators_history', 'apr_realized', 'stake_distribution_daily'];
const seconds = (since: number) => (performance.now() - since) / 1000;
const pad = (v: string | number, n: number) => String(v).padStart(n);

const emulator = await createEmulator({ clock: `fixed:${TEST_EPOCH}`, rateLimit: 'off', seed: 7 });

async function extract(dir: string, dataDir: string, streams: readonly string[]) {
  const path = join(dir, 'pipeline.json');
  writeFileSync(path, JSON.stringify(demoPipelineOf(emulator.truth, 'fuji', emulator.url)));
  const run = await extractOnce(path, dataDir, { streams: streams.join(',') });
  if (run.status !== 'ok') throw new Error(`extract of ${streams.join(', ')}: ${run.status}`);
}

/** The extracted validators snapshot: each folder's partition and files, as one `read_parquet`. */
async function extractedSnapshot(
  dataDir: string,
): Promise<Map<string, { partition: Partition; sources: string }>> {
  const paths = lakePaths(dataDir);
  const log = createCommitLog(paths);
  await log.open();
  const snapshot = new Map<string, { partition: Partition; sources: string }>();
  for (const [folder, partition] of foldersOf(log, 'validators')) {
    const sources = folderFiles(log, paths, 'validators', folder);
    if (sources) snapshot.set(folder, { partition, sources });
  }
  return snapshot;
}

/**
 * Commits validators snapshots `first` to `last` steps away from the extracted one (1: 15 minutes before
 * it; -1: 15 minutes after), one file per folder, each snapshot the extracted rows `copies` times over
 * (copy 0 as it is, copy c's node ids suffixed `~c`), so that a snapshot holds as many validators as
 * mainnet's (~1,500).
 */
async function commitSnapshots(
  dataDir: string,
  extracted: Map<string, { partition: Partition; sources: string }>,
  [first, last]: [number, number],
  copies: number,
): Promise<number> {
  const paths = lakePaths(dataDir);
  const lock = await acquireLock(paths.lockFile);
  const log = createCommitLog(paths);
  let rows = 0;
  try {
    await log.open();
    await withDuckDB(':memory:', async (db) => {
      for (const [folder, { partition, sources }] of extracted) {
        const shift = `to_seconds(cast(step * ${STEP_SECONDS} as bigint))`;
        rows += await commitSelected(
          db,
          log,
          paths,
          { stream: 'validators', folder, partition },
          `select * exclude (step, c) replace (
             case when c = 0 then nodeID else nodeID || '~' || c end as nodeID,
             _snapshot_at - ${shift} as _snapshot_at,
             _extracted_at - ${shift} as _extracted_at)
           from ${sources}, range(${first}, ${last + 1}) as s(step), range(${copies}) as r(c)`,
        );
      }
    });
    await log.fold();
  } finally {
    await lock.release();
  }
  return rows;
}

const secondsOf = (result: BuildResult, name: string) => result.built.find((b) => b.name === name);

interface SizeResult {
  snapshots: number;
  rows: number;
  full: number;
  extended: number[];
  whole: number[];
  others: Map<string, number[]>;
  /** `avalake test`'s checks after the cron build, and the one query of stg_validators' key it no longer runs. */
  tests: number[];
  grouped: number[];
}

async function measure(snapshots: number): Promise<SizeResult> {
  const dir = mkdtempSync(join(tmpdir(), 'avalake-bench-snapshots-'));
  const dataDir = join(dir, 'data');
  try {
    await extract(dir, dataDir, STREAMS);
    const extracted = await extractedSnapshot(dataDir);
    const [perSnapshot] = await withDuckDB(':memory:', (db) =>
      queryRows(
        db,
        `select count(*) as n from (${[...extracted.values()].map((e) => `select 1 from ${e.sources}`).join(' union all ')})`,
      ),
    );
    const copies = Math.max(1, Math.round(VALIDATORS / Number(perSnapshot?.n)));
    const grown = await commitSnapshots(dataDir, extracted, [1, snapshots], copies);
    let started = performance.now();
    const first = await buildWarehouse({ dataDir });
    const full = seconds(started);
    const rows = secondsOf(first, 'stg_validators')?.rows ?? 0;
    console.log(
      `${snapshots} snapshots: ${grown} rows grown, stg_validators ${rows} rows; full build ${full.toFixed(2)} s`,
    );
    const result: SizeResult = {
      snapshots,
      rows,
      full,
      extended: [],
      whole: [],
      others: new Map(),
      tests: [],
      grouped: [],
    };
    for (let round = 1; round <= ROUNDS; round++) {
      await commitSnapshots(dataDir, extracted, [-round, -round], copies);
      started = performance.now();
      const cron = await buildWarehouse({ dataDir });
      const cronSeconds = seconds(started);
      const history = secondsOf(cron, 'validators_history');
      if (history?.mode !== 'incremental')
        throw new Error(`validators_history was ${history?.mode}, not extended`);
      result.extended.push(history.seconds);
      for (const name of MARTS.slice(1))
        result.others.set(name, [
          ...(result.others.get(name) ?? []),
          secondsOf(cron, name)?.seconds ?? Number.NaN,
        ]);
      started = performance.now();
      const report = await runWarehouseTests({ dataDir });
      result.tests.push(seconds(started));
      const held = report.outcomes.find((o) => o.name.startsWith('unique stg_validators '));
      if (!held?.message.includes('as the build recorded it'))
        throw new Error(`stg_validators' key was grouped again: ${JSON.stringify(held)}`);
      started = performance.now();
      await withDuckDB(
        join(dataDir, 'warehouse.duckdb'),
        (db) =>
          db.run(
            'select count(*) from (select 1 from stg_validators group by subnet, node_id, snapshot_at having count(*) > 1)',
          ),
        { readOnly: true },
      );
      result.grouped.push(seconds(started));
      const whole = secondsOf(
        await buildWarehouse({ dataDir, select: 'validators_history' }),
        'validators_history',
      );
      if (whole?.mode !== 'full') throw new Error(`--select validators_history was ${whole?.mode}`);
      result.whole.push(whole.seconds);
      console.log(
        `  round ${round}: build ${cronSeconds.toFixed(2)} s, validators_history extended ${history.seconds.toFixed(3)} s, whole ${whole.seconds.toFixed(3)} s; ` +
          `tests ${result.tests.at(-1)?.toFixed(2)} s, stg_validators' key grouped ${result.grouped.at(-1)?.toFixed(2)} s`,
      );
    }
    return result;
  } finally {
    if (values.keep) console.log(`  kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

try {
  const results: SizeResult[] = [];
  for (const size of SIZES) results.push(await measure(size));
  console.log('');
  console.log(
    `${pad('snapshots', 9)} ${pad('stg rows', 10)} ${pad('history extended s', 18)} ${pad('whole s', 8)} ${pad('ratio', 7)}  ${MARTS.slice(
      1,
    )
      .map((m) => `${m} s`)
      .join('  ')}`,
  );
  for (const r of results)
    console.log(
      `${pad(r.snapshots, 9)} ${pad(r.rows, 10)} ${pad(median(r.extended).toFixed(3), 18)} ${pad(median(r.whole).toFixed(3), 8)} ${pad(ratio(median(r.extended), median(r.whole)), 7)}  ${MARTS.slice(
        1,
      )
        .map((m) => pad(median(r.others.get(m) ?? []).toFixed(3), m.length + 2))
        .join('  ')}`,
    );
  console.log('');
  console.log(`${pad('snapshots', 9)} ${pad('tests s', 8)} ${pad("stg_validators' key grouped s", 30)}`);
  for (const r of results)
    console.log(
      `${pad(r.snapshots, 9)} ${pad(median(r.tests).toFixed(2), 8)} ${pad(median(r.grouped).toFixed(2), 30)}`,
    );
  const [small, large] = [results[0], results.at(-1)];
  if (small && large && large !== small)
    console.log(
      `largest / smallest: stg rows ${ratio(large.rows, small.rows)}, history extended ${ratio(median(large.extended), median(small.extended))}, whole ${ratio(median(large.whole), median(small.whole))}`,
    );
} finally {
  await emulator.close();
}
