import { copyFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fsyncDir, fsyncFile, mkdirDurable, sha256File, writeDurable } from './durable.ts';
import { listDir } from './file-records.ts';

/**
 * Where the lake's files are kept: a local directory (the default) or an S3-compatible bucket. The commit
 * protocol (commit.ts), flushes, confirmations and compaction name files by their lake-relative path
 * (`rewards/network=fuji/part-….parquet`, `_staging/rewards/part-….parquet`, `/`-separated) and go
 * through this, so one protocol serves both.
 */
export interface LakeStorage {
  /** For messages: the lake's directory or its `s3://` URL. */
  readonly where: string;
  /**
   * Object storage: no rename, no links, no lock file. Its commit log must live in a catalog, a move is
   * a copy and a delete, and compaction publishes merged files instead of swapping generations.
   */
  readonly remote: boolean;
  /** Creates a file (it must not exist) with these bytes, durably; its folder is made durable by `sync`. */
  write(path: string, bytes: Uint8Array): Promise<void>;
  /**
   * Creates a file through a local file that another library writes (DuckDB's COPY): `make` writes it,
   * then it is made durable in place or uploaded.
   */
  writeFrom<T>(path: string, make: (localFile: string) => Promise<T>): Promise<T>;
  /** The names of the files and folders directly in a folder, sorted; none when it does not exist. */
  list(folder: string): Promise<string[]>;
  /** The sizes of the files directly in a folder, by name (one LIST on a bucket); none when it does not exist. */
  sizes(folder: string): Promise<Map<string, number>>;
  /** A file's size in bytes; undefined when it does not exist. */
  size(path: string): Promise<number | undefined>;
  sha256(path: string): Promise<string>;
  /** Deletes a file; one already gone is fine. */
  remove(path: string): Promise<void>;
  /** Copies a file to another path (which it replaces). */
  copy(from: string, to: string): Promise<void>;
  /**
   * Moves a file to `to`. A move found already done (`from` gone, `to` there: another writer's recovery
   * moved it) is fine; the caller makes the folders durable with `sync`.
   */
  move(from: string, to: string): Promise<void>;
  /** Makes a folder's entries (creates, renames, deletes) durable: fsync on disk, nothing on S3. */
  sync(folder: string): Promise<void>;
  /**
   * Runs `body` with local files holding these lake files, for a reader such as DuckDB: the files
   * themselves on disk, downloads (removed afterwards) from a bucket.
   */
  readLocally<T>(paths: readonly string[], body: (files: string[]) => Promise<T>): Promise<T>;
  /** Copies a lake file to a local file (a reader's mirror); a partial copy never stands at `file`. */
  download(path: string, file: string): Promise<void>;
  /** The folders known to exist may be gone (a compaction removed a generation): look again. */
  forgetFolders(): void;
  close(): void;
}

/** The lake-relative path of a stream's staging folder, and of one staged file. */
export const stagingFolder = (stream: string): string => `_staging/${stream}`;
export const stagedPath = (stream: string, name: string): string => `${stagingFolder(stream)}/${name}`;

/** The lake-relative folder of a path: `rewards/network=fuji` for `rewards/network=fuji/part-….parquet`. */
export const folderOf = (path: string): string => path.slice(0, Math.max(0, path.lastIndexOf('/')));

/** A lake path's file name. */
export const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/**
 * The storage with `size` answered from one listing per folder, each read once: many files judged at one
 * instant (status over a whole lake) cost a LIST per folder instead of a HEAD per file. A size is as old
 * as its folder's listing, so the view is for one look, not to keep.
 */
export function withListedSizes(storage: LakeStorage): LakeStorage {
  const listings = new Map<string, Promise<Map<string, number>>>();
  const listed = (folder: string) => {
    const known = listings.get(folder);
    if (known) return known;
    const listing = storage.sizes(folder);
    listings.set(folder, listing);
    return listing;
  };
  return {
    ...storage,
    size: async (path) => (await listed(folderOf(path))).get(baseName(path)),
  };
}

/** The lake in a local directory: every write fsynced, every move a rename, as DESIGN.md's protocol says. */
export function diskStorage(lakeDir: string): LakeStorage {
  const knownDirs = new Set<string>();
  const local = (path: string) => (path === '' ? lakeDir : join(lakeDir, ...path.split('/')));
  return {
    where: lakeDir,
    remote: false,

    async write(path, bytes) {
      const file = local(path);
      await mkdirDurable(dirname(file), knownDirs);
      await writeDurable(file, bytes);
    },

    async writeFrom(path, make) {
      const file = local(path);
      await mkdirDurable(dirname(file), knownDirs);
      const result = await make(file);
      await fsyncFile(file);
      return result;
    },

    list: (folder) => listDir(local(folder)),

    async sizes(folder) {
      const sizes = new Map<string, number>();
      for (const entry of await readdir(local(folder), { withFileTypes: true }).catch(() => [])) {
        if (!entry.isFile()) continue;
        // A file merged away by a compaction since the listing is simply not there.
        const size = await stat(join(local(folder), entry.name)).then(
          (s) => s.size,
          () => undefined,
        );
        if (size !== undefined) sizes.set(entry.name, size);
      }
      return sizes;
    },

    size: (path) =>
      stat(local(path)).then(
        (s) => s.size,
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined;
          throw error;
        },
      ),

    sha256: (path) => sha256File(local(path)),

    async remove(path) {
      await unlink(local(path)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    },

    async copy(from, to) {
      await mkdirDurable(dirname(local(to)), knownDirs);
      await copyFile(local(from), local(to));
      await fsyncFile(local(to));
    },

    async move(from, to) {
      const target = local(to);
      await mkdirDurable(dirname(target), knownDirs);
      try {
        await rename(local(from), target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        // Another writer's recovery moved it first (its writer was taken for gone): it is where it belongs.
        if ((await stat(target).catch(() => undefined)) === undefined) throw error;
      }
    },

    sync: (folder) => fsyncDir(local(folder)),

    readLocally: (paths, body) => body(paths.map(local)),

    async download(path, file) {
      await copyFile(local(path), `${file}.part`);
      await rename(`${file}.part`, file);
    },

    forgetFolders: () => knownDirs.clear(),
    close: () => knownDirs.clear(),
  };
}

/**
 * The lake's object storage failed past its retries, or cannot be used at all (no such bucket, no
 * credentials): names the object (never a credential) and what to check.
 */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
  /** `missing`: the object does not exist (a reader may have raced a compaction that removed it). */
  constructor(
    what: string,
    cause: unknown,
    readonly missing = false,
  ) {
    const reason = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(
      `${what} failed (${reason}): check the bucket, the endpoint (AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL) ` +
        'and the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or AWS_PROFILE); what was committed stays as it was',
      { cause },
    );
  }
}

export { isObjectStorage, parseObjectStorageUrl } from './layout.ts';

/** Runs `work(i)` for i in [0, count), at most `limit` at once; the first failure is thrown once all settle. */
export async function eachLimited(
  count: number,
  limit: number,
  work: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await work(i).catch((error) => failures.push(error));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  if (failures.length > 0) throw failures[0];
}
