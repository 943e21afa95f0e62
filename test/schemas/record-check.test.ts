import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Emulator } from '../../src/emulator/index.ts';
import type { HttpClient } from '../../src/extract/http.ts';
import { canonicalJson } from '../../src/extract/strategies/canonical-json.ts';
import { STREAMS } from '../../src/extract/streams/index.ts';
import { createBatchBuilder } from '../../src/load/batch-builder.ts';
import { createColumnBuilder } from '../../src/load/builders.ts';
import { lakeColumnsOf } from '../../src/load/columns.ts';
import { recordCheckOf } from '../../src/schemas/record-check.ts';
import { pureTransform } from '../../src/schemas/zod-def.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

/**
 * The quick record check says "zod accepts this record, and it now holds the values zod hands back" only
 * when zod does: checked on every record the demo pipeline reads of every stream, and on mutants of them
 * (a field removed, null, or of another type, at the top and one level down). "The values zod hands
 * back" is what the lake stores: the row the builders make of the record the check passed equals the row
 * of zod's copy. A record it does not pass is left as it came. And the table's compiled row append
 * (row-append.ts) builds the very columns, and refuses the very records, that each column builder's own
 * `append` does, on the same records and mutants.
 */

/** Records taken of each stream (the first ones read), and the mutants made of each. */
const RECORDS_PER_STREAM = 40;
const ODD_VALUES: unknown[] = [undefined, null, 12345, -1.5, 'x', '', true, {}, [], '1'.repeat(80)];

/**
 * Streams of which some record this test reads has a field zod converts, which the check converts in
 * place: amounts the API sends as numbers (stored from their decimal strings), UTXO output indexes and
 * owner thresholds sent as strings, validators' uptime and fee sent as text, NFT metadata whose
 * attributes are JSON text. The records of the other streams pass as they came.
 */
const CONVERTED = new Set([
  'c_chain_latest_transactions',
  'c_chain_transactions',
  'erc721_balances',
  'nft_tokens',
  'node_blocks',
  'validator_delegators',
  'validators',
  'x_chain_latest_transactions',
  'x_chain_transactions',
]);
/** Streams of which the demo pipeline on the test clock reads no record. */
const EMPTY_IN_DEMO: string[] = [];

let emulator: Emulator;
const recordsOf = new Map<string, unknown[]>();

beforeAll(async () => {
  emulator = await startEmulator();
  // Every stream, from a day before the test clock: a few pages of each (EVM blocks have a month).
  const w = demoWorkspace(emulator, (p) => {
    p.streams = STREAMS.map((s) => s.name);
    p.start = '2026-11-01';
  });
  // Every answer the pipeline reads, kept by the stream that asked (the fetcher names it on the request).
  const keep = (http: HttpClient): HttpClient => ({
    async send(request) {
      const answer = await http.send(request);
      const stream = STREAMS.find((s) => s.name === (request as { at?: { stream?: string } }).at?.stream);
      if (stream && answer.status === 200) {
        const list = recordsOf.get(stream.name) ?? [];
        // A node's answer is a JSON-RPC envelope; the records are in its result.
        const body = JSON.parse(answer.text) as { result?: unknown };
        const page = stream.records(request.method === 'POST' ? body.result : body);
        if (list.length < RECORDS_PER_STREAM) list.push(...page.slice(0, RECORDS_PER_STREAM - list.length));
        recordsOf.set(stream.name, list);
      }
      return answer;
    },
    close: () => http.close(),
  });
  const summary = await extractOnce(w.pipelinePath, w.dataDir, {}, keep);
  expect(summary.status).toBe('ok');
}, 120_000);

afterAll(() => emulator?.close());

/**
 * toEqual, with node's deep equality first: tens of thousands of records and the typed arrays of their
 * columns compare in milliseconds that way, against minutes through vitest's generic walk, which is left
 * to say what differs when something does.
 */
function expectEqual(actual: unknown, expected: unknown) {
  if (!isDeepStrictEqual(actual, expected)) expect(actual).toEqual(expected);
}

/** The lake rows the builders make of records: their columns' buffers. */
function rowsOf(schema: z.ZodType, records: unknown[]) {
  const builder = createBatchBuilder(lakeColumnsOf(schema));
  for (const record of records) builder.append(record as object);
  return builder.finish();
}

/** Copies of a record with one field (top level, or one level down) removed, null or of another type. */
function mutantsOf(record: unknown): unknown[] {
  if (typeof record !== 'object' || record === null) return [];
  const out: unknown[] = [];
  const source = record as Record<string, unknown>;
  // A key the schema does not name (zod drops it), at the top and one level down.
  out.push({ ...source, notInTheSchema: 1 });
  for (const [key, value] of Object.entries(source)) {
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      out.push({ ...source, [key]: { ...(value as Record<string, unknown>), notInTheSchema: 1 } });
    for (const odd of ODD_VALUES) out.push({ ...source, [key]: odd });
    const { [key]: _, ...without } = source;
    out.push(without);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      for (const inner of Object.keys(value))
        for (const odd of [undefined, null, 7, 'y'])
          out.push({ ...source, [key]: { ...(value as Record<string, unknown>), [inner]: odd } });
    if (Array.isArray(value) && value.length > 0)
      for (const odd of [null, 7, 'y', {}]) out.push({ ...source, [key]: [...value, odd] });
  }
  return out;
}

describe('the quick record check agrees with zod', () => {
  it.each(STREAMS.map((s) => [s.name]))('%s', (name) => {
    const stream = STREAMS.find((s) => s.name === name) as (typeof STREAMS)[number];
    const quick = recordCheckOf(stream.schema);
    const records = recordsOf.get(name) ?? [];
    let passed = 0;
    let converted = 0;
    // The records the check passed, and zod's copies of them: the lake rows of both are compared at the end.
    const passedRecords: unknown[] = [];
    const zodCopies: unknown[] = [];
    // Each candidate a copy of its own: the check writes into the records it passes.
    const candidates = [...records, ...records.flatMap(mutantsOf)].map((c) => structuredClone(c));
    for (const [i, candidate] of candidates.entries()) {
      const asCame = structuredClone(candidate);
      const parsed = stream.schema.safeParse(asCame);
      const real = i < records.length;
      if (real) expect(parsed.success, JSON.stringify(asCame)).toBe(true);
      if (!quick(candidate)) {
        // Left to zod as it came: no field converted half-way.
        expectEqual(candidate, asCame);
        continue;
      }
      // Never a record zod rejects.
      expect(parsed.success, JSON.stringify(asCame)).toBe(true);
      passedRecords.push(candidate);
      zodCopies.push(parsed.data);
      // And the same keys and values, whatever their order: a record's version hash (what tells a
      // changed record from one seen before, taken of its canonical JSON) must not move with a field
      // the lake does not keep, nor with the path the record took.
      expect(canonicalJson(candidate)).toBe(canonicalJson(parsed.data));
      if (real) {
        passed++;
        if (canonicalJson(candidate) !== canonicalJson(asCame)) converted++;
      }
    }
    // The lake rows of the records the check passed are the ones zod's copies make.
    expectEqual(rowsOf(stream.schema, passedRecords), rowsOf(stream.schema, zodCopies));
    // Every real record passes: none needs zod's copy.
    expect(passed, `${name}: passed ${passed} of ${records.length}`).toBe(records.length);
    // Both ways, so that CONVERTED cannot go stale.
    if (records.length > 0)
      expect(converted > 0, `${name}: ${converted} converted`).toBe(CONVERTED.has(name));
  });

  it('reads records of every stream the demo pipeline fills', () => {
    expect(STREAMS.map((s) => s.name).filter((s) => !recordsOf.has(s))).toEqual([...EMPTY_IN_DEMO]);
  });
});

/** The rows, built the slow way: each column's builder appends its field (the path before row-append.ts). */
function rowsByColumn(schema: z.ZodType, records: unknown[]) {
  const columns = lakeColumnsOf(schema).record;
  const builders = columns.map((c) => createColumnBuilder(c.type, c.name, c.nullable));
  const refused: number[] = [];
  let length = 0;
  records.forEach((record, i) => {
    try {
      for (const [c, builder] of builders.entries())
        builder.append((record as Record<string, unknown>)[columns[c]?.source as string]);
      length++;
    } catch {
      for (const builder of builders) builder.truncate(length);
      refused.push(i);
    }
  });
  return { batch: { length, columns: builders.map((b) => b.finish()) }, refused };
}

/** The same rows through the table's compiled row append, as the lake builds them. */
function rowsCompiled(schema: z.ZodType, records: unknown[]) {
  const builder = createBatchBuilder(lakeColumnsOf(schema));
  const refused: number[] = [];
  records.forEach((record, i) => {
    try {
      builder.append(record as object);
    } catch {
      refused.push(i);
    }
  });
  // The columns alone: the lake's batch also carries the one buffer they are packed in.
  const { length, columns } = builder.finish();
  return { batch: { length, columns }, refused };
}

describe('the compiled row append builds what the column builders build', () => {
  it.each(STREAMS.map((s) => [s.name]))('%s', (name) => {
    const stream = STREAMS.find((s) => s.name === name) as (typeof STREAMS)[number];
    const records = recordsOf.get(name) ?? [];
    // The records as the lake gets them (zod's copy where zod converts a field), and the raw mutants.
    const parsed = records.map((r) => stream.schema.parse(r) as unknown);
    const candidates = [...parsed, ...records.flatMap(mutantsOf)];
    const compiled = rowsCompiled(stream.schema, candidates);
    expectEqual(compiled, rowsByColumn(stream.schema, candidates));
    // Real records and mutants alike: most are rows, and some mutants are refused (a missing required field).
    expect(compiled.batch.length).toBeGreaterThanOrEqual(records.length);
    if (records.length > 0) expect(compiled.refused.length).toBeGreaterThan(0);
  });
});

/**
 * The check on one copy of `input`, zod on another: either the check asks zod and leaves its copy as it
 * came, or it passes a record zod accepts and the copy now holds exactly zod's value (the same keys,
 * undefined ones too). Says whether the check passed.
 */
function expectAgrees(schema: z.ZodType, input: unknown): boolean {
  const candidate = structuredClone(input);
  const parsed = schema.safeParse(structuredClone(input));
  const passed = recordCheckOf(schema)(candidate);
  if (!passed) expect(candidate).toStrictEqual(input);
  else {
    expect(parsed.success, 'the check passed a record zod rejects').toBe(true);
    expect(candidate).toStrictEqual(parsed.data);
  }
  return passed;
}

/** The same object, twice in one record (structuredClone keeps the sharing). */
const twice = <T>(make: (shared: unknown) => T, shared: unknown): T => make(shared);

/** Schema shapes no stream has (yet), where the check once disagreed with zod. */
const EDGE_CASES: [string, z.ZodType, unknown][] = [
  // An array's checks run on the array zod hands back: its refinements see converted elements.
  [
    'a refinement on an array whose elements convert (zod rejects)',
    z.object({ list: z.array(z.coerce.number()).refine((a) => a.every((x) => typeof x === 'string')) }),
    { list: ['1'] },
  ],
  [
    'a refinement on an array whose elements convert, first option of a union',
    z.object({
      list: z.union([
        z.array(z.coerce.number()).refine((a) => a.every((x) => typeof x === 'number')),
        z.array(z.string()),
      ]),
    }),
    { list: ['1'] },
  ],
  // `.default()` replaces undefined whether it comes in or out of its inner schema.
  [
    'a default over a transform that makes undefined',
    z.object({
      k: z
        .string()
        .transform(pureTransform((): string | undefined => undefined))
        .default('x'),
    }),
    { k: 'q' },
  ],
  // Zod's copy holds a copy of a shared object for each place, converted by that place's schema.
  [
    'an object reached twice, converted in one place only',
    z.object({ p: z.object({ a: z.string() }), q: z.object({ a: z.coerce.number() }) }),
    twice((s) => ({ p: s, q: s }), { a: '5' }),
  ],
  [
    'an object reached twice, kept as it came in one place',
    z.object({ raw: z.unknown(), q: z.object({ a: z.coerce.number() }) }),
    twice((s) => ({ raw: s, q: s }), { a: '5' }),
  ],
  [
    'an array reached twice, converted in one place only',
    z.object({ p: z.array(z.string()), q: z.array(z.coerce.number()) }),
    twice((s) => ({ p: s, q: s }), ['5']),
  ],
  // A defaulted key (zod's optin "defaulted"): zod fills in the default, missing or undefined.
  [
    '`.default().optional()`, key undefined',
    z.object({ k: z.string().default('x').optional() }),
    { k: undefined },
  ],
  ['`.default().optional()`, key missing', z.object({ k: z.string().default('x').optional() }), {}],
  [
    '`.default().optional()`, key missing, first option of a union',
    z.union([z.object({ k: z.string().default('x').optional() }), z.object({})]),
    {},
  ],
  ['`.optional().default()`, key missing', z.object({ k: z.string().optional().default('x') }), {}],
  [
    '`.optional().default()`, key missing, first option of a union',
    z.union([z.object({ k: z.string().optional().default('x') }), z.object({})]),
    {},
  ],
  [
    'a union with a defaulted option, key missing',
    z.object({ k: z.union([z.string().default('x'), z.number()]) }),
    {},
  ],
  [
    'a union with a defaulted option, key missing, first option of a union',
    z.union([z.object({ k: z.union([z.string().default('x'), z.number()]) }), z.object({})]),
    {},
  ],
  // Optional in and out: zod leaves a missing key out, whatever its schema makes of undefined.
  [
    'a missing key whose schema makes a value of undefined, optional in and out',
    z.object({ k: z.union([z.transform(String), z.string().optional()]) }),
    {},
  ],
  // Checks (`.refine()`) on a schema other than a string, number, array or object.
  ['a refinement on an enum', z.object({ k: z.enum(['a', 'b']).refine((v) => v === 'a') }), { k: 'b' }],
  [
    'a refinement on an optional, key undefined',
    z.object({
      k: z
        .string()
        .optional()
        .refine((v) => v !== undefined),
    }),
    { k: undefined },
  ],
  // `.exactOptional()` (def type "optional" too) allows a missing key, not undefined.
  ['`.exactOptional()`, key undefined', z.object({ k: z.string().exactOptional() }), { k: undefined }],
];

/** Shapes near those above that the check still passes: the fixes leave the common records to it. */
const STILL_PASSED: [string, z.ZodType, unknown][] = [
  [
    'an array whose elements convert, with a length check',
    z.object({ list: z.array(z.coerce.number()).min(1) }),
    { list: ['1'] },
  ],
  [
    'an array with a refinement, no element converted',
    z.object({ list: z.array(z.string()).refine((a) => a.length > 0) }),
    { list: ['1'] },
  ],
  ['a default, key present', z.object({ k: z.coerce.number().default(1) }), { k: '2' }],
  [
    'a prefault over a transform that makes undefined (zod keeps it)',
    z.object({
      k: z
        .string()
        .transform(pureTransform((): string | undefined => undefined))
        .prefault('x'),
    }),
    { k: 'q' },
  ],
  [
    'an object reached twice, nothing converted',
    z.object({ p: z.object({ a: z.string() }), q: z.object({ a: z.string() }) }),
    twice((s) => ({ p: s, q: s }), { a: '5' }),
  ],
  ['`.optional()`, key missing', z.object({ k: z.string().optional() }), {}],
  ['`.optional()`, key undefined', z.object({ k: z.string().optional() }), { k: undefined }],
  ['`.exactOptional()`, key missing', z.object({ k: z.string().exactOptional() }), {}],
  [
    'optional in, not out (`.optional().transform()`), key missing',
    z.object({
      k: z
        .string()
        .optional()
        .transform(pureTransform((v: string | undefined) => v ?? 'none')),
    }),
    {},
  ],
  [
    'the second option of a union, the first missing a defaulted key and rejecting another',
    z.union([
      z.object({ k: z.string().default('x'), n: z.number() }),
      z.object({ k: z.string().optional(), n: z.string() }),
    ]),
    { n: 's' },
  ],
  [
    'a union with a defaulted option, key present',
    z.object({ k: z.union([z.string().default('x'), z.number()]) }),
    { k: 3 },
  ],
];

describe('the quick record check agrees with zod on shapes no stream has', () => {
  it.each(EDGE_CASES)('%s', (_, schema, input) => {
    expectAgrees(schema, input);
  });

  it.each(STILL_PASSED)('passes %s', (_, schema, input) => {
    expect(expectAgrees(schema, input)).toBe(true);
  });

  it('leaves no write of a record whose check threw to the next record', () => {
    const schema = z.object({ a: z.coerce.number(), b: z.string() });
    const quick = recordCheckOf(schema);
    // `a` converts (a write is noted), then reading `b` throws: zod throws on it too.
    const throwing = {
      a: '5',
      get b(): string {
        throw new Error('unreadable');
      },
    };
    expect(() => schema.parse(throwing)).toThrow('unreadable');
    expect(() => quick(throwing)).toThrow('unreadable');
    const next = { a: '7', b: 'x' };
    expect(quick(next)).toBe(true);
    expect(next).toStrictEqual(schema.parse({ a: '7', b: 'x' }));
    // The record the check did not pass is left as it came.
    expect(throwing.a).toBe('5');
  });
});
