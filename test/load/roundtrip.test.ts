import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { arrowSchemaOf, createRecordBatchBuilder } from '../../src/load/arrow.ts';
import { RecordTypeError } from '../../src/load/errors.ts';
import { writeParquetFile } from '../../src/load/parquet.ts';
import { lake, lineageFields } from '../../src/schemas/lake.ts';
import { columnTypes, query } from './duck.ts';
import { MAX38, record, rows, UINT256_MAX } from './fixtures/rich-records.ts';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'avalake-roundtrip-'));
  file = join(dir, 'rows.parquet');
  const builder = createRecordBatchBuilder(record, lineageFields(['network', 'chain']));
  const lineage = { _run_id: 'run-1', _extracted_at: 1_700_000_123_456, network: 'mainnet', chain: '43114' };
  for (const row of rows) builder.append(record.parse(row), lineage);
  await writeParquetFile(file, builder.finish());
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('record batches through Parquet into DuckDB', () => {
  it('maps each lake type to its DuckDB type', async () => {
    expect(await columnTypes(`read_parquet('${file}')`)).toEqual({
      txHash: 'VARCHAR',
      amount: 'DECIMAL(38,0)',
      value: 'DECIMAL(38,0)',
      valueExact: 'VARCHAR',
      blockTimestamp: 'TIMESTAMP WITH TIME ZONE',
      startTime: 'TIMESTAMP WITH TIME ZONE',
      height: 'BIGINT',
      index: 'INTEGER',
      fee: 'DOUBLE',
      isFinal: 'BOOLEAN',
      memo: 'VARCHAR',
      kind: 'VARCHAR',
      genesisData: 'VARCHAR',
      emitted: 'STRUCT(assetId VARCHAR, amount DECIMAL(38,0))[]',
      tags: 'VARCHAR[]',
      node: 'STRUCT(nodeId VARCHAR, weight DECIMAL(38,0), since TIMESTAMP WITH TIME ZONE)',
      _run_id: 'VARCHAR',
      _extracted_at: 'TIMESTAMP WITH TIME ZONE',
      network: 'VARCHAR',
      chain: 'VARCHAR',
    });
  });

  it('keeps amounts exact, including 38 digits, negatives and uint256 beyond 38 digits', async () => {
    const got = await query(
      `select amount::varchar as amount, value::varchar as value, valueExact,
              [e.amount::varchar for e in emitted] as emitted, node.weight::varchar as weight
       from read_parquet('${file}')`,
    );
    expect(got).toEqual([
      {
        amount: `-${MAX38}`,
        value: null,
        valueExact: UINT256_MAX,
        emitted: [MAX38, '0'],
        weight: '2000000000000',
      },
      { amount: '18446744073709551616', value: MAX38, valueExact: MAX38, emitted: [], weight: null },
      { amount: '-1', value: '0', valueExact: '0', emitted: ['79228162514264337593543950336'], weight: '1' },
    ]);
  });

  it('stores Unix seconds as UTC instants and int64 heights exactly', async () => {
    const got = await query(
      `select epoch_ms(blockTimestamp)::varchar as ts, epoch_ms(startTime)::varchar as st,
              epoch_ms(node.since)::varchar as since, height::varchar as height, index,
              epoch_ms(_extracted_at)::varchar as extracted, strftime(blockTimestamp at time zone 'UTC', '%Y-%m-%d') as day
       from read_parquet('${file}')`,
    );
    expect(got).toEqual([
      {
        ts: '1700000000000',
        st: '1600000000000',
        since: '1000',
        height: '9223372036854775807',
        index: 2147483647,
        extracted: '1700000123456',
        day: '2023-11-14',
      },
      {
        ts: '0',
        st: null,
        since: null,
        height: '-5',
        index: null,
        extracted: '1700000123456',
        day: '1970-01-01',
      },
      {
        ts: '4102444800000',
        st: null,
        since: null,
        height: '0',
        index: -1,
        extracted: '1700000123456',
        day: '2100-01-01',
      },
    ]);
  });

  it('round-trips strings, JSON text, nested lists and structs, and nulls', async () => {
    const got = await query(
      `select txHash, fee, isFinal, memo, kind, genesisData, tags, node.nodeId as nodeId,
              [e.assetId for e in emitted] as assets, _run_id, network, chain
       from read_parquet('${file}')`,
    );
    expect(
      got.map((r) => ({
        ...r,
        genesisData: r.genesisData === null ? null : JSON.parse(r.genesisData as string),
      })),
    ).toEqual([
      {
        txHash: 'ünïcødé ✓ 🚀',
        fee: 0.25,
        isFinal: true,
        memo: '',
        kind: 'send',
        genesisData: rows[0]?.genesisData,
        tags: ['a', null, ''],
        nodeId: 'NodeID-1',
        assets: ['AVAX', 'USDC'],
        _run_id: 'run-1',
        network: 'mainnet',
        chain: '43114',
      },
      {
        txHash: 'b',
        fee: null,
        isFinal: false,
        memo: null,
        kind: 'stake',
        genesisData: null,
        tags: null,
        nodeId: null,
        assets: [],
        _run_id: 'run-1',
        network: 'mainnet',
        chain: '43114',
      },
      {
        txHash: 'c',
        fee: -1e-9,
        isFinal: true,
        memo: null,
        kind: 'send',
        genesisData: 'plain text',
        tags: [],
        nodeId: 'NodeID-2',
        assets: ['x'],
        _run_id: 'run-1',
        network: 'mainnet',
        chain: '43114',
      },
    ]);
  });
});

describe('RecordBatchBuilder', () => {
  const small = z.object({
    id: lake.int64(),
    items: z.array(z.object({ n: lake.amount() })),
    note: z.string(),
  });

  it('leaves the batch untouched when a record does not fit, even half-way through a nested value', () => {
    const builder = createRecordBatchBuilder(small);
    builder.append({ id: 1, items: [{ n: '1' }], note: 'ok' });
    // The second item fails after the first was appended to the child column.
    expect(() => builder.append({ id: 2, items: [{ n: '2' }, { n: '1.5' }], note: 'bad' })).toThrow(
      RecordTypeError,
    );
    expect(() => builder.append({ id: 3, items: [], note: null })).toThrow(
      /column note: a value is required/,
    );
    builder.append({ id: 4, items: [{ n: '4' }, { n: '44' }], note: 'ok' });
    const batch = builder.finish();
    expect(batch.numRows).toBe(2);
    expect(batch.toArray().map((r) => r.toJSON())).toMatchObject([
      { id: 1n, note: 'ok' },
      { id: 4n, note: 'ok' },
    ]);
    const items = batch.getChild('items');
    expect(items?.get(1)?.length).toBe(2);
    expect(builder.rows).toBe(0);
  });

  it('names the column and value that do not fit', () => {
    const builder = createRecordBatchBuilder(small);
    expect(() => builder.append({ id: 'x', items: [], note: '' })).toThrow('column id: expected an int64');
    expect(() => builder.append({ id: 1, items: [{ n: 5.5 }], note: '' })).toThrow('column items[].n');
  });

  it('derives the same Arrow schema as the builder uses', () => {
    const schema = arrowSchemaOf(small, lineageFields(['network']));
    expect(schema.fields.map((f) => `${f.name}:${f.type}:${f.nullable}`)).toEqual([
      'id:Int64:false',
      'items:List<Struct<{n:Decimal[38e0]}>>:false',
      'note:Utf8:false',
      '_run_id:Utf8:false',
      '_extracted_at:Timestamp<MILLISECOND, UTC>:false',
      'network:Utf8:false',
    ]);
  });
});
