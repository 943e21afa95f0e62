import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request,
  type ServerResponse,
} from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsCommand,
  type ListObjectsCommandOutput,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';

/**
 * A throwaway S3 for tests: s3rver in this process, loopback only, its objects in a temp directory.
 * s3rver accepts any signature made with its built-in key pair S3RVER/S3RVER and serves path-style URLs.
 */
export interface S3TestServer {
  /** Where the server listens: `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** The standard AWS variables a child process needs to reach this server (and nothing else). */
  env: Record<string, string>;
  /** Closes the server and removes its directory. */
  stop(): Promise<void>;
}

/** Anything that names an S3 endpoint: a test server, or a proxy in front of one. */
export interface S3Endpoint {
  endpoint: string;
}

/** Counts of what a faulty proxy did, updated as requests arrive. */
export interface FaultStats {
  requests: number;
  failed: number;
  dropped: number;
}

/**
 * Which requests a faulty proxy spoils: every n-th of the shared request count (1-based). The proxy reads
 * it at each request, so a test may change it while the proxy runs (e.g. fail everything from now on).
 */
export interface FaultSpec {
  /** Every failEvery-th request gets an HTTP 500 S3 error and is not forwarded. */
  failEvery?: number;
  /** Every dropEvery-th request has its socket destroyed without an answer and is not forwarded. */
  dropEvery?: number;
  /**
   * At most this many attempts in a row of one request (its method and URL) are spoiled; the next is
   * forwarded whatever the count. Without it, concurrent requests moving the shared count between one
   * request's retries can land them on fault after fault: in 30 runs of `avalake run` one request met
   * 7 in a row, past the client's attempts, which tests luck rather than retries.
   */
  maxInARow?: number;
  /**
   * With it, a failed request is answered as S3 throttles, 503 SlowDown, with these headers besides
   * (a Retry-After, a Date), made afresh for each answer.
   */
  throttle?: () => Record<string, string>;
}

/** A loopback proxy in front of an S3 endpoint that injects faults. */
export interface FaultyProxy {
  endpoint: string;
  stats: FaultStats;
  stop(): Promise<void>;
}

/** s3rver's built-in credentials: the only key pair it knows. */
const S3RVER_KEY = 'S3RVER';
const REGION = 'us-east-1';
const LOOPBACK = '127.0.0.1';
const BUCKET_PREFIX = 'avalake';
const BUCKET_NAME_MAX = 63;
const BUCKET_RANDOM_BYTES = 6;
/** The prefix inside a fresh bucket: a data dir is rarely a bucket's root. */
const DATA_PREFIX = 'lake-test';
const INJECTED_STATUS = 500;
const INJECTED_ERROR =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected fault</Message></Error>';
const THROTTLED_STATUS = 503;
const THROTTLED_ERROR =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';
/** Headers about one connection, not the message: never copied from one side of the proxy to the other. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

interface S3rverOptions {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
}

/** The part of s3rver's filesystem store the harness mends (see `keepFolders`). */
interface S3rverStore {
  deleteObject(bucket: string, key: string): Promise<void>;
  getResourcePath(bucket: string, key: string, resource: string): string;
}

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  store: S3rverStore;
}

type S3rverClass = new (options: S3rverOptions) => S3rverInstance;

/** s3rver is CommonJS without types: load it through require and check it is the class. */
function loadS3rver(): S3rverClass {
  const loaded: unknown = createRequire(import.meta.url)('s3rver');
  if (typeof loaded !== 'function') throw new Error("the 's3rver' package did not export its server class");
  return loaded as S3rverClass;
}

/**
 * Note: s3rver's DeleteObject removes the folders a deletion leaves empty, and its PutObject opens its
 * file after creating the folders, with no error handler on the stream: a PUT into a folder while another
 * key of it is deleted can find the folder gone and crash the whole process with ENOENT. Real S3 has no
 * folders, so the harness deletes an object's files and leaves the folders be.
 */
function keepFolders(store: S3rverStore): void {
  store.deleteObject = async (bucket, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        rm(store.getResourcePath(bucket, key, resource), { force: true }),
      ),
    );
  };
}

/** Starts s3rver on a free loopback port with its own temp directory. */
export async function startS3(): Promise<S3TestServer> {
  const S3rver = loadS3rver();
  const directory = await mkdtemp(join(tmpdir(), 'avalake-s3-'));
  const server = new S3rver({ port: 0, address: LOOPBACK, silent: true, directory });
  keepFolders(server.store);
  try {
    const { port } = await server.run();
    const endpoint = `http://${LOOPBACK}:${port}`;
    const env = {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ENDPOINT_URL: endpoint,
      AWS_ACCESS_KEY_ID: S3RVER_KEY,
      AWS_SECRET_ACCESS_KEY: S3RVER_KEY,
      AWS_REGION: REGION,
    };
    const stop = async () => {
      await server.close().catch(() => undefined);
      await rm(directory, { recursive: true, force: true });
    };
    return { endpoint, env, stop };
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
}

/** An SDK client for an s3rver endpoint (or a proxy in front of one), with the SDK's default retries. */
export function s3Client(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY },
  });
}

/** Runs `use` with a client for the endpoint and always releases the client's sockets after. */
async function withClient<T>(server: S3Endpoint, use: (client: S3Client) => Promise<T>): Promise<T> {
  const client = s3Client(server.endpoint);
  try {
    return await use(client);
  } finally {
    client.destroy();
  }
}

/** The bucket and key prefix (no slashes at either end; '' for the root) of an `s3://bucket/prefix` URL. */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  const bucket = match?.[1];
  if (!bucket) throw new Error(`not an s3://bucket/prefix URL: ${url}`);
  return { bucket, prefix: (match[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

/** The full key of a key relative to a prefix. */
function fullKey(prefix: string, key: string): string {
  return prefix ? `${prefix}/${key}` : key;
}

/** A bucket name no other test has: `avalake-[label-]<hex>`, lowercase, at most 63 characters. */
function bucketName(label?: string): string {
  const suffix = randomBytes(BUCKET_RANDOM_BYTES).toString('hex');
  const clean = (label ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const room = BUCKET_NAME_MAX - BUCKET_PREFIX.length - suffix.length - 2;
  const middle = clean.slice(0, room).replace(/-+$/, '');
  return [BUCKET_PREFIX, middle, suffix].filter(Boolean).join('-');
}

/** Creates a new empty bucket (named after `name` when given) and returns a data-dir URL inside it. */
export async function freshBucket(server: S3Endpoint, name?: string): Promise<string> {
  const bucket = bucketName(name);
  await withClient(server, (client) => client.send(new CreateBucketCommand({ Bucket: bucket })));
  return `s3://${bucket}/${DATA_PREFIX}`;
}

/**
 * Every key under the URL's prefix, sorted, relative to the prefix: what a run left in its data dir.
 * Pages with ListObjects (v1) and Marker, not v2's ContinuationToken: s3rver makes v2 tokens with DES,
 * which OpenSSL 3 (Node >= 17) refuses, so a truncated v2 listing there is an InternalError.
 */
export async function listKeys(server: S3Endpoint, url: string): Promise<string[]> {
  const { bucket, prefix } = parseS3Url(url);
  const listPrefix = prefix ? `${prefix}/` : '';
  const keys: string[] = [];
  await withClient(server, async (client) => {
    let marker: string | undefined;
    do {
      const page: ListObjectsCommandOutput = await client.send(
        new ListObjectsCommand({ Bucket: bucket, Prefix: listPrefix, Marker: marker }),
      );
      const pageKeys = (page.Contents ?? []).flatMap((object) =>
        object.Key === undefined ? [] : [object.Key],
      );
      keys.push(...pageKeys.map((key) => key.slice(listPrefix.length)));
      marker = page.IsTruncated ? (page.NextMarker ?? pageKeys.at(-1)) : undefined;
    } while (marker !== undefined);
  });
  return keys.sort();
}

/** Reads one object with a client the caller already holds. */
async function getBytes(client: S3Client, bucket: string, key: string): Promise<Buffer> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  if (!answer.Body) throw new Error(`s3://${bucket}/${key} came back without a body`);
  return Buffer.from(await answer.Body.transformToByteArray());
}

/** The bytes of `<prefix>/<key>` in the URL's bucket. */
export async function readObject(server: S3Endpoint, url: string, key: string): Promise<Buffer> {
  const { bucket, prefix } = parseS3Url(url);
  return withClient(server, (client) => getBytes(client, bucket, fullKey(prefix, key)));
}

/** Writes `<prefix>/<key>` in the URL's bucket: what another writer left there. */
export async function writeObject(
  server: S3Endpoint,
  url: string,
  key: string,
  bytes: Uint8Array,
): Promise<void> {
  const { bucket, prefix } = parseS3Url(url);
  await withClient(server, (client) =>
    client.send(new PutObjectCommand({ Bucket: bucket, Key: fullKey(prefix, key), Body: bytes })),
  );
}

/** Copies every object under the URL's prefix to `localDir/<relative key>`, so local tools can read them. */
export async function downloadPrefix(server: S3Endpoint, url: string, localDir: string): Promise<void> {
  const { bucket, prefix } = parseS3Url(url);
  const keys = await listKeys(server, url);
  const root = resolve(localDir);
  await withClient(server, async (client) => {
    for (const key of keys) {
      const path = resolve(root, key);
      if (!path.startsWith(`${root}${sep}`)) throw new Error(`key ${key} would land outside ${root}`);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, await getBytes(client, bucket, fullKey(prefix, key)));
    }
  });
}

/** The headers of a message without those that belong to one connection. */
function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  }
  return kept;
}

/** True when the n-th request (1-based) is one that `every` picks. */
function picks(every: number | undefined, n: number): boolean {
  return every !== undefined && every > 0 && n % every === 0;
}

/**
 * Answers with an injected S3 InternalError once the request's body has been read, or with SlowDown and
 * `throttled`'s headers when it is given.
 */
function fail(req: IncomingMessage, res: ServerResponse, throttled?: Record<string, string>): void {
  const body = throttled ? THROTTLED_ERROR : INJECTED_ERROR;
  req.on('end', () => {
    res.writeHead(throttled ? THROTTLED_STATUS : INJECTED_STATUS, {
      ...throttled,
      'content-type': 'application/xml',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
  req.resume();
}

/** Sends the request on to the target as it is (Host included: the signature covers it) and streams back the answer. */
function forward(target: URL, agent: Agent, req: IncomingMessage, res: ServerResponse): void {
  const upstream = request(
    new URL(req.url ?? '/', target),
    { method: req.method, headers: endToEnd(req.headers), agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? INJECTED_STATUS, endToEnd(answer.headers));
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}

/**
 * Starts a loopback proxy to `target` that fails or drops every n-th request (one shared count, so the
 * faults are deterministic): for testing that S3 clients retry what S3 itself sometimes does.
 * A request both counts would pick is dropped; `maxInARow` spares a request spoiled that many times.
 */
export async function startFaultyProxy(target: string, spec: FaultSpec): Promise<FaultyProxy> {
  const targetUrl = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const stats: FaultStats = { requests: 0, failed: 0, dropped: 0 };
  /** Per request (method and URL): its attempts spoiled since one was last forwarded. */
  const inARow = new Map<string, number>();
  const server = createServer((req, res) => {
    stats.requests += 1;
    const n = stats.requests;
    const request = `${req.method} ${req.url}`;
    const spoiled = inARow.get(request) ?? 0;
    const spared = spec.maxInARow !== undefined && spoiled >= spec.maxInARow;
    const drop = !spared && picks(spec.dropEvery, n);
    const failNow = !spared && !drop && picks(spec.failEvery, n);
    if (drop || failNow) inARow.set(request, spoiled + 1);
    else inARow.delete(request);
    if (drop) {
      stats.dropped += 1;
      req.socket.destroy();
    } else if (failNow) {
      stats.failed += 1;
      fail(req, res, spec.throttle?.());
    } else {
      forward(targetUrl, agent, req, res);
    }
  });
  await new Promise<void>((done, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, done);
  });
  const { port } = server.address() as AddressInfo;
  const stop = async () => {
    const closed = new Promise<void>((done) => server.close(() => done()));
    server.closeAllConnections();
    await closed;
    agent.destroy();
  };
  return { endpoint: `http://${LOOPBACK}:${port}`, stats, stop };
}
