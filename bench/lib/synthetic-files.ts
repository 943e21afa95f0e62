import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { createCommitLog } from '../../src/load/commit.ts';
import { sha256File } from '../../src/load/durable.ts';
import {
  type LakePaths,
  type Partition,
  partitionFolders,
  seqText,
  stagedFileName,
} from '../../src/load/layout.ts';
import { folderOf } from '../../src/load/storage.ts';
import { queryRows, quoteLiteral } from '../../src/warehouse/duckdb.ts';

type CommitLog = ReturnType<typeof createCommitLog>;

/** One partition per folder of a stream (network, chain, …): the files of a folder are read together. */
export function foldersOf(log: CommitLog, stream: string): Map<string, Partition> {
  const byFolder = new Map<string, Partition>();
  for (const p of log.state(stream)?.partitions.values() ?? [])
    byFolder.set([stream, ...partitionFolders(p.partition)].join('/'), p.partition);
  return byFolder;
}

/** The committed data files of a folder, as one `read_parquet` (its own columns, not the folder's). */
export function folderFiles(
  log: CommitLog,
  paths: LakePaths,
  stream: string,
  folder: string,
): string | undefined {
  const files = (log.state(stream)?.files ?? []).filter(
    (f) => f.table === 'data' && folderOf(f.path) === folder,
  );
  if (files.length === 0) return undefined;
  return `read_parquet([${files.map((f) => quoteLiteral(join(paths.lakeDir, ...f.path.split('/')))).join(', ')}], union_by_name = true, hive_partitioning = false)`;
}

/**
 * Commits a file of the rows `select` gives to a stream's folder, through the commit log as a run
 * commits (staged, then named by a commit record that keeps the partition's checkpoint), so every
 * reader of the lake sees it. The caller holds the lake's lock and has opened `log`. Returns its rows.
 */
export async function commitSelected(
  db: DuckDBConnection,
  log: CommitLog,
  paths: LakePaths,
  target: { stream: string; folder: string; partition: Partition },
  select: string,
): Promise<number> {
  const { stream, folder, partition } = target;
  const seq = await log.allocateSeq(stream);
  const staged = stagedFileName('data', seq, 0);
  mkdirSync(paths.stagingDir(stream), { recursive: true });
  const out = join(paths.stagingDir(stream), staged);
  const [copied] = await queryRows(
    db,
    `copy (${select}) to ${quoteLiteral(out)} (format parquet, compression zstd)`,
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
  return rows;
}
