import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { columnsOf, LakeSchemaError } from '../../src/load/columns.ts';
import { lake, lakeMetaOf, lineageFields } from '../../src/schemas/lake.ts';

describe('lake.* field types validate what the API sends', () => {
  const cases: [string, z.ZodType, unknown, boolean][] = [
    ['amount: 38 digits', lake.amount(), '9'.repeat(38), true],
    ['amount: 39 digits', lake.amount(), '1'.repeat(39), false],
    ['amount: negative unsigned', lake.amount(), '-1', false],
    ['amount: negative signed', lake.amount({ signed: true }), '-1', true],
    ['amount: a number', lake.amount(), 5, false],
    ['amount: a fraction', lake.amount(), '1.5', false],
    ['bigAmount: uint256 max', lake.bigAmount(), ((1n << 256n) - 1n).toString(), true],
    ['bigAmount: uint256 max + 1', lake.bigAmount(), (1n << 256n).toString(), false],
    ['timestamp: number', lake.timestamp(), 1_700_000_000, true],
    ['timestamp: RPC string', lake.timestamp(), '1700000000', true],
    ['timestamp: fraction', lake.timestamp(), 1.5, false],
    ['timestamp: ISO text', lake.timestamp(), '2024-01-01', false],
    ['int64: string', lake.int64(), '9223372036854775807', true],
    ['int64: beyond', lake.int64(), '9223372036854775808', false],
    ['int64: number', lake.int64(), 42, true],
    ['int32: beyond', lake.int32(), 2 ** 31, false],
    ['json: anything', lake.json(), { a: [1] }, true],
    ['json with shape: wrong shape', lake.json(z.object({ a: z.number() })), { a: 'x' }, false],
  ];
  it.each(cases)('%s', (_name, schema, value, ok) => {
    expect(schema.safeParse(value).success).toBe(ok);
  });

  it('keeps the lake kind through refine and describe', () => {
    expect(
      lakeMetaOf(
        lake
          .amount()
          .refine((s) => s !== '0')
          .describe('non-zero'),
      ),
    ).toEqual({ kind: 'amount' });
  });

  it('does not mark a schema passed to lake.json() as JSON elsewhere', () => {
    const shape = z.object({ a: z.number() });
    lake.json(shape);
    expect(lakeMetaOf(shape)).toBeUndefined();
  });
});

describe('columnsOf', () => {
  it('maps plain zod types and marked ones, optional and nullable to nullable columns', () => {
    const columns = columnsOf(
      z.object({
        s: z.string(),
        n: z.number().optional(),
        b: z.boolean().nullable(),
        e: z.enum(['a', 'b']).default('a'),
        l: z.literal('x'),
        u: z.union([z.literal('A'), z.literal('B')]),
        v: lake.bigAmount().optional(),
        j: lake.json(z.record(z.string(), z.string())),
      }),
    );
    expect(columns.map((c) => [c.name, c.type.kind, c.nullable])).toEqual([
      ['s', 'utf8', false],
      ['n', 'float64', true],
      ['b', 'bool', true],
      ['e', 'utf8', false],
      ['l', 'utf8', false],
      ['u', 'utf8', false],
      ['v', 'decimal', true],
      ['vExact', 'utf8', true],
      ['j', 'json', true],
    ]);
  });

  const refused: [string, z.ZodType, RegExp][] = [
    [
      'a record',
      z.object({ r: z.record(z.string(), z.number()) }),
      /r: the lake cannot store a zod record; mark it/,
    ],
    ['a mixed union', z.object({ m: z.union([z.string(), z.number()]) }), /m: a union of different types/],
    ['a transform', z.object({ t: z.string().transform((s) => s.length) }), /t: the lake cannot store/],
    [
      'a bigAmount list',
      z.object({ l: z.array(lake.bigAmount()) }),
      /l\[\]: lake.bigAmount\(\) cannot be a list/,
    ],
    ['a column clash', z.object({ v: lake.bigAmount(), vExact: z.string() }), /two columns named vExact/],
  ];
  it.each(refused)('refuses %s with a hint', (_name, schema, message) => {
    expect(() => columnsOf(schema)).toThrow(LakeSchemaError);
    expect(() => columnsOf(schema)).toThrow(message);
  });

  it('gives lineage columns their types', () => {
    expect(columnsOf(lineageFields(['network', 'address'])).map((c) => [c.name, c.type])).toEqual([
      ['_run_id', { kind: 'utf8' }],
      ['_extracted_at', { kind: 'timestamp', unit: 'ms' }],
      ['network', { kind: 'utf8' }],
      ['address', { kind: 'utf8' }],
    ]);
  });
});
