import type { z } from 'zod';
import type { Partition } from '../load/index.ts';
import type { Service } from '../reference/compute-units.ts';
import type { Pipeline } from './pipeline.ts';

/** How a stream proceeds from one run to the next (DESIGN.md, "Streams and their incremental strategies"). */
export type Strategy = 'cursor' | 'newest-first' | 'snapshot' | 'height-walk';

/**
 * One partition of a stream: one checkpoint. `network` always; `chain` when the stream is per EVM chain;
 * other keys (address, nodeId, metric, …) become columns, never folders. The load layer defines it.
 */
export type { Partition };

/** A GET against the Data or Metrics API: its route, the route's parameters and the query, without paging. */
export interface HttpPageRequest {
  kind: 'http';
  service: Exclude<Service, 'rpc'>;
  /**
   * The route's path template (`/v1/chains/{chainId}/blocks`): it prices the request in compute units,
   * and the path is built from it and `params`, so the two cannot drift apart.
   */
  route: string;
  params: Readonly<Record<string, string>>;
  query: Readonly<Record<string, string | number | boolean | undefined>>;
}

/** The `{name}` parameters of a route template, as a type: `'/v1/chains/{chainId}/blocks'` → `'chainId'`. */
type RouteParams<R extends string> = R extends `${string}{${infer P}}${infer Rest}`
  ? P | RouteParams<Rest>
  : never;

/** A GET of a route: a parameter the route lacks, or one it names and is not given, does not compile. */
export function httpGet<R extends string>(request: {
  service: HttpPageRequest['service'];
  route: R;
  params: { readonly [K in RouteParams<R>]: string };
  query: HttpPageRequest['query'];
}): HttpPageRequest {
  return { kind: 'http', ...request };
}

/** The path of a GET: its route with each `{name}` filled in from its parameters. */
export function pathOf(request: HttpPageRequest): string {
  return request.route.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = request.params[name];
    if (value === undefined) throw new Error(`route ${request.route}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
}

/** A call of the node's P-Chain JSON-RPC. */
export interface RpcPageRequest {
  kind: 'rpc';
  method: string;
  params: Readonly<Record<string, unknown>>;
  /** An error the node gives for what does not exist (not a failure): the answer is then empty. */
  absent?(error: { code: number; message: string }): boolean;
}

export type PageRequest = HttpPageRequest | RpcPageRequest;

interface StreamBase<S extends z.ZodObject, P extends Partition> {
  /** snake_case; the lake folder and the staging model's name. */
  name: string;
  description: string;
  /** The record schema: every record is checked by it; the lake's columns are derived from it. */
  schema: S;
  /**
   * Fields that identify the thing a record describes. A mutable one (a delegation, a UTXO, a message)
   * is appended again when it changes; staging keeps the newest version per key.
   */
  primaryKey: readonly (keyof z.output<S> & string)[];
  /** What a pipeline lists to feed the stream (for the "nothing to read" message), e.g. `icm.addresses`. */
  inputs?: string;
  /** The partitions a pipeline asks for; none when the pipeline does not feed this stream. */
  partitions(pipeline: Pipeline): P[];
  /** The list of records in one answer. */
  records(body: unknown): unknown[];
  /**
   * The largest page its endpoint allows (§8): every request asks for it, unless the pipeline sets a
   * smaller `pageSize` for the stream. Absent for what does not page (the node RPC).
   */
  maxPageSize?: number;
  /**
   * For a series the source extends on a schedule (a metric per interval, daily TPS): the longest, in
   * seconds, its newest record may lag the source's clock while all is well. Freshness fails a partition
   * whose newest record lags by more than this plus its maximum age. Absent: records come when they come
   * (an address's transfers), so only the last check is judged.
   */
  cadence?(partition: P): number;
}

/**
 * Ascending by time: `startTimestamp` (inclusive) from the last committed record's time, following page
 * tokens; the records at the boundary time are remembered so the overlap is not appended twice.
 */
export interface CursorStream<S extends z.ZodObject, P extends Partition = Partition>
  extends StreamBase<S, P> {
  strategy: 'cursor';
  /** The first page's request from a cursor (undefined: from where the pipeline's history starts). */
  request(pipeline: Pipeline, partition: P, cursor: number | undefined): HttpPageRequest;
  /** The cursor value of a record (its time, in Unix seconds). */
  cursorOf(record: z.output<S>): number;
}

/**
 * Newest first, as the listing comes: a run walks down until it reaches the newest record of the last
 * run and has re-read every record that could still change (`isFinal` false: a pending delegation, an
 * unspent UTXO, an undelivered message, the latest metric point); changed ones are appended again.
 */
export interface NewestFirstStream<S extends z.ZodObject, P extends Partition = Partition>
  extends StreamBase<S, P> {
  strategy: 'newest-first';
  /** `since`: the sort value of the newest committed record, for listings that can start there. */
  request(pipeline: Pipeline, partition: P, since: number | undefined): HttpPageRequest;
  /**
   * A record that can no longer change; default: every record is final. `newest` is true for the first
   * record of the listing (the latest metric point, say, which keeps changing until its period ends).
   */
  isFinal?(record: z.output<S>, context: { newest: boolean }): boolean;
  /** The sort value of a record (for `since`), when the listing takes a lower bound. */
  sinceOf?(record: z.output<S>): number;
  /**
   * A record's time in Unix seconds (undefined when the record has none): the walk stops at the first
   * record older than the pipeline's `start` (instead of reading the listing back to its genesis) and
   * skips records from its `end` on. Every listing whose records have a time declares it.
   */
  timeOf?(record: z.output<S>): number | undefined;
}

/** The whole answer is one observation, stamped `_snapshot_at`. */
export interface SnapshotStream<S extends z.ZodObject, P extends Partition = Partition>
  extends StreamBase<S, P> {
  strategy: 'snapshot';
  request(pipeline: Pipeline, partition: P): PageRequest;
  /**
   * An answer too large for one flush (a big NFT collection): the walk commits at the flush thresholds
   * with the page token in its checkpoint, and the next run carries the same snapshot on from there.
   * Otherwise an answer is committed whole or not at all.
   */
  resumable?: boolean;
}

/**
 * One record set per height, from the last committed height to the tip the node reports (P-Chain blocks
 * by `platform.getBlockByHeight`). The node costs no compute units; each height is one request.
 */
export interface HeightWalkStream<S extends z.ZodObject, P extends Partition = Partition>
  extends StreamBase<S, P> {
  strategy: 'height-walk';
  /** The request that tells the newest height, and how to read it from the answer. */
  tip(pipeline: Pipeline, partition: P): PageRequest;
  tipOf(body: unknown): number;
  /** The request for one height. */
  request(pipeline: Pipeline, partition: P, height: number): PageRequest;
  /**
   * The time (Unix seconds) of the height in `request`'s answer, undefined when it has none (blocks
   * older than Banff): a first run starts at the first height at or after the pipeline's `start`, found
   * by bisection, and stops before its `end`.
   */
  timeOf?(body: unknown): number | undefined;
}

export type StreamDefinition<S extends z.ZodObject = z.ZodObject, P extends Partition = Partition> =
  | CursorStream<S, P>
  | NewestFirstStream<S, P>
  | SnapshotStream<S, P>
  | HeightWalkStream<S, P>;

/**
 * Declares a stream; the identity function that lets TypeScript check its parts: the record types, and
 * the partition keys its `partitions` makes, which its `request` and `cadence` then read (a misspelled
 * key does not compile).
 */
export function defineStream<S extends z.ZodObject, P extends Partition>(
  stream: StreamDefinition<S, P>,
): StreamDefinition<S> {
  return stream as StreamDefinition<S>;
}

/** A record's identity as text: its primary key values, in order. */
export function keyOf(primaryKey: readonly string[], record: Record<string, unknown>): string {
  return JSON.stringify(primaryKey.map((k) => record[k] ?? null));
}
