import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  downloadPrefix,
  type FaultSpec,
  type FaultStats,
  freshBucket,
  listKeys,
  parseS3Url,
  readObject,
  type S3TestServer,
  s3Client,
  startFaultyProxy,
  startS3,
} from '../helpers/s3.ts';

/** How many objects go through each faulty proxy. */
const OBJECTS_THROUGH_PROXY = 10;
/** The SDK's default number of attempts per operation: the test relies on it, not on a setting. */
const DEFAULT_MAX_ATTEMPTS = 3;
/** Concurrent puts when filling a bucket past one listing page. */
const PUT_BATCH = 25;

let server: S3TestServer;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await startS3();
  cleanups.push(() => server.stop());
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A client built only from the server's `env`, as a child process would build one. */
function clientFromEnv(env: Record<string, string>): S3Client {
  const need = (name: string): string => {
    const value = env[name];
    if (value === undefined) throw new Error(`server.env lacks ${name}`);
    return value;
  };
  return new S3Client({
    endpoint: need('AWS_ENDPOINT_URL_S3'),
    region: need('AWS_REGION'),
    forcePathStyle: true,
    credentials: { accessKeyId: need('AWS_ACCESS_KEY_ID'), secretAccessKey: need('AWS_SECRET_ACCESS_KEY') },
  });
}

describe('startS3', () => {
  it('listens on loopback and hands out the standard AWS variables', () => {
    expect(server.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.env).toEqual({
      AWS_ENDPOINT_URL_S3: server.endpoint,
      AWS_ENDPOINT_URL: server.endpoint,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
    });
  });

  it('stop() ends the server', async () => {
    const other = await startS3();
    await other.stop();
    await expect(fetch(other.endpoint)).rejects.toThrow();
  });
});

describe('bucket helpers', () => {
  it('freshBucket makes distinct, valid buckets with a data-dir prefix', async () => {
    const a = await freshBucket(server);
    const b = await freshBucket(server, 'Some Label_With CAPS and a very long tail that goes on and on');
    expect(a).not.toBe(b);
    for (const url of [a, b]) {
      const { bucket, prefix } = parseS3Url(url);
      expect(bucket).toMatch(/^avalake-[a-z0-9-]*[a-f0-9]{12}$/);
      expect(bucket.length).toBeLessThanOrEqual(63);
      expect(prefix).toBe('lake-test');
      expect(await listKeys(server, url)).toEqual([]);
    }
  });

  it('lists, reads and downloads what the SDK put, byte for byte', async () => {
    const url = await freshBucket(server, 'roundtrip');
    const { bucket, prefix } = parseS3Url(url);
    const parquet = randomBytes(4096);
    const manifest = Buffer.from('{"version":1}\n');
    const client = clientFromEnv(server.env);
    try {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/blocks/part-0.parquet`, Body: parquet }),
      );
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/manifest.json`, Body: manifest }),
      );
      // Outside the prefix: must not show up.
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'elsewhere/x', Body: 'x' }));
    } finally {
      client.destroy();
    }

    expect(await listKeys(server, url)).toEqual(['blocks/part-0.parquet', 'manifest.json']);
    expect((await readObject(server, url, 'blocks/part-0.parquet')).equals(parquet)).toBe(true);
    expect((await readObject(server, url, 'manifest.json')).equals(manifest)).toBe(true);

    const local = await mkdtemp(join(tmpdir(), 'avalake-s3-download-'));
    try {
      await downloadPrefix(server, url, local);
      expect((await readFile(join(local, 'blocks', 'part-0.parquet'))).equals(parquet)).toBe(true);
      expect((await readFile(join(local, 'manifest.json'))).equals(manifest)).toBe(true);
    } finally {
      await rm(local, { recursive: true, force: true });
    }
  });

  it('listKeys pages past the 1000 keys of one listing', async () => {
    const url = await freshBucket(server, 'pages');
    const { bucket, prefix } = parseS3Url(url);
    const count = 1_005; // ListObjectsV2 pages hold 1000 keys.
    const keys = Array.from({ length: count }, (_, i) => `k/${String(i).padStart(5, '0')}`);
    const client = s3Client(server.endpoint);
    try {
      for (let i = 0; i < keys.length; i += PUT_BATCH) {
        await Promise.all(
          keys
            .slice(i, i + PUT_BATCH)
            .map((key) =>
              client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/${key}`, Body: key })),
            ),
        );
      }
    } finally {
      client.destroy();
    }
    expect(await listKeys(server, url)).toEqual(keys);
  });
});

/** Puts and reads back OBJECTS_THROUGH_PROXY objects through a faulty proxy; returns the proxy's counts. */
async function roundTripThroughProxy(spec: FaultSpec, label: string): Promise<FaultStats> {
  const proxy = await startFaultyProxy(server.endpoint, spec);
  cleanups.push(() => proxy.stop());
  const url = await freshBucket(server, label);
  const { bucket, prefix } = parseS3Url(url);
  const bodies = Array.from({ length: OBJECTS_THROUGH_PROXY }, (_, i) =>
    Buffer.concat([Buffer.from(`object ${i}\n`), randomBytes(1024 + i)]),
  );
  const keys = bodies.map((_, i) => `obj-${String(i).padStart(2, '0')}.bin`);
  const client = s3Client(proxy.endpoint);
  try {
    expect(await client.config.maxAttempts()).toBe(DEFAULT_MAX_ATTEMPTS);
    for (const [i, body] of bodies.entries()) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/${keys[i]}`, Body: body }));
    }
    for (const [i, body] of bodies.entries()) {
      const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}/${keys[i]}` }));
      const bytes = Buffer.from((await answer.Body?.transformToByteArray()) ?? []);
      expect(bytes.equals(body)).toBe(true);
    }
  } finally {
    client.destroy();
  }
  // What the server holds, read directly, not through the proxy.
  expect(await listKeys(server, url)).toEqual(keys);
  for (const [i, body] of bodies.entries()) {
    expect((await readObject(server, url, keys[i] ?? '')).equals(body)).toBe(true);
  }
  return { ...proxy.stats };
}

describe('startFaultyProxy', () => {
  it('answers every 3rd request with a 500 and the SDK retries through it', async () => {
    const stats = await roundTripThroughProxy({ failEvery: 3 }, 'fail');
    expect(stats.failed).toBeGreaterThan(0);
    expect(stats.dropped).toBe(0);
    expect(stats.failed).toBe(Math.floor(stats.requests / 3));
    expect(stats.requests).toBe(2 * OBJECTS_THROUGH_PROXY + stats.failed);
  });

  it('drops every 4th connection and the SDK retries through it', async () => {
    const stats = await roundTripThroughProxy({ dropEvery: 4 }, 'drop');
    expect(stats.dropped).toBeGreaterThan(0);
    expect(stats.failed).toBe(0);
    expect(stats.dropped).toBe(Math.floor(stats.requests / 4));
    expect(stats.requests).toBe(2 * OBJECTS_THROUGH_PROXY + stats.dropped);
  });

  it('sends the injected fault as an S3 XML error without forwarding the request', async () => {
    const proxy = await startFaultyProxy(server.endpoint, { failEvery: 1 });
    cleanups.push(() => proxy.stop());
    const answer = await fetch(`${proxy.endpoint}/no-such-bucket`, { method: 'PUT', body: 'ignored' });
    expect(answer.status).toBe(500);
    expect(answer.headers.get('content-type')).toBe('application/xml');
    expect(await answer.text()).toContain('<Code>InternalError</Code><Message>injected fault</Message>');
    expect(proxy.stats).toEqual({ requests: 1, failed: 1, dropped: 0 });
  });

  it('spoils no request more than maxInARow times in a row, and reads a changed spec at once', async () => {
    const spec: FaultSpec = { failEvery: 1, maxInARow: DEFAULT_MAX_ATTEMPTS - 1 };
    const stats = await roundTripThroughProxy(spec, 'in-a-row');
    // Every request failed twice, then went through on the SDK's third and last attempt.
    expect(stats).toEqual({
      requests: 3 * 2 * OBJECTS_THROUGH_PROXY,
      failed: 2 * 2 * OBJECTS_THROUGH_PROXY,
      dropped: 0,
    });

    const live: FaultSpec = {};
    const changing = await startFaultyProxy(server.endpoint, live);
    cleanups.push(() => changing.stop());
    expect((await fetch(`${changing.endpoint}/no-such-bucket`)).status).toBe(404);
    live.dropEvery = 1;
    live.maxInARow = 1;
    await expect(fetch(`${changing.endpoint}/no-such-bucket`)).rejects.toThrow();
    expect((await fetch(`${changing.endpoint}/no-such-bucket`)).status).toBe(404);
    expect(changing.stats).toEqual({ requests: 3, failed: 0, dropped: 1 });
  });
});
