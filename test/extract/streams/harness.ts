import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import { type Pipeline, PipelineSchema } from '../../../src/extract/pipeline.ts';
import type { RunSummary } from '../../../src/extract/run.ts';
import type { StreamDefinition } from '../../../src/extract/stream.ts';
import { STREAMS } from '../../../src/extract/streams/index.ts';
import { startEmulator } from '../../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../../helpers/extract.ts';
import {
  currentSnapshot,
  duplicateRows,
  newestVersions,
  queryLake,
  streamTable,
} from '../../helpers/lake.ts';
import type { ApiDocument } from '../../helpers/openapi.ts';

/**
 * What every stream test of this folder checks, written once: a full extract equals the emulator's
 * truth, a second run after the clock moves reads only what is new and equals it again, the fault mix
 * of the core streams changes nothing, and the schema accepts the OpenAPI document's examples.
 */

/** Per partition (a label the truth and the lake query agree on): how many records, and a sum. */
export type Totals = Record<string, { rows: number; sum: string }>;

export interface StreamCase {
  stream: string;
  /** Pipeline edits beyond naming the stream (collections, fewer chains, …). */
  edit?(pipeline: Record<string, unknown>, emulator: Emulator): void;
  /** The truth at the emulator's current time, from its world (or a bare walk of the listing). */
  truth(emulator: Emulator, pipeline: Pipeline): Totals | Promise<Totals>;
  /** SQL over the stream's table: the partition label, the record key and the summed amount. */
  lake: { partition: string; key: string; amount: string };
  /** Records per page, when the endpoint pages without a `pageSize` (metrics v1). */
  pageSize?: number;
  /** False for a dimension that the clock does not change (the chains). */
  changes?: boolean;
  /** Runs before the first extract (to seed a checkpoint, say). */
  prepare?(dataDir: string, emulator: Emulator, pipeline: Pipeline): Promise<void>;
}

export const FAULT_MIX = '429=0.2,500=0.05,reset=0.02,truncate=0.01';

export const streamNamed = (name: string): StreamDefinition => {
  const stream = STREAMS.find((s) => s.name === name);
  if (!stream) throw new Error(`no stream ${name}`);
  return stream;
};

/** Adds to a partition's totals (created on first use). */
export function add(totals: Totals, partition: string, amount: bigint | number | string): void {
  const t = totals[partition] ?? { rows: 0, sum: '0' };
  totals[partition] = t;
  t.rows++;
  t.sum = String(BigInt(t.sum) + BigInt(amount));
}

/** The demo pipeline of the emulator's Fuji world, feeding this stream alone. */
export function workspaceFor(emulator: Emulator, c: StreamCase) {
  const workspace = demoWorkspace(emulator, (p) => {
    p.streams = [c.stream];
    c.edit?.(p, emulator);
  });
  const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
  return { ...workspace, pipeline };
}

/** The lake's totals: the newest snapshot of a snapshot stream, else the newest version per key. */
export async function lakeTotals(dataDir: string, c: StreamCase): Promise<Totals> {
  const snapshot = streamNamed(c.stream).strategy === 'snapshot';
  const from = snapshot
    ? await currentSnapshot(dataDir, c.stream)
    : newestVersions(dataDir, c.stream, c.lake.key);
  const rows = await queryLake(
    `select ${c.lake.partition} as p, count(*)::int as n, sum(${c.lake.amount})::varchar as s from ${from} group by all`,
  );
  return Object.fromEntries(
    rows.map((r) => [r.p as string, { rows: r.n as number, sum: String(r.s).replace(/\.0+$/, '') }]),
  );
}

const ordered = (t: Totals) => Object.fromEntries(Object.entries(t).sort(([a], [b]) => (a < b ? -1 : 1)));

/** Requests a partition may make in a run that appended `rows`: its strategy's documented cost. */
function allowedRequests(stream: StreamDefinition, pageSize: number, rows: number): number {
  return stream.strategy === 'snapshot'
    ? Math.max(1, Math.ceil(rows / pageSize))
    : Math.ceil(rows / pageSize) + 1;
}

function expectCost(c: StreamCase, summary: RunSummary, exact: boolean) {
  const stream = streamNamed(c.stream);
  // An answer that does not page (one request) counts as one page of any size.
  const pageSize = c.pageSize ?? stream.maxPageSize ?? Number.POSITIVE_INFINITY;
  for (const p of summary.partitions) {
    const allowed = allowedRequests(stream, pageSize, p.rows);
    const where = `${p.stream} ${JSON.stringify(p.partition)}`;
    if (exact && stream.strategy === 'snapshot') expect(p.requests, where).toBe(allowed);
    else expect(p.requests, where).toBeLessThanOrEqual(allowed);
  }
}

export interface MirrorRuns {
  first: RunSummary;
  second: RunSummary;
  dataDir: string;
  pipeline: Pipeline;
  emulator: Emulator;
}

/**
 * A full extract equals the truth; after `advanceSeconds` a second run reads only what is new (each
 * partition: ceil(new rows / page) + 1 requests, or a snapshot's pages) and equals the truth again.
 * `also` runs stream-specific checks while the emulator still serves; the runs are also returned (by
 * then the emulator is closed: its world still answers, its HTTP surfaces do not).
 */
export async function expectMirrorsTruth(
  c: StreamCase,
  advanceSeconds: number,
  also?: (runs: MirrorRuns) => Promise<void> | void,
): Promise<MirrorRuns> {
  const emulator = await startEmulator();
  try {
    const w = workspaceFor(emulator, c);
    await c.prepare?.(w.dataDir, emulator, w.pipeline);
    const first = await extractOnce(w.pipelinePath, w.dataDir);
    expect(first.status).toBe('ok');
    expect(first.partitions.length).toBeGreaterThan(0);
    const truth1 = ordered(await c.truth(emulator, w.pipeline));
    expect(Object.keys(truth1).length).toBeGreaterThan(0);
    expect(ordered(await lakeTotals(w.dataDir, c))).toEqual(truth1);
    expectCost(c, first, true);

    emulator.advance(advanceSeconds);
    const second = await extractOnce(w.pipelinePath, w.dataDir);
    expect(second.status).toBe('ok');
    const truth2 = ordered(await c.truth(emulator, w.pipeline));
    if (c.changes !== false) expect(truth2).not.toEqual(truth1);
    expect(ordered(await lakeTotals(w.dataDir, c))).toEqual(truth2);
    expectCost(c, second, false);
    if (streamNamed(c.stream).strategy !== 'snapshot') {
      expect(await duplicateRows(w.dataDir, c.stream)).toBe(0);
    }
    const runs = { first, second, dataDir: w.dataDir, pipeline: w.pipeline, emulator };
    await also?.(runs);
    return runs;
  } finally {
    await emulator.close();
  }
}

/** Under 429s, 500s, resets and cut bodies the lake equals the truth of a fault-free twin. */
export async function expectFaultsChangeNothing(c: StreamCase) {
  const emulator = await startEmulator({ faults: FAULT_MIX });
  const twin = await startEmulator();
  try {
    const w = workspaceFor(emulator, c);
    await c.prepare?.(w.dataDir, twin, w.pipeline);
    const summary = await extractOnce(w.pipelinePath, w.dataDir);
    expect(summary.status).toBe('ok');
    const statuses = emulator.requests.byStatus;
    expect((statuses.get(429) ?? 0) + (statuses.get(500) ?? 0)).toBeGreaterThan(0);
    const truth = await c.truth(twin, {
      ...w.pipeline,
      urls: { data: twin.url, metrics: twin.url, node: `${twin.url}/fuji` },
    });
    expect(ordered(await lakeTotals(w.dataDir, c))).toEqual(ordered(truth));
  } finally {
    await Promise.all([emulator.close(), twin.close()]);
  }
}

// ---- OpenAPI examples -------------------------------------------------------------------------------

type Json = Record<string, unknown>;

const SPEC_DIR = process.env.AVALAKE_SHARED_DIR
  ? `${process.env.AVALAKE_SHARED_DIR}/reference/openapi`
  : fileURLToPath(new URL('../../../../shared/reference/openapi/', import.meta.url));
const SPEC_FILES: Record<ApiDocument, string> = {
  data: 'data-api.glacier.openapi.json',
  metrics: 'metrics-api.popsicle.openapi.json',
};
const specs = new Map<ApiDocument, Json>();
const specOf = (doc: ApiDocument): Json => {
  let spec = specs.get(doc);
  if (!spec) {
    spec = JSON.parse(readFileSync(`${SPEC_DIR}/${SPEC_FILES[doc]}`, 'utf8')) as Json;
    specs.set(doc, spec);
  }
  return spec;
};

/**
 * The example answer the document gives for `GET path` (200): the document has no whole-response
 * examples, so it is assembled from its schema's property `examples`; a required property without one
 * gets its type's zero value ("0", 0, false, the first enum value); optional ones are filled in where
 * the document exemplifies something inside them.
 */
export function openApiExample(doc: ApiDocument, path: string): Json {
  const spec = specOf(doc);
  const op = ((spec.paths as Json)[path] as Json | undefined)?.get as Json | undefined;
  if (!op) throw new Error(`OpenAPI ${doc}: no GET ${path}`);
  const content = ((op.responses as Json)['200'] as Json).content as Json;
  // Note: not checked against the document's own schema: its examples contradict it in places (Money
  // `value` "42.42" for a number, NFT `indexStatus` "indexed" outside its enum), and a record must pass anyway.
  return exampleOf(spec, (content['application/json'] as Json).schema as Json, true) as Json;
}

/** The example of a named component schema (for endpoints the document lacks, e.g. metrics v1). */
export const componentExample = (doc: ApiDocument, name: string): Json =>
  exampleOf(specOf(doc), { $ref: `#/components/schemas/${name}` }, true) as Json;

function exampleOf(spec: Json, schema: Json, required: boolean): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop() as string;
    return exampleOf(spec, ((spec.components as Json).schemas as Json)[name] as Json, required);
  }
  const union = (schema.allOf ?? schema.oneOf ?? schema.anyOf) as Json[] | undefined;
  if (union?.[0]) return exampleOf(spec, union[0], required);
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.type === 'array') return [exampleOf(spec, (schema.items ?? {}) as Json, true)];
  if (schema.type === 'object' || schema.properties) {
    const requiredKeys = new Set((schema.required ?? []) as string[]);
    const out: Json = {};
    for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
      if (key === 'nextPageToken') continue;
      const value = exampleOf(spec, property, requiredKeys.has(key));
      if (value !== undefined) out[key] = value;
    }
    return required || Object.keys(out).length > 0 ? out : undefined;
  }
  if (!required) return undefined;
  return schema.type === 'number' || schema.type === 'integer' ? 0 : schema.type === 'boolean' ? false : '0';
}

/** Every record the stream picks out of `body` passes its schema; returns the parsed records. */
export function expectSchemaAccepts(streamName: string, body: unknown) {
  const stream = streamNamed(streamName);
  const records = stream.records(body);
  expect(records.length).toBeGreaterThan(0);
  return records.map((record) => {
    const parsed = stream.schema.safeParse(record);
    expect(parsed.error?.issues ?? [], JSON.stringify(record)).toEqual([]);
    return parsed.data as Record<string, unknown>;
  });
}
