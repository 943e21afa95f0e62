/**
 * A year of cron on a shared catalog. Every commit of every worker is a row of `avalake.commits`
 * (a pipeline of 225 partitions every 15 minutes is 21,600 a day, ~7.9M a year), kept after the state
 * folds them in. Does opening the lake cost more as they pile up?
 *
 * A PostgreSQL server (Debian's, in a temp directory, as the tests start it) and a lake of --streams
 * streams × --partitions partitions, committed and folded through the catalog. Then, for each --records
 * size, that many earlier commit records of those streams, folded (older than the states), added in
 * SQL; and --rounds of: opening the lake as a run does (`openLake`, recovery included), reading its
 * state as a build does (`readLakeState`), and the catalog's list of streams as every open asked it
 * before (from every commit record) beside the one it asks now. Then the records aged past a week,
 * one fold of every stream (which deletes them) and how many are left. Last, the first open of a
 * catalog from before records were dated, with the largest size: the schema's new column added as it is
 * now beside as it was at first (a default that rewrites every row).
 *
 * Usage: npx tsx bench/catalog-history.ts [--records 200000,2000000] [--streams 10] [--partitions 20] [--rounds 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { z } from 'zod';
import { DELETE_AT_ONCE } from '../src/load/catalog.ts';
import { DDL } from '../src/load/catalog-schema.ts';
import { openLake, readLakeState } from '../src/load/index.ts';
import { lake as lakeTypes } from '../src/schemas/lake.ts';
import { freshDatabase, startPostgres } from '../test/helpers/postgres.ts';
import { median, ratio } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '200000,2000000' },
    streams: { type: 'string', default: '10' },
    partitions: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
  },
});
const SIZES = values.records.split(',').map(Number);
const STREAMS = Number(values.streams);
const PARTITIONS = Number(values.partitions);
const ROUNDS = Number(values.rounds);
if (
  SIZES.some((n) => !Number.isInteger(n) || n < 0) ||
  ![STREAMS, PARTITIONS, ROUNDS].every((n) => Number.isInteger(n) && n >= 1)
) {
  console.error(
    '--records takes whole numbers separated by commas (200000,2000000); --streams, --partitions, --rounds one each',
  );
  process.exit(2);
}

/** What `streams()` asked before: every stream with a commit record, however old. */
const STREAMS_BEFORE =
  'select stream from avalake.states union select distinct stream from avalake.commits order by 1';
/** What it asks now: the states and the partitions' newest commits, one row per partition. */
const STREAMS_NOW = 'select stream from avalake.states union select stream from avalake.heads order by 1';

const streams = Array.from({ length: STREAMS }, (_, i) => `stream_${i}`);
const schema = z.object({ id: lakeTypes.int64(), note: z.string() });
const seconds = (since: number) => (performance.now() - since) / 1000;

const server = await startPostgres();
const dataDir = mkdtempSync(join(tmpdir(), 'avalake-bench-catalog-'));
const pool = new pg.Pool({ connectionString: server.url });
try {
  const lake = await openLake({ dataDir, catalog: server.url, runId: 'bench-setup' });
  for (const stream of streams)
    for (let p = 0; p < PARTITIONS; p++) {
      const flush = lake.begin({ stream, partition: { network: 'mainnet', address: `a${p}` }, schema });
      await flush.append([{ id: p, note: stream }]);
      await flush.commit({ next: 1 });
    }
  await lake.compact('all'); // folds every stream
  await lake.close();
  const [sample] = (await pool.query<{ record: unknown }>('select record from avalake.commits limit 1')).rows;
  const record = JSON.stringify(sample?.record);

  let added = 0;
  const rows: string[][] = [];
  for (const size of SIZES) {
    // Earlier records than any state covers: negative ids and seqs, below every real one.
    if (size > added)
      await pool.query(
        `insert into avalake.commits (commit_id, stream, seq, partition_id, record)
         select -i, 'stream_' || (i % ${STREAMS}), -i, 'network=mainnet/address=a' || (i % ${PARTITIONS}), $1::jsonb
         from generate_series($2::bigint, $3::bigint) as i`,
        [record, added + 1, size],
      );
    added = Math.max(added, size);
    await pool.query('vacuum analyze avalake.commits');
    const opens: number[] = [];
    const reads: number[] = [];
    const before: number[] = [];
    const now: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let started = performance.now();
      const opened = await openLake({ dataDir, catalog: server.url, runId: `bench-${size}-${round}` });
      await opened.close();
      opens.push(seconds(started));
      started = performance.now();
      const state = await readLakeState(dataDir, server.url);
      reads.push(seconds(started));
      if (state.size !== STREAMS) throw new Error(`read ${state.size} streams, expected ${STREAMS}`);
      for (const [sql, into] of [
        [STREAMS_BEFORE, before],
        [STREAMS_NOW, now],
      ] as const) {
        started = performance.now();
        const listed = await pool.query(sql);
        into.push(seconds(started));
        if (listed.rowCount !== STREAMS)
          throw new Error(`listed ${listed.rowCount} streams, expected ${STREAMS}`);
      }
    }
    const { rows: size_ } = await pool.query<{ size: string }>(
      "select pg_size_pretty(pg_total_relation_size('avalake.commits')) as size",
    );
    rows.push([
      size.toLocaleString('en-US'),
      size_[0]?.size ?? '?',
      median(opens).toFixed(3),
      median(reads).toFixed(3),
      (median(before) * 1000).toFixed(1),
      (median(now) * 1000).toFixed(2),
    ]);
    console.log(`${rows.at(-1)?.join(' | ')}`);
  }
  console.log(
    '\n| folded records | commits table | open, s | state read, s | streams listed before, ms | now, ms |',
  );
  console.log(
    '| -------------: | ------------: | ------: | ------------: | ------------------------: | ------: |',
  );
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);

  // A week and a day later: the next fold of each stream deletes what it covers (here, once, every
  // record added above: as a catalog of before does a week after the column came).
  await pool.query("update avalake.commits set written_at = written_at - interval '8 days'");
  const folding = await openLake({ dataDir, catalog: server.url, runId: 'bench-fold' });
  for (const stream of streams) {
    const flush = folding.begin({ stream, partition: { network: 'mainnet', address: 'a0' }, schema });
    await flush.append([{ id: 1, note: stream }]);
    await flush.commit({ next: 2 });
  }
  let started = performance.now();
  await folding.compact('all');
  const foldSeconds = seconds(started);
  await folding.close();
  const left = Number(
    (await pool.query<{ n: string }>('select count(*) as n from avalake.commits')).rows[0]?.n,
  );
  started = performance.now();
  const opened = await openLake({ dataDir, catalog: server.url, runId: 'bench-after' });
  await opened.close();
  console.log(
    `\nthe first fold a week later deleted ${(added - left).toLocaleString('en-US')} of ` +
      `${added.toLocaleString('en-US')} aged records (at most ${DELETE_AT_ONCE.toLocaleString('en-US')} a stream) in ` +
      `${foldSeconds.toFixed(2)} s; open after it ${seconds(started).toFixed(3)} s`,
  );

  const first = rows[0];
  const last = rows.at(-1);
  if (first && last && rows.length > 1)
    console.log(
      `\nlargest / smallest: open ${ratio(Number(last[2]), Number(first[2]))}, state read ${ratio(Number(last[3]), Number(first[3]))}, ` +
        `streams listed before ${ratio(Number(last[4]), Number(first[4]))}`,
    );

  // The first open of a catalog from before records were dated: the column added as the schema adds
  // it now (a constant default, then clock_timestamp() for new rows) beside as it did at first
  // (clock_timestamp() at once, which PostgreSQL fills in by rewriting every row), on copies alike.
  const upgrades: Record<string, number> = {};
  const largest = Math.max(...SIZES);
  for (const [label, added] of [
    ['now', DDL.slice(DDL.indexOf('do $$'), DDL.indexOf('create index if not exists commits_by_age'))],
    [
      'rewriting',
      'alter table avalake.commits add column written_at timestamptz not null default clock_timestamp();',
    ],
  ] as const) {
    const url = await freshDatabase(server.url);
    const before = new pg.Pool({ connectionString: url });
    try {
      await before.query(
        DDL.slice(0, DDL.indexOf('-- When the record was written')) +
          DDL.slice(DDL.indexOf('create table if not exists avalake.heads')),
      );
      await before.query(
        `insert into avalake.commits (stream, seq, partition_id, record)
         select 'stream_' || (i % ${STREAMS}), i, 'p' || (i % ${PARTITIONS}), $1::jsonb
         from generate_series(1, $2::bigint) as i`,
        [record, largest],
      );
      await before.query('vacuum analyze avalake.commits');
      const started = performance.now();
      await before.query(added);
      await before.query('create index if not exists commits_by_age on avalake.commits (stream, written_at)');
      upgrades[label] = seconds(started);
    } finally {
      await before.end();
    }
  }
  console.log(
    `\nfirst open of a catalog of before with ${largest.toLocaleString('en-US')} records: the column and its index in ` +
      `${upgrades.now?.toFixed(1)} s, against ${upgrades.rewriting?.toFixed(1)} s rewriting every row ` +
      `(${ratio(upgrades.now ?? 0, upgrades.rewriting ?? 0)})`,
  );
} finally {
  await pool.end();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
