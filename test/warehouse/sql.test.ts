import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql as sqlCommand } from '../../src/cli/sql.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { captureOutput, runCli } from '../helpers/output.ts';
import { CORE_STREAMS } from '../helpers/truth.ts';

/** `avalake sql`: a table, CSV or JSON with exact amounts; mistakes are exit 2, read-only. */

const MODELS = join(mkdtempSync(join(tmpdir(), 'avalake-models-')), 'models');
cpSync('sql/models/staging', join(MODELS, 'staging'), { recursive: true });
// The core streams (what the marts read); the other staging models are skipped for want of data.
const STREAMS = CORE_STREAMS.join(',');

let emulator: Emulator;
let dataDir: string;

beforeAll(async () => {
  emulator = await startEmulator();
  const workspace = demoWorkspace(emulator);
  dataDir = workspace.dataDir;
  expect((await extractOnce(workspace.pipelinePath, dataDir, { streams: STREAMS })).status).toBe('ok');
  await buildWarehouse({ dataDir, modelsDir: MODELS });
});
afterAll(() => emulator.close());

/** The command in-process, as the CLI runs it, capturing what it prints. */
function sql(query: string, ...flags: string[]) {
  const format = flags[0] === '--format' ? (flags[1] as 'csv' | 'json') : 'table';
  return captureOutput(() => sqlCommand({ query, dataDir, format }));
}

const TOTALS = `select reward_type, count(*) as count_rewards, sum(reward_navax) as reward_navax
  from stg_rewards group by reward_type order by reward_type`;

describe('avalake sql', () => {
  it('prints a table, CSV or JSON whose amounts are exact to the nAVAX', async () => {
    const truth = await withDuckDB(join(dataDir, 'warehouse.duckdb'), (db) => queryRows(db, TOTALS), {
      readOnly: true,
    });
    expect(truth.length).toBeGreaterThan(0);
    const table = await sql(TOTALS);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^reward_type\s+count_rewards\s+reward_navax$/);
    expect(lines[1]).toMatch(/^-+\s+-+\s+-+$/);
    expect(lines.at(-1)).toBe(`(${truth.length} rows)`);
    for (const [i, row] of truth.entries())
      expect(lines[i + 2]?.split(/\s+/)).toEqual([row.reward_type, row.count_rewards, row.reward_navax]);

    const csv = await sql(TOTALS, '--format', 'csv');
    expect(csv.stdout.trimEnd().split('\n')).toEqual([
      'reward_type,count_rewards,reward_navax',
      ...truth.map((r) => `${r.reward_type},${r.count_rewards},${r.reward_navax}`),
    ]);
    const json = await sql(TOTALS, '--format', 'json');
    expect(JSON.parse(json.stdout)).toEqual(truth);
  });

  it('JSON keeps every column of a join whose tables share names, the repeats suffixed _1, _2', async () => {
    const json = await sql(
      `select r.network, u.network, r.utxo_id, 1 as network_1, r.network
       from stg_rewards as r join stg_rewards as u using (utxo_id) order by r.utxo_id limit 1`,
      '--format',
      'json',
    );
    expect(json.code).toBe(0);
    const [row] = JSON.parse(json.stdout);
    expect(Object.keys(row)).toEqual(['network', 'network_2', 'utxo_id', 'network_1', 'network_3']);
    expect(row).toMatchObject({ network: 'fuji', network_2: 'fuji', network_1: 1, network_3: 'fuji' });
  });

  it('a typo, an unknown table and a write are exit 2 with DuckDB’s message; a failing query is exit 1', async () => {
    const before = createHash('sha256')
      .update(readFileSync(join(dataDir, 'warehouse.duckdb')))
      .digest('hex');
    const typo = await sql('selec 1');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^avalake: Parser Error: syntax error at or near "selec"/);
    const unknown = await sql('select * from stg_nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Table with name stg_nope does not exist');
    const write = await sql('drop view stg_rewards');
    expect(write.code).toBe(2);
    expect(write.stderr).toContain('read-only');
    const failing = await sql(`select cast('abc' as integer)`);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toMatch(/^avalake: the query failed: Conversion Error/);
    // Two statements: DuckDB would answer the last alone, so neither runs.
    const two = await sql('select 1 as a; select 2 as b');
    expect(two.code).toBe(2);
    expect(two.stdout).toBe('');
    expect(two.stderr).toBe(
      'avalake: the query holds 2 statements; give one at a time (one avalake sql each), or join their answers in one query\n',
    );
    // One statement with a trailing semicolon is one.
    expect((await sql('select 1 as a;')).code).toBe(0);
    for (const r of [typo, unknown, write, failing, two]) expect(r.stderr).not.toMatch(/^\s+at\s/m);
    expect(
      createHash('sha256')
        .update(readFileSync(join(dataDir, 'warehouse.duckdb')))
        .digest('hex'),
    ).toBe(before);
  });

  it('through the CLI: no warehouse is exit 2 and says to build one', async () => {
    const child = spawn(
      process.execPath,
      ['bin/avalake.js', 'sql', 'select 1', '--data-dir', join(tmpdir(), 'avalake-none')],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => child.on('close', r));
    expect(code).toBe(2);
    expect(stderr).toContain('run "avalake build --data-dir');
  });

  it('through the CLI: after a lone --, the query is taken as written, even one that starts with a dash', async () => {
    const query = 'select 1 as one, 2 as two';
    const plain = await runCli(['sql', query, '--data-dir', dataDir, '--format', 'csv']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe('one,two\n1,2\n');
    // Before, yargs left the words after -- out of the positional: "Not enough non-option arguments".
    const inEnv = { AVALAKE_DATA_DIR: dataDir };
    const [table, tableAfter, csvAfter, comment, beforeCommand] = await Promise.all([
      runCli(['sql', query], inEnv),
      runCli(['sql', '--', query], inEnv),
      runCli(['sql', '--data-dir', dataDir, '--format', 'csv', '--', query]),
      runCli(['sql', '--data-dir', dataDir, '--format', 'csv', '--', `-- the two numbers\n${query}`]),
      runCli(['--', 'sql', query], inEnv),
    ]);
    expect(table.code, table.stderr).toBe(0);
    expect(tableAfter).toEqual(table);
    for (const result of [csvAfter, comment]) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(plain.stdout);
    }
    // A -- before the command's name is a mistake (before, exit 2 naming "----" as given twice).
    expect(beforeCommand.code).toBe(2);
    expect(beforeCommand.stderr).toMatch(/^avalake: a lone -- goes after the command, before its argument/);

    // A negative number is a query too: DuckDB judges it, either way it is written.
    const [negative, negativeAfter] = await Promise.all([
      runCli(['sql', '-1', '--data-dir', dataDir]),
      runCli(['sql', '--data-dir', dataDir, '--', '-1']),
    ]);
    expect(negative.stderr).toMatch(/^avalake: Parser Error: syntax error at or near "-"/);
    expect(negativeAfter).toEqual(negative);
    // After --, everything is the command's argument: flags there are not read as flags.
    const flagsAfter = await runCli(['sql', '--data-dir', dataDir, '--', query, '--format', 'csv']);
    expect(flagsAfter.code).toBe(2);
    expect(flagsAfter.stderr).toMatch(/^avalake: Unknown arguments: --format, csv$/m);
    // A flag just before -- has no value: -- ends the flags, the query is not taken for its value.
    const bare = await runCli(['sql', '--data-dir', '--', query]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/^avalake: --data-dir needs a value; see avalake sql --help$/m);
  });
});
