/**
 * The bare client of bench/extract-throughput.ts: what fetching and parsing alone cost. It GETs (or POSTs)
 * pages over keep-alive connections, parses each answer with JSON.parse and throws it away. It imports no
 * avalake module, so its process (start-up included) is only that; the bench compiles it to one plain
 * JavaScript file (undici included) and runs it on node alone.
 *
 * Modes (one JSON argument, BareArgs):
 *   - walks: replays recorded walks (a JSON file of WalkRecording), `concurrency` walks at a time and each
 *     walk's requests in order, as the pipeline runs its partitions;
 *   - follow: follows one newest-first listing by its nextPageToken from its first page, until `records`
 *     records were read (then says the time of the last) or until a record older than `until` (Unix
 *     seconds), as the pipeline's walk stops at its `start`.
 * Prints one JSON line: BareResult.
 *
 * Usage (by the bench, compiled): node bare-client.mjs '<json BareArgs>'
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

/** One request of a walk as the pipeline sent it. */
export interface RecordedRequest {
  method: 'GET' | 'POST';
  url: string;
  body?: string;
}

/** The walks of a pipeline run, in the order its partitions were taken up. */
export interface WalkRecording {
  concurrency: number;
  walks: { stream: string; partition: string; requests: RecordedRequest[] }[];
}

export type BareArgs =
  | { mode: 'walks'; file: string }
  | {
      mode: 'follow';
      /** The listing's first page, with its pageSize. */
      url: string;
      /** The answer's list field, and its records' time field (Unix seconds). */
      list: string;
      timeField: string;
      records?: number;
      until?: number;
    };

export interface BareResult {
  requests: number;
  records: number;
  bytes: number;
  /** follow: the time of the last record counted. */
  lastTime?: number;
}

/** As the pipeline's HTTP client: a pool per origin, this many connections each. */
const CONNECTIONS_PER_HOST = 4;
const HEADERS = { 'user-agent': 'avalake/bench', accept: 'application/json' };

const args = JSON.parse(process.argv[2] ?? '{}') as BareArgs;
const pools = new Map<string, Pool>();

async function send(request: RecordedRequest): Promise<{ body: unknown; bytes: number }> {
  const url = new URL(request.url);
  if (url.hostname !== '127.0.0.1') throw new Error(`benchmarks only talk to 127.0.0.1; got ${request.url}`);
  let pool = pools.get(url.origin);
  if (!pool) {
    pool = new Pool(url.origin, { connections: CONNECTIONS_PER_HOST });
    pools.set(url.origin, pool);
  }
  const res = await pool.request({
    path: `${url.pathname}${url.search}`,
    method: request.method,
    headers: request.body === undefined ? HEADERS : { ...HEADERS, 'content-type': 'application/json' },
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200)
    throw new Error(`${request.url}: status ${res.statusCode}: ${text.slice(0, 200)}`);
  return { body: JSON.parse(text), bytes: text.length };
}

async function walks(file: string): Promise<BareResult> {
  const recording = JSON.parse(readFileSync(file, 'utf8')) as WalkRecording;
  const queue = [...recording.walks];
  const result: BareResult = { requests: 0, records: 0, bytes: 0 };
  const worker = async () => {
    for (let walk = queue.shift(); walk; walk = queue.shift()) {
      for (const request of walk.requests) {
        const { bytes } = await send(request);
        result.requests++;
        result.bytes += bytes;
      }
    }
  };
  await Promise.all(Array.from({ length: recording.concurrency }, worker));
  return result;
}

async function follow(a: Extract<BareArgs, { mode: 'follow' }>): Promise<BareResult> {
  const result: BareResult = { requests: 0, records: 0, bytes: 0 };
  let token: string | undefined;
  for (;;) {
    const url = new URL(a.url);
    if (token) url.searchParams.set('pageToken', token);
    const { body, bytes } = await send({ method: 'GET', url: url.toString() });
    result.requests++;
    result.bytes += bytes;
    const page = body as Record<string, unknown>;
    for (const record of (page[a.list] ?? []) as Record<string, unknown>[]) {
      const time = Number(record[a.timeField]);
      if (a.until !== undefined && time < a.until) return result;
      result.records++;
      result.lastTime = time;
      if (a.records !== undefined && result.records >= a.records) return result;
    }
    token = typeof page.nextPageToken === 'string' && page.nextPageToken ? page.nextPageToken : undefined;
    if (!token) return result;
  }
}

try {
  const result = args.mode === 'walks' ? await walks(args.file) : await follow(args);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await Promise.all([...pools.values()].map((p) => p.close()));
}
