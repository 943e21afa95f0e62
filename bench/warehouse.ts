/**
 * Issue 5: "A benchmark: build time over a lake of ten million rows, and an incremental build after a
 * small extract."
 *
 * 1. An in-process emulator (fixed clock) and one extract of every stream the models read: a real lake
 *    with its commit log and the exact Parquet schemas of the load layer.
 * 2. The lake is grown to --rows rows with DuckDB COPY: each partition folder gets one more file holding
 *    its rows repeated, the first string column of the stream's primary key suffixed so every copy is a
 *    distinct record (staging dedupes by key; copies with equal keys would collapse). Each file is
 *    committed through the commit log: the warehouse reads only the files the log names.
 * 3. `buildWarehouse` from scratch (every model), timed.
 * 4. The emulator's clock moves an hour, one more extract of the metrics stream (a small one: the hourly
 *    re-read of the latest points), then
 *    `buildWarehouse --select` of the staging models of the streams that got rows, and everything
 *    downstream of them, timed.
 * Printed side by side with their ratio. Everything lives in a temporary folder, removed at the end.
 * Usage: npx tsx bench/warehouse.ts [--rows 10000000] [--keep]
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { demoPipelineOf } from '../src/emulator/demo-pipeline.ts';
import { createEmulator } from '../src/emulator/index.ts';
import { resolveExtractConfig } from '../src/extract/config.ts';
import { createHttpClient } from '../src/extract/http.ts';
import { type RunSummary, runExtract } from '../src/extract/run.ts';
import { STREAMS } from '../src/extract/streams/index.ts';
import { createCommitLog } from '../src/load/commit.ts';
import { sha256File } from '../src/load/durable.ts';
import { lakePaths, type Partition, partitionFolders, seqText, stagedFileName } from '../src/load/layout.ts';
import { acquireLock } from '../src/load/lock.ts';
import { folderOf } from '../src/load/storage.ts';
import { buildWarehouse } from '../src/warehouse/build.ts';
import { queryRows, quoteIdent, quoteLiteral, withDuckDB } from '../src/warehouse/duckdb.ts';
import { loadModels } from '../src/warehouse/models.ts';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '10000000' }, keep: { type: 'boolean', default: false } },
});
const TARGET_ROWS = Number(values.rows);
const TEST_EPOCH = 1_793_577_600;

const models = loadModels('sql/models');
const streams = [...new Set(models.flatMap((m) => m.lakeStreams))];
const dir = mkdtempSync(join(tmpdir(), 'avalake-bench-warehouse-'));
const dataDir = join(dir, 'data');
const lakeDir = join(dataDir, 'lake');
const emulator = await createEmulator({ clock: `fixed:${TEST_EPOCH}`, rateLimit: 'off', seed: 7 });
const seconds = (since: number) => (performance.now() - since) / 1000;

async function extract(only: readonly string[] = streams): Promise<RunSummary> {
  const pipeline = demoPipelineOf(emulator.truth, 'fuji', emulator.url);
  const path = join(dir, 'pipeline.json');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(path, JSON.stringify(pipeline));
  const config = await resolveExtractConfig({ pipeline: path, dataDir, streams: only.join(',') }, {});
  const http = createHttpClient({ userAgent: 'avalake/bench' });
  try {
    return await runExtract({ pipeline: config.pipeline, streams: config.streams, dataDir, http });
  } finally {
    await http.close();
  }
}

/**
 * Commits one synthetic file per partition folder of every stream: its rows repeated, through the commit
 * log (staged, then named by a commit record that keeps the partition's checkpoint), since the warehouse
 * reads exactly the files the log names. Returns the rows added.
 */
async function growLake(copies: number): Promise<number> {
  const paths = lakePaths(dataDir);
  const lock = await acquireLock(paths.lockFile);
  const log = createCommitLog(paths);
  let added = 0;
  try {
    await log.open();
    await withDuckDB(':memory:', async (db) => {
      for (const stream of streams) {
        const state = log.state(stream);
        if (!state) continue;
        const definition = STREAMS.find((s) => s.name === stream);
        // One partition per folder stands for it: its checkpoint is the commit's, unchanged.
        const byFolder = new Map<string, Partition>();
        for (const p of state.partitions.values())
          byFolder.set([stream, ...partitionFolders(p.partition)].join('/'), p.partition);
        for (const [folder, partition] of byFolder) {
          const files = state.files.filter((f) => f.table === 'data' && folderOf(f.path) === folder);
          if (files.length === 0) continue;
          const sources = `[${files.map((f) => quoteLiteral(join(lakeDir, ...f.path.split('/')))).join(', ')}]`;
          const described = await queryRows(
            db,
            `describe select * from read_parquet(${sources}, union_by_name = true)`,
          );
          const columns = new Map(described.map((r) => [String(r.column_name), String(r.column_type)]));
          const key = definition?.primaryKey.find((k) => columns.get(k) === 'VARCHAR');
          const replace = key ? ` replace (${quoteIdent(key)} || '~' || i as ${quoteIdent(key)})` : '';
          const seq = await log.allocateSeq(stream);
          const staged = stagedFileName('data', seq, 0);
          mkdirSync(paths.stagingDir(stream), { recursive: true });
          const out = join(paths.stagingDir(stream), staged);
          const [copied] = await queryRows(
            db,
            `copy (select * exclude (i)${replace} from read_parquet(${sources}, union_by_name = true), range(${copies}) as r(i))
             to ${quoteLiteral(out)} (format parquet, compression zstd)`,
          );
          const rows = Number(copied?.Count ?? 0);
          await log.commit({
            format: 1,
            stream,
            seq,
            partition: { ...partition },
            runId: 'bench-grow',
            committedAt: new Date().toISOString(),
            files: [
              {
                path: `${folder}/part-${seqText(seq)}-0.parquet`,
                staged,
                table: 'data',
                rows,
                bytes: statSync(out).size,
                sha256: await sha256File(out),
              },
            ],
            checkpoint: log.latest(stream, partition)?.checkpoint ?? null,
          });
          added += rows;
        }
      }
    });
    await log.fold();
  } finally {
    await lock.release();
  }
  return added;
}

try {
  let started = performance.now();
  const first = await extract();
  const seedRows = first.partitions.reduce((n, p) => n + p.rows, 0);
  console.log(`extract: ${seedRows} rows in ${seconds(started).toFixed(1)} s (${first.status})`);

  // Grow the lake: one synthetic file per partition folder, its rows repeated `copies` times.
  const copies = Math.max(1, Math.ceil(TARGET_ROWS / seedRows) - 1);
  started = performance.now();
  let lakeRows = await growLake(copies);
  lakeRows += seedRows;
  console.log(`lake: grown to ${lakeRows} rows in ${seconds(started).toFixed(1)} s`);

  started = performance.now();
  const full = await buildWarehouse({ dataDir });
  const fullSeconds = seconds(started);
  for (const b of full.built.filter((b) => b.materialized === 'table'))
    console.log(`  table ${b.name.padEnd(28)} ${String(b.rows).padStart(10)} rows ${b.seconds.toFixed(2)} s`);

  emulator.advance(3600);
  started = performance.now();
  const second = await extract(['metrics']);
  const changed = [...new Set(second.partitions.filter((p) => p.rows > 0).map((p) => p.stream))];
  const newRows = second.partitions.reduce((n, p) => n + p.rows, 0);
  console.log(`small extract: ${newRows} rows in ${changed.join(', ')} (${seconds(started).toFixed(1)} s)`);
  const select = models
    .filter((m) => m.lakeStreams.some((s) => changed.includes(s)))
    .map((m) => `${m.name}+`)
    .join(',');
  started = performance.now();
  const incremental = await buildWarehouse({ dataDir, select });
  const incrementalSeconds = seconds(started);

  console.log('');
  console.log(`lake rows           ${lakeRows}`);
  console.log(
    `full build          ${fullSeconds.toFixed(2)} s  (${full.built.length} models, ${full.skipped.length} skipped)`,
  );
  console.log(
    `incremental build   ${incrementalSeconds.toFixed(2)} s  (${incremental.built.length} models rebuilt, ${incremental.kept.length} kept; --select ${select})`,
  );
  console.log(`ratio               ${(incrementalSeconds / fullSeconds).toFixed(2)} of the full build`);
} finally {
  await emulator.close();
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}
