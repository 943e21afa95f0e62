import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCommandRun } from '../../src/cli/export.ts';
import { report } from '../../src/cli/report.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows } from '../../src/warehouse/duckdb.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { captureOutput } from '../helpers/output.ts';
import { CORE_STREAMS } from '../helpers/truth.ts';

/** `avalake export`: the model's rows and types, exactly, in Parquet (a file or a partitioned folder) or CSV. */

const MODELS = join(mkdtempSync(join(tmpdir(), 'avalake-models-')), 'models');
cpSync('sql/models/staging', join(MODELS, 'staging'), { recursive: true });
// The core streams (what the marts read); the other staging models are skipped for want of data.
const STREAMS = CORE_STREAMS.join(',');

let emulator: Emulator;
let dataDir: string;
let out: string;

beforeAll(async () => {
  emulator = await startEmulator();
  const workspace = demoWorkspace(emulator);
  dataDir = workspace.dataDir;
  out = mkdtempSync(join(tmpdir(), 'avalake-export-'));
  expect((await extractOnce(workspace.pipelinePath, dataDir, { streams: STREAMS })).status).toBe('ok');
  await buildWarehouse({ dataDir, modelsDir: MODELS });
});
afterAll(() => emulator.close());

const run = (args: Parameters<typeof exportCommandRun>[0]) =>
  captureOutput(() => exportCommandRun({ dataDir, ...args }));

/** Rows of `a` not in `b` and of `b` not in `a`, and the types of both, with the warehouse attached. */
async function compare(exported: string) {
  const db = await DuckDBInstance.create(':memory:', { autoload_known_extensions: 'false' });
  const c = await db.connect();
  try {
    await c.run(`attach '${join(dataDir, 'warehouse.duckdb')}' as wh (read_only)`);
    const columns = (await queryRows(c, 'describe wh.stg_rewards')).map((r) => `"${r.column_name}"`);
    // By name: a partitioned export moves its partition column last.
    await c.run(`create view exported as select ${columns.join(', ')} from ${exported}`);
    const [diff] = await queryRows(
      c,
      `select (select count(*) from (select * from wh.stg_rewards except all select * from exported)) as only_model,
              (select count(*) from (select * from exported except all select * from wh.stg_rewards)) as only_export,
              (select count(*) from exported) as n`,
    );
    const types = async (t: string) =>
      (await queryRows(c, `describe ${t}`)).map((r) => `${r.column_name} ${r.column_type}`);
    return { diff, modelTypes: await types('wh.stg_rewards'), exportTypes: await types('exported') };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

describe('avalake export', () => {
  it('writes Parquet with the same rows and types (DECIMAL(38,0) amounts, UTC timestamps)', async () => {
    const path = join(out, 'rewards.parquet');
    const result = await run({ model: 'stg_rewards', format: 'parquet', out: path });
    expect(result.code).toBe(0);
    const { diff, modelTypes, exportTypes } = await compare(`read_parquet('${path}')`);
    expect(diff).toEqual({ only_model: '0', only_export: '0', n: expect.any(String) });
    expect(Number(diff?.n)).toBeGreaterThan(0);
    expect(result.stdout).toBe(`exported stg_rewards: ${diff?.n} rows to ${path}\n`);
    expect(exportTypes).toEqual(modelTypes);
    expect(exportTypes).toContain('reward_navax DECIMAL(38,0)');
    expect(readdirSync(out).filter((f) => f.includes('exporting'))).toEqual([]);
  });

  it('--partition-by writes a folder of col=value/ Parquet files holding every row', async () => {
    const path = join(out, 'rewards-by-type');
    const result = await run({
      model: 'stg_rewards',
      format: 'parquet',
      out: path,
      partitionBy: 'reward_type',
    });
    expect(result.code).toBe(0);
    expect(readdirSync(path).sort()).toEqual([
      'reward_type=DELEGATOR',
      'reward_type=VALIDATOR',
      'reward_type=VALIDATOR_FEE',
    ]);
    const { diff } = await compare(
      `read_parquet('${path}/**/*.parquet', hive_partitioning = true, hive_types_autocast = false)`,
    );
    expect(diff).toMatchObject({ only_model: '0', only_export: '0' });
    const again = await run({
      model: 'stg_rewards',
      format: 'parquet',
      out: path,
      partitionBy: 'reward_type',
    });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already exists');
  });

  it('writes CSV with a header and exact amounts', async () => {
    const path = join(out, 'rewards.csv');
    expect((await run({ model: 'stg_rewards', format: 'csv', out: path })).code).toBe(0);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines[0]?.split(',')).toContain('reward_navax');
    const { diff } = await compare(
      `read_csv('${path}', header = true, types = {'reward_navax': 'DECIMAL(38,0)'})`,
    );
    expect(diff?.n).toBe(String(lines.length - 1));
  });

  it('writes lists and structs to CSV as JSON, which a reader parses back to the same values', async () => {
    const path = join(out, 'rewards-nested.csv');
    expect((await run({ model: 'stg_rewards', format: 'csv', out: path })).code).toBe(0);
    const db = await DuckDBInstance.create(':memory:', { autoload_known_extensions: 'false' });
    const c = await db.connect();
    try {
      await c.run(`attach '${join(dataDir, 'warehouse.duckdb')}' as wh (read_only)`);
      const rows = await queryRows(
        c,
        `select count(*) as n,
                count(*) filter (where e.reward_addresses::json <> to_json(m.reward_addresses)) as differ,
                count(*) filter (where len(m.reward_addresses) > 0) as with_addresses
         from read_csv('${path}', header = true, all_varchar = true) as e
         join wh.stg_rewards as m using (utxo_id)`,
      );
      expect(rows[0]?.differ).toBe('0');
      expect(Number(rows[0]?.with_addresses)).toBeGreaterThan(0);
      expect(readFileSync(path, 'utf8')).toMatch(/,"\[""fuji1/);
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });

  it('an unknown model or column is exit 2 naming what exists, and writes nothing', async () => {
    const path = join(out, 'nothing.parquet');
    const model = await run({ model: 'stg_nope', format: 'parquet', out: path });
    expect(model.code).toBe(2);
    expect(model.stderr).toMatch(/no model named "stg_nope" in the warehouse; models: .*stg_rewards/);
    const column = await run({
      model: 'stg_rewards',
      format: 'parquet',
      out: join(out, 'x'),
      partitionBy: 'nope',
    });
    expect(column.code).toBe(2);
    expect(column.stderr).toMatch(/stg_rewards has no column "nope"; columns: utxo_id/);
    expect(existsSync(path) || existsSync(join(out, 'x'))).toBe(false);
  });

  it('refuses to write over the warehouse or into the lake (exit 2), and both stay as they were', async () => {
    const warehouse = join(dataDir, 'warehouse.duckdb');
    // A committed lake file, named through its stream's folder (a link into the lake's generations).
    const stream = join(dataDir, 'lake', 'rewards');
    const partition = readdirSync(stream)[0] as string;
    const lakeFile = join(stream, partition, readdirSync(join(stream, partition))[0] as string);
    const digests = () =>
      [warehouse, lakeFile].map((f) => createHash('sha256').update(readFileSync(f)).digest('hex'));
    const before = digests();
    for (const [target, says] of [
      [warehouse, "is the warehouse's own file (warehouse.duckdb)"],
      [`${warehouse}.previous`, "is the warehouse's own file (warehouse.duckdb.previous)"],
      [lakeFile, `is inside the lake (${realpathSync(join(dataDir, 'lake'))})`],
      [join(stream, 'new.parquet'), 'is inside the lake'],
    ] as const) {
      const exported = await run({ model: 'stg_rewards', format: 'csv', out: target });
      expect([exported.code, exported.stderr]).toEqual([2, expect.stringContaining(says)]);
      const reported = await captureOutput(() => report({ dataDir, out: target }));
      expect([reported.code, reported.stderr]).toEqual([2, expect.stringContaining(says)]);
    }
    expect(digests()).toEqual(before);
    expect(existsSync(join(stream, 'new.parquet'))).toBe(false);
  });
});
