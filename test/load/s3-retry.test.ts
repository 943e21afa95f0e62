import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  boundedRetryStrategy,
  errorTypeOf,
  MAX_RETRY_DELAY_MS,
  type RetryErrorType,
  retryAfterOf,
  retryDelay,
} from '../../src/load/s3-retry.ts';
import { openS3Storage } from '../../src/load/s3-storage.ts';
import { eachLimited, type LakeStorage, StorageUnavailableError } from '../../src/load/storage.ts';
import {
  type FaultSpec,
  type FaultyProxy,
  freshBucket,
  listKeys,
  parseS3Url,
  readObject,
  type S3TestServer,
  startFaultyProxy,
  startS3,
} from '../helpers/s3.ts';

/**
 * The lake's S3 client retries each request up to its attempts, however many other requests failed
 * before: through a proxy failing most requests, hundreds of operations all succeed (the SDK's standard
 * strategy stops retrying once 36 retries have drained its quota), and one that fails every attempt
 * fails after exactly AWS_MAX_ATTEMPTS, naming the operation and the object.
 */

/** Objects written, copied, read and removed through the failing proxy. */
const OBJECTS = 60;
/** Operations in flight at once: many retries wait at the same time. */
const CONCURRENCY = 60;
/** Attempts per request in these tests (AWS_MAX_ATTEMPTS). */
const ATTEMPTS = 4;

let s3: S3TestServer;
const cleanups: (() => Promise<void>)[] = [];
beforeAll(async () => {
  s3 = await startS3();
  cleanups.push(() => s3.stop());
  // Credentials come from the SDK's own chain, as in a worker: the AWS_* variables.
  for (const [name, value] of Object.entries(s3.env)) vi.stubEnv(name, value);
}, 60_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The lake storage of a fresh bucket, reached through a faulty proxy that `spec` steers. */
async function lakeThroughProxy(
  spec: FaultSpec,
  label: string,
): Promise<{ storage: LakeStorage; proxy: FaultyProxy; url: string }> {
  const proxy = await startFaultyProxy(s3.endpoint, spec);
  cleanups.push(() => proxy.stop());
  const url = await freshBucket(s3, label);
  const storage = await openS3Storage(url, {
    ...s3.env,
    AWS_ENDPOINT_URL_S3: proxy.endpoint,
    AWS_ENDPOINT_URL: proxy.endpoint,
    AWS_MAX_ATTEMPTS: String(ATTEMPTS),
  });
  cleanups.push(async () => storage.close());
  return { storage, proxy, url };
}

const bodyOf = (i: number) => new TextEncoder().encode(`object ${i}\n`.repeat(1 + (i % 7)));
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

it('through a proxy failing half the requests and dropping a fifth, every operation of hundreds succeeds', async () => {
  // Never more spoiled attempts in a row than the client has retries: what fails here is the client.
  const { storage, proxy, url } = await lakeThroughProxy(
    { failEvery: 2, dropEvery: 5, maxInARow: ATTEMPTS - 1 },
    'burst',
  );
  const name = (folder: string, i: number) => `${folder}/obj-${String(i).padStart(3, '0')}.bin`;
  await eachLimited(OBJECTS, CONCURRENCY, async (i) => {
    await storage.write(name('staged', i), bodyOf(i));
    await storage.move(name('staged', i), name('placed', i));
  });
  // Streamed uploads (compaction's merged files) too: the SDK itself gives those a single attempt.
  await eachLimited(OBJECTS / 4, CONCURRENCY, (i) =>
    storage.writeFrom(name('merged', i), (file) => writeFile(file, bodyOf(i))),
  );
  const placed = Array.from({ length: OBJECTS }, (_, i) => name('placed', i).slice('placed/'.length));
  expect(await storage.list('placed')).toEqual(placed);
  expect(await storage.list('staged')).toEqual([]);
  // Read back through the proxy (GetObject, HeadObject) for some, straight from the server for all.
  await eachLimited(OBJECTS / 4, CONCURRENCY, async (i) => {
    expect(await storage.size(name('placed', i))).toBe(bodyOf(i).byteLength);
    expect(await storage.sha256(name('merged', i))).toBe(sha(bodyOf(i)));
  });
  await eachLimited(OBJECTS, CONCURRENCY, async (i) => {
    expect(sha(await readObject(s3, url, `lake/${name('placed', i)}`))).toBe(sha(bodyOf(i)));
  });

  // Hundreds of spoiled requests (about 270 of 500), many of them retries spoiled again: each such
  // retry keeps 14 of the SDK's 500 quota tokens for good, and a success gives one back.
  expect(proxy.stats.failed + proxy.stats.dropped).toBeGreaterThan(200);
  expect((await listKeys(s3, url)).length).toBe(OBJECTS + OBJECTS / 4);
}, 60_000);

describe('a request that fails every attempt', () => {
  /** A lake reached through a proxy that forwards everything until `failAll` is called. */
  async function lakeThatWillFail(label: string) {
    const spec: FaultSpec = {};
    const lake = await lakeThroughProxy(spec, label);
    const { bucket } = parseS3Url(lake.url);
    return {
      ...lake,
      where: (path: string) => `s3://${bucket}/lake-test/lake/${path}`,
      failAll: () => {
        spec.failEvery = 1;
      },
      /** How `run` failed, and the requests it sent through the proxy. */
      failureOf: async (run: () => Promise<unknown>) => {
        const before = lake.proxy.stats.requests;
        const error = await run().then(
          () => undefined,
          (e: unknown) => e,
        );
        return { error, requests: lake.proxy.stats.requests - before };
      },
    };
  }

  it('fails after exactly AWS_MAX_ATTEMPTS attempts, naming the operation and the object', async () => {
    const lake = await lakeThatWillFail('give-up');
    await lake.storage.write('from.bin', bodyOf(1));
    lake.failAll();
    const cases: [string, string, () => Promise<unknown>][] = [
      ['PutObject', 'a.bin', () => lake.storage.write('a.bin', bodyOf(2))],
      ['PutObject', 'b.bin', () => lake.storage.writeFrom('b.bin', (file) => writeFile(file, bodyOf(3)))],
      ['CopyObject', 'from.bin', () => lake.storage.copy('from.bin', 'to.bin')],
      ['GetObject', 'from.bin', () => lake.storage.sha256('from.bin')],
      ['DeleteObject', 'from.bin', () => lake.storage.remove('from.bin')],
    ];
    for (const [operation, path, run] of cases) {
      const { error, requests } = await lake.failureOf(run);
      expect(error, operation).toBeInstanceOf(StorageUnavailableError);
      expect((error as Error).message).toContain(
        `${operation} of ${lake.where(path)} failed (InternalError: injected fault): check the bucket`,
      );
      expect(requests, operation).toBe(ATTEMPTS);
    }
  }, 30_000);

  it('is not retried when the error is not transient (a missing object: one request)', async () => {
    const lake = await lakeThatWillFail('missing');
    const { error, requests } = await lake.failureOf(() => lake.storage.copy('nothing.bin', 'to.bin'));
    expect((error as Error).message).toContain(
      `CopyObject of ${lake.where('nothing.bin')} failed (NoSuchKey`,
    );
    expect(requests).toBe(1);
  });
});

describe('a Retry-After date', () => {
  /** What the server asks: retry 2 s after its answer, as a date on its own clock. */
  const ASKED_MS = 2_000;

  it.each([
    ['behind', 'PutObject', -1],
    ['behind', 'a streamed PutObject', -1],
    ['ahead of', 'PutObject', 1],
    ['ahead of', 'a streamed PutObject', 1],
  ])(
    'is waited as the server meant when this host is ten minutes %s its clock (%s)',
    async (_, what, sign) => {
      // The server's clock; this host's reads ten minutes off it (before NTP steps it right).
      const serverNow = () => Date.now() - sign * 10 * 60_000;
      const spec: FaultSpec = {};
      const { storage, proxy, url } = await lakeThroughProxy(spec, `skew-${sign}`);
      await storage.write('warm.bin', bodyOf(0)); // the client's first requests (HeadBucket), unspoiled
      const before = { ...proxy.stats };
      // From now on each request is throttled once, then forwarded.
      Object.assign(spec, {
        failEvery: 1,
        maxInARow: 1,
        throttle: () => {
          const at = Math.floor(serverNow() / 1000) * 1000;
          return {
            date: new Date(at).toUTCString(),
            'retry-after': new Date(at + ASKED_MS).toUTCString(),
          };
        },
      });
      const started = performance.now();
      if (what === 'PutObject') await storage.write('a.bin', bodyOf(1));
      else await storage.writeFrom('a.bin', (file) => writeFile(file, bodyOf(1)));
      const waited = performance.now() - started;
      expect(proxy.stats.requests - before.requests).toBe(2);
      expect(proxy.stats.failed - before.failed).toBe(1);
      expect(sha(await readObject(s3, url, 'lake/a.bin'))).toBe(sha(bodyOf(1)));
      // Before, measured on this host's clock: behind, 10 min 2 s cut to the 20 s cap; ahead, the
      // date had passed, so only the backoff (0.5 to 1 s).
      expect(waited).toBeGreaterThanOrEqual(ASKED_MS - 50);
      expect(waited).toBeLessThan(ASKED_MS + 3_000);
    },
    60_000,
  );
});

describe('boundedRetryStrategy', () => {
  const half = () => 0.5;
  const firstRetry = (info: { errorType: RetryErrorType; retryAfterHint?: Date }, attempts = 6) =>
    boundedRetryStrategy(attempts, half).refreshRetryTokenForRetry(
      { getRetryCount: () => 0, getRetryDelay: () => 0 },
      info,
    );

  it('retries throttling and transient errors until the attempts are spent, whatever else failed', async () => {
    const strategy = boundedRetryStrategy(3, half);
    // Far more failures than the SDK's quota would pay for, across many requests: each keeps its attempts.
    for (let request = 0; request < 100; request++) {
      let token = await strategy.acquireInitialRetryToken('');
      token = await strategy.refreshRetryTokenForRetry(token, { errorType: 'TRANSIENT' });
      token = await strategy.refreshRetryTokenForRetry(token, { errorType: 'THROTTLING' });
      expect(token.getRetryCount()).toBe(2);
      await expect(strategy.refreshRetryTokenForRetry(token, { errorType: 'TRANSIENT' })).rejects.toThrow(
        '3 attempts',
      );
    }
  });

  it('does not retry client errors or server errors the SDK deems permanent', async () => {
    await expect(firstRetry({ errorType: 'CLIENT_ERROR' })).rejects.toThrow('not retried');
    await expect(firstRetry({ errorType: 'SERVER_ERROR' })).rejects.toThrow('not retried');
  });

  it('backs off exponentially with jitter, longer when throttled, honouring Retry-After, capped', async () => {
    const now = 1_000_000;
    const steps = [0, 1, 2, 3].map((retry) => retryDelay(retry, 'TRANSIENT', undefined, now, () => 1));
    expect(steps).toEqual([100, 200, 400, 800]);
    expect(retryDelay(0, 'TRANSIENT', undefined, now, () => 0)).toBe(50);
    expect(retryDelay(0, 'THROTTLING', undefined, now, () => 0)).toBe(500);
    expect(retryDelay(20, 'THROTTLING', undefined, now, () => 1)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelay(0, 'THROTTLING', new Date(now + 3_000), now, () => 0)).toBe(3_000);
    expect(retryDelay(0, 'THROTTLING', new Date(now + 600_000), now, () => 0)).toBe(MAX_RETRY_DELAY_MS);
    expect((await firstRetry({ errorType: 'THROTTLING' })).getRetryDelay()).toBe(750);
  });

  it("reads Retry-After as seconds, or as a date on the response's clock (this host's without a Date)", () => {
    const now = Date.parse('2026-11-30T12:00:00Z');
    const answer = (headers: Record<string, string>) => ({ $response: { headers } });
    const at = (iso: string) => new Date(iso).toUTCString();
    expect(retryAfterOf(answer({ 'retry-after': '3' }), now)?.getTime()).toBe(now + 3_000);
    expect(
      retryAfterOf(
        answer({ Date: at('2026-11-30T12:10:00Z'), 'Retry-After': at('2026-11-30T12:10:02Z') }),
        now,
      )?.getTime(),
    ).toBe(now + 2_000);
    expect(retryAfterOf(answer({ 'retry-after': at('2026-11-30T12:00:05Z') }), now)?.getTime()).toBe(
      now + 5_000,
    );
    expect(retryAfterOf(answer({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterOf(new Error('no response'), now)).toBeUndefined();
  });

  it('sorts errors of streamed requests as the SDK does', () => {
    const s3Error = (name: string, status: number, extra = {}) =>
      Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status }, ...extra });
    expect(errorTypeOf(s3Error('SlowDown', 503))).toBe('THROTTLING');
    expect(errorTypeOf(s3Error('TooManyRequests', 429))).toBe('THROTTLING');
    expect(errorTypeOf(s3Error('InternalError', 500))).toBe('TRANSIENT');
    expect(errorTypeOf(s3Error('ServiceUnavailable', 503))).toBe('TRANSIENT');
    expect(errorTypeOf(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe('TRANSIENT');
    expect(errorTypeOf(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toBe('TRANSIENT');
    expect(
      errorTypeOf(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'EPIPE' }) })),
    ).toBe('TRANSIENT');
    expect(errorTypeOf(s3Error('NotImplemented', 501))).toBe('SERVER_ERROR');
    expect(errorTypeOf(s3Error('AccessDenied', 403))).toBe('CLIENT_ERROR');
    expect(errorTypeOf(s3Error('NoSuchKey', 404))).toBe('CLIENT_ERROR');
    expect(errorTypeOf(Object.assign(new Error('aborted'), { name: 'AbortError', code: 'ECONNRESET' }))).toBe(
      'CLIENT_ERROR',
    );
    expect(errorTypeOf(Object.assign(new Error('gone'), { code: 'ENOENT' }))).toBe('CLIENT_ERROR');
  });
});
