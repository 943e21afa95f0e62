import { join } from 'node:path';

/**
 * Where everything lives under a data directory:
 *
 *   data/avalake.lock                                      one writer per data directory
 *   data/lake/<stream>/network=<n>/[chain=<id>/]part-<seq>-<n>.parquet     what analysts read
 *   data/lake/_commits/<stream>/<seq>.json                 the commit log; the newest per partition is its checkpoint
 *   data/lake/_commits/<stream>/state-<seq>.json           the log folded up to <seq>: partitions and live files
 *   data/lake/_generations/<stream>/g<seq>/…               the stream's folders; data/lake/<stream> is a link to one
 *   data/lake/_staging/<stream>/part-<seq>-<n>.parquet     written, not yet committed or not yet moved
 *   data/lake/_rejects/stream=<stream>/network=<n>/part-<seq>-<n>.parquet   records that failed validation
 *
 * Note: DuckDB's `**` glob does NOT skip `_`- or `.`-prefixed folders (checked with DuckDB 1.5: a file in
 * `<stream>/_staging/` is read, and its missing key=value folders even fail the query with "Hive partition
 * mismatch"). So bookkeeping sits beside the streams, not inside them: `data/lake/<stream>/**` holds only
 * committed data, and staging stays on the same filesystem so the final rename is atomic.
 */

/** Partition keys that become Hive folders, in this order; every other key is only a column. */
export const FOLDER_KEYS = ['network', 'chain'] as const;

/** One partition of a stream: the values of its partition keys (network always, chain, address, …). */
export type Partition = Readonly<Record<string, string>>;

const SEQ_DIGITS = 10;
const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export interface LakePaths {
  dataDir: string;
  lakeDir: string;
  lockFile: string;
  commitsDir(stream: string): string;
  stagingDir(stream: string): string;
  /** `data/lake/<stream>`: the link readers glob through. */
  streamDir(stream: string): string;
  generationsDir(stream: string): string;
  generationDir(stream: string, generation: number): string;
}

export function lakePaths(dataDir: string): LakePaths {
  const lakeDir = join(dataDir, 'lake');
  return {
    dataDir,
    lakeDir,
    lockFile: join(dataDir, 'avalake.lock'),
    commitsDir: (stream) => join(lakeDir, '_commits', checkSegment('stream', stream)),
    stagingDir: (stream) => join(lakeDir, '_staging', checkSegment('stream', stream)),
    streamDir: (stream) => join(lakeDir, checkSegment('stream', stream)),
    generationsDir: (stream) => join(lakeDir, '_generations', checkSegment('stream', stream)),
    generationDir: (stream, generation) =>
      join(lakeDir, '_generations', checkSegment('stream', stream), generationName(generation)),
  };
}

export const isSafeSegment = (value: string): boolean => SAFE_SEGMENT.test(value) && !value.includes('..');

/** Stream names and folder values become path segments: refuse anything that could escape or collide. */
export function checkSegment(what: string, value: string): string {
  if (!isSafeSegment(value)) {
    throw new Error(`${what} ${JSON.stringify(value)} cannot be a folder name: use letters, digits, . _ -`);
  }
  return value;
}

export const seqText = (seq: number): string => String(seq).padStart(SEQ_DIGITS, '0');

export const commitFileName = (seq: number): string => `${seqText(seq)}.json`;

/** The folded state of a stream's log up to `seq`. */
export const stateFileName = (seq: number): string => `state-${seqText(seq)}.json`;

export function seqOfStateFile(name: string): number | undefined {
  const m = /^state-(\d+)\.json$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** A generation of a stream's folders is named for the compaction that made it (0: the first). */
export const generationName = (generation: number): string => `g${seqText(generation)}`;

/** Parses a commit record's file name; undefined for anything else (tmp files, strays). */
export function seqOfCommitFile(name: string): number | undefined {
  const m = /^(\d+)\.json$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

export type FileTable = 'data' | 'rejects';

/** A staged file's name: which commit (seq) and table it belongs to, and its number within the commit. */
export const stagedFileName = (table: FileTable, seq: number, n: number): string =>
  `${table === 'data' ? 'part' : 'rejects'}-${seqText(seq)}-${n}.parquet`;

export function seqOfStagedFile(name: string): number | undefined {
  const m = /^(?:part|rejects)-(\d+)-\d+\.parquet$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The Hive folders of a partition, e.g. `network=mainnet/chain=43114`. */
export function partitionFolders(partition: Partition): string[] {
  if (partition.network === undefined) throw new Error('a partition needs a network');
  const folders: string[] = [];
  for (const key of FOLDER_KEYS) {
    const value = partition[key];
    if (value !== undefined) folders.push(`${key}=${checkSegment(key, value)}`);
  }
  return folders;
}

/** Final path of a file relative to the lake directory, with `/` separators (it goes into commit records). */
export function lakeRelativePath(
  stream: string,
  partition: Partition,
  table: FileTable,
  seq: number,
  n: number,
) {
  const name = `part-${seqText(seq)}-${n}.parquet`;
  if (table === 'data')
    return [checkSegment('stream', stream), ...partitionFolders(partition), name].join('/');
  // Rejects: only the network folder, so one glob over all streams' rejects has the same Hive keys.
  const network = checkSegment('network', partition.network ?? '');
  return ['_rejects', `stream=${checkSegment('stream', stream)}`, `network=${network}`, name].join('/');
}

/** A stable identity for a partition: its keys sorted. */
export function partitionId(partition: Partition): string {
  return JSON.stringify(Object.entries(partition).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Fails early, before anything is written, for a stream or partition that cannot be laid out. */
export function layoutCheck(stream: string, partition: Partition): void {
  checkSegment('stream', stream);
  for (const [key, value] of Object.entries(partition)) {
    if (typeof value !== 'string')
      throw new Error(`partition key ${key} must be a string, got ${typeof value}`);
  }
  partitionFolders(partition);
}

/** `s3://bucket/prefix` → its parts; undefined for anything else (a local directory). */
export function parseObjectStorageUrl(dataDir: string): { bucket: string; prefix: string } | undefined {
  const m = /^s3:\/\/([^/]*)\/?(.*)$/.exec(dataDir);
  if (!m) return undefined;
  return { bucket: m[1] as string, prefix: (m[2] as string).replace(/\/+$/, '') };
}

/** Whether a data directory names object storage rather than a local directory. */
export const isObjectStorage = (dataDir: string): boolean => dataDir.startsWith('s3://');
