import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { boundedRetryStrategy, retryStreamed } from './s3-retry.ts';
import { eachLimited, type LakeStorage, parseObjectStorageUrl, StorageUnavailableError } from './storage.ts';

/**
 * The lake in an S3-compatible bucket: `s3://bucket/prefix` holds `prefix/lake/…` laid out as a local
 * data directory's `lake/` is, so Spark, Trino and DuckDB glob it the same way. Objects are written once
 * under unique keys (the commit's sequence number is in every name) and never changed; a "move" into
 * the lake is a server-side copy and a delete of the staged object, done only after the commit record
 * is durable in the catalog, so a reader listing `lake/<stream>/` never sees an uncommitted file.
 *
 * Endpoint, region and credentials come from the standard AWS variables and files (AWS_ENDPOINT_URL_S3 or
 * AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_PROFILE, …) through the SDK's own chain; a custom
 * endpoint (MinIO, Ceph, a test server) is addressed path-style, as those servers expect.
 */

/** Attempts per request (backoff with jitter on 5xx, throttling, resets: see s3-retry.ts). */
const DEFAULT_MAX_ATTEMPTS = 6;
/** Downloads and uploads in flight at once when a reader fetches many files. */
const TRANSFER_CONCURRENCY = 8;

// Note: the SDK warns on Node 20 that versions from 2027 will need Node 22; package.json pins one that
// supports Node 20, so the warning would only be noise on every run's stderr.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export async function openS3Storage(
  dataDir: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<LakeStorage> {
  const location = parseObjectStorageUrl(dataDir);
  if (!location) throw new Error(`not an s3:// URL: ${dataDir}`);
  const { bucket, prefix } = location;
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  const maxAttempts = Number(env.AWS_MAX_ATTEMPTS) || DEFAULT_MAX_ATTEMPTS;
  // Our own strategy, not the SDK's standard one: no client-wide retry quota that a burst of failures
  // can drain, so that each request keeps its attempts (why, in s3-retry.ts).
  const retryStrategy = boundedRetryStrategy(maxAttempts);
  const client = new S3Client({
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    maxAttempts,
    retryStrategy,
    // Note: the SDK's default since 2025 frames streamed uploads as `aws-chunked` with a trailing
    // checksum, which many S3-compatible servers (older MinIO, Ceph, s3rver) store verbatim, chunk
    // headers and all. Checksums only where the operation requires them; avalake checks sha256 itself.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
  });
  const root = prefix === '' ? 'lake' : `${prefix}/lake`;
  const keyOf = (path: string) => (path === '' ? root : `${root}/${path}`);
  const where = `s3://${bucket}/${root}`;

  const isNotFound = (error: unknown) =>
    error instanceof S3ServiceException &&
    (error.$metadata.httpStatusCode === 404 || error.name === 'NotFound' || error.name === 'NoSuchKey');

  /** Runs one request; a failure past the SDK's retries names the operation and the object. */
  const send = async <T>(what: string, path: string, request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (error) {
      throw new StorageUnavailableError(`${what} of s3://${bucket}/${keyOf(path)}`, error, isNotFound(error));
    }
  };

  const size = async (path: string): Promise<number | undefined> => {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: keyOf(path) }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw new StorageUnavailableError(`HeadObject of s3://${bucket}/${keyOf(path)}`, error);
    }
  };

  const get = (path: string) =>
    send('GetObject', path, async () => {
      const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: keyOf(path) }));
      return answer.Body as Readable;
    });

  const download = async (path: string, file: string) => {
    const partial = `${file}.part-${randomUUID()}`;
    try {
      await pipeline(await get(path), createWriteStream(partial, { flags: 'wx' }));
      await rename(partial, file);
    } finally {
      await rm(partial, { force: true });
    }
  };

  const putCommand = (path: string, body: Uint8Array | Readable, length: number) =>
    new PutObjectCommand({ Bucket: bucket, Key: keyOf(path), Body: body, ContentLength: length });

  const put = (path: string, body: Uint8Array | (() => Readable), length: number) =>
    send('PutObject', path, () => {
      if (typeof body !== 'function') return client.send(putCommand(path, body, length));
      // The SDK gives a request with a stream for its body a single attempt: retried here, each attempt
      // with a new stream, since a retry must send the whole body.
      return retryStreamed(retryStrategy, async () => {
        const stream = body();
        try {
          return await client.send(putCommand(path, stream, length));
        } finally {
          stream.destroy();
        }
      });
    });

  const remove = (path: string) =>
    send('DeleteObject', path, () =>
      client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keyOf(path) })),
    ).then(() => undefined);

  const copy = (from: string, to: string) =>
    send('CopyObject', from, () =>
      client.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: keyOf(to),
          // Note: `=` (a Hive folder, `network=fuji`) stays as it is: S3 decodes the whole source, some
          // S3-compatible servers (s3rver) only what decodeURI does, which leaves `%3D` as it is.
          CopySource: `${bucket}/${keyOf(from)
            .split('/')
            .map((segment) => encodeURIComponent(segment).replaceAll('%3D', '='))
            .join('/')}`,
        }),
      ),
    ).then(() => undefined);

  /** What is directly in a folder: its subfolders, and its objects with their sizes (one LIST a page). */
  const listing = async (folder: string) => {
    const folders = new Set<string>();
    const files = new Map<string, number>();
    const within = `${keyOf(folder)}/`;
    let token: string | undefined;
    do {
      const page = await send('ListObjectsV2', folder, () =>
        client.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: within,
            Delimiter: '/',
            ...(token ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      for (const p of page.CommonPrefixes ?? [])
        if (p.Prefix) folders.add(p.Prefix.slice(within.length).replace(/\/$/, ''));
      for (const o of page.Contents ?? []) if (o.Key) files.set(o.Key.slice(within.length), o.Size ?? 0);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    folders.delete('');
    files.delete('');
    return { folders, files };
  };

  /** A scratch folder for files DuckDB reads or writes, removed when `body` ends. */
  const withScratch = async <T>(body: (dir: string) => Promise<T>): Promise<T> => {
    const dir = await mkdtemp(join(tmpdir(), 'avalake-s3-'));
    try {
      return await body(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };

  // Fails early and clearly for a bucket that does not exist or these credentials cannot reach.
  await send('HeadBucket', '', () => client.send(new HeadBucketCommand({ Bucket: bucket })));

  return {
    where,
    remote: true,

    write: (path, bytes) => put(path, bytes, bytes.byteLength).then(() => undefined),

    writeFrom: (path, make) =>
      withScratch(async (dir) => {
        const file = join(dir, 'out.parquet');
        const result = await make(file);
        const { size: length } = await stat(file);
        await put(path, () => createReadStream(file), length);
        return result;
      }),

    async list(folder) {
      const { folders, files } = await listing(folder);
      return [...new Set([...folders, ...files.keys()])].sort();
    },

    sizes: async (folder) => (await listing(folder)).files,

    size,

    async sha256(path) {
      const hash = createHash('sha256');
      for await (const chunk of await get(path)) hash.update(chunk as Buffer);
      return hash.digest('hex');
    },

    remove,
    copy,

    async move(from, to) {
      try {
        await copy(from, to);
      } catch (error) {
        // Another writer's recovery moved it first: it is where it belongs.
        if ((await size(from)) !== undefined || (await size(to)) === undefined) throw error;
        return;
      }
      await remove(from);
    },

    // A PUT, COPY or DELETE that answered is durable: there is no folder to sync.
    sync: async () => {},

    readLocally: (paths, body) =>
      withScratch(async (dir) => {
        const files = paths.map((_, i) => join(dir, `${i}.parquet`));
        await eachLimited(paths.length, TRANSFER_CONCURRENCY, (i) =>
          download(paths[i] as string, files[i] as string),
        );
        return body(files);
      }),

    download,
    forgetFolders: () => {},
    close: () => client.destroy(),
  };
}
