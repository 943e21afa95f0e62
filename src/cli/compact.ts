import { existsSync } from 'node:fs';
import { acquireLock, type CompactionResult, isObjectStorage, openLake } from '../load/index.ts';
import { deviceFailureCode, errnoReason } from '../warehouse/output.ts';
import { buildLockOf, warehouseIn } from '../warehouse/paths.ts';
import { lakeOption } from './catalog.ts';
import { noLakeIn } from './data-dir.ts';
import { EXIT } from './exit.js';
import { lakeCommandExit } from './lake-failure.ts';
import { lakeStreamsFlag } from './lake-streams-flag.ts';

export interface CompactArgs {
  dataDir?: string;
  catalog?: string;
  /** With a bucket's lake: the local directory whose warehouse's builds compaction keeps apart from. */
  localDir?: string;
  /** Comma-separated streams; default every stream of the lake. */
  streams?: string;
  wait?: boolean;
  json?: boolean;
}

/** What one compaction pass did, for `run`'s report and `compact --json`. */
export interface CompactionReport {
  seconds: number;
  streams: CompactionResult[];
}

/**
 * Merges small files under the data directory's lock. `due`: only what passed its threshold (the end of
 * every `run`); `all`: every folder's small files (`avalake compact`).
 *
 * Also under the warehouse's build lock (build.ts), when the warehouse is in `warehouseDir` (default: a
 * local data directory): a build reads the lake's files as they were when it began, and compaction
 * deletes the files it merges, so it must not run while another run's build of that warehouse does.
 * Taken first, since a build never waits for the data directory's lock.
 */
export async function compactLake(options: {
  dataDir: string;
  mode: 'due' | 'all';
  streams?: readonly string[];
  wait?: boolean;
  catalog?: string;
  warehouseDir?: string;
}): Promise<CompactionReport> {
  // Monotonic: a wall clock stepped meanwhile must not make the compaction's seconds negative.
  const started = performance.now();
  const lock = { wait: options.wait ?? false };
  const warehouseDir =
    options.warehouseDir ?? (isObjectStorage(options.dataDir) ? undefined : options.dataDir);
  // No directory, no warehouse: nothing to keep apart from (and the lock file would have nowhere to go).
  const buildLock =
    warehouseDir !== undefined && existsSync(warehouseDir)
      ? await acquireLock(buildLockOf(warehouseIn(warehouseDir)), lock)
      : undefined;
  try {
    const lake = await openLake({
      dataDir: options.dataDir,
      lock,
      ...(options.catalog ? { catalog: options.catalog } : {}),
    });
    try {
      const streams = await lake.compact(options.mode, options.streams);
      return { seconds: (performance.now() - started) / 1000, streams };
    } finally {
      await lake.close();
    }
  } finally {
    await buildLock?.release();
  }
}

export function formatCompaction(report: CompactionReport): string {
  if (report.streams.length === 0) return `nothing to compact (${report.seconds.toFixed(1)}s)`;
  const width = Math.max(...report.streams.map((s) => s.stream.length));
  const lines = report.streams.map(
    (s) =>
      `${s.stream.padEnd(width)}  ${
        s.damaged
          ? 'left as it was: a file is damaged'
          : `${s.merged} files → ${s.written}  (${(s.bytes / 1024 / 1024).toFixed(1)} MiB rewritten)`
      }`,
  );
  const compacted = report.streams.filter((s) => !s.damaged).length;
  lines.push(`compacted ${compacted} streams in ${report.seconds.toFixed(1)}s`);
  return lines.join('\n');
}

/** The streams a compaction left as they were, each with why: a file of theirs is damaged. */
export const damagedStreams = (report: CompactionReport): string[] =>
  report.streams.flatMap((s) => (s.damaged ? [s.damaged] : []));

/**
 * A compaction stopped by its device (full, over quota, a file size limit) as one line: what it merged
 * is committed or not at all, so the lake is whole either way. Undefined for any other failure.
 */
export function compactionDeviceFailure(error: unknown, dataDir: string): string | undefined {
  const code = deviceFailureCode(error);
  if (code === undefined) return undefined;
  return (
    `compacting the lake in ${dataDir} failed: ${errnoReason({ code })}; the lake is whole (a stream's ` +
    'compaction commits all of it or nothing), and the next compaction continues once the device has room'
  );
}

/**
 * `avalake compact`: exit 0, 2 for an unknown stream or a data directory with no lake or not writable,
 * 75 when another run holds the lock or another build the warehouse's, 1 for a damaged lake (the other
 * streams compacted all the same) or a device with no room.
 */
export async function compact(
  args: CompactArgs,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  const lake = await lakeOption(args, env);
  if (typeof lake === 'number') return lake;
  const noLake = await noLakeIn(lake.dataDir);
  if (noLake) {
    process.stderr.write(`avalake: ${noLake}\n`);
    return EXIT.usage;
  }
  const { dataDir, catalog, localDir } = lake;
  const flag = await lakeStreamsFlag(args.streams, dataDir, catalog);
  if ('refused' in flag) {
    process.stderr.write(`avalake: ${flag.refused}\n`);
    return EXIT.usage;
  }
  const { streams } = flag;
  try {
    const report = await compactLake({
      dataDir,
      mode: 'all',
      ...(streams ? { streams } : {}),
      ...(args.wait ? { wait: true } : {}),
      ...(catalog ? { catalog } : {}),
      // A bucket's lake: the builds of this machine's warehouse (run's compaction does the same).
      warehouseDir: localDir,
    });
    process.stdout.write(`${args.json ? JSON.stringify(report) : formatCompaction(report)}\n`);
    const damaged = damagedStreams(report);
    for (const message of damaged) process.stderr.write(`avalake: ${message}\n`);
    return damaged.length > 0 ? EXIT.failed : EXIT.ok;
  } catch (error) {
    const failed = lakeCommandExit(error, dataDir);
    if (failed !== undefined) return failed;
    const device = compactionDeviceFailure(error, dataDir);
    if (device) {
      process.stderr.write(`avalake: ${device}\n`);
      return EXIT.failed;
    }
    throw error;
  }
}
