import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { test as testCommand } from '../../src/cli/test.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { readLakeState } from '../../src/load/index.ts';
import { CHAIN_METRICS, RATE_METRICS } from '../../src/reference/metrics.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { DEFAULT_TESTS_DIR, loadSqlTests, runWarehouseTests } from '../../src/warehouse/test.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { captureOutput } from '../helpers/output.ts';
import { CORE_STREAMS } from '../helpers/truth.ts';

/**
 * `avalake test` against a warehouse built from the emulator's lake: the declared checks and the
 * reconciliations pass on the truth, and each kind of defect, planted in a copy of the warehouse, fails
 * with its offending rows printed and exit 1. The staging models only, so work on the marts elsewhere
 * cannot move these results.
 */

const STAGING = join(mkdtempSync(join(tmpdir(), 'avalake-models-')), 'models');
cpSync('sql/models/staging', join(STAGING, 'staging'), { recursive: true });
// The SQL tests beside them, where `avalake test` looks for them.
cpSync('sql/tests', join(dirname(STAGING), 'tests'), { recursive: true });
// The core streams (what the marts read); the other staging models are skipped for want of data.
const STREAMS = CORE_STREAMS.join(',');
// stg_icm_messages is left out: its `not_null: sent_at` fails on delivered_source_not_indexed messages.
const CLEAN =
  'stg_delegators,stg_erc20_transfers,stg_metrics,stg_rewards,stg_staking_transactions,stg_utxos,stg_validators,stg_validator_delegators';

let emulator: Emulator;
let dataDir: string;
let newestCommit: number;

beforeAll(async () => {
  emulator = await startEmulator();
  const workspace = demoWorkspace(emulator);
  dataDir = workspace.dataDir;
  expect((await extractOnce(workspace.pipelinePath, dataDir, { streams: STREAMS })).status).toBe('ok');
  await buildWarehouse({ dataDir, modelsDir: STAGING });
  const lake = await readLakeState(dataDir);
  newestCommit = Math.max(
    ...[...lake.values()].flatMap((s) => [...s.partitions.values()].map((p) => Date.parse(p.committedAt))),
  );
});
afterAll(() => emulator.close());

/** Runs the command as the CLI would, capturing what it prints. */
async function run(args: Parameters<typeof testCommand>[0], now = newestCommit + 60_000) {
  const { code, stdout, stderr } = await captureOutput(() => testCommand({ models: STAGING, ...args }, now));
  return { code, out: stdout, err: stderr };
}

/** A copy of the data directory's warehouse with `statements` run on it. */
async function tampered(statements: string[]): Promise<string> {
  const dir = join(mkdtempSync(join(tmpdir(), 'avalake-tampered-')), 'data');
  mkdirSync(dir);
  cpSync(join(dataDir, 'warehouse.duckdb'), join(dir, 'warehouse.duckdb'));
  cpSync(join(dataDir, 'lake', '_commits'), join(dir, 'lake', '_commits'), { recursive: true });
  await withDuckDB(join(dir, 'warehouse.duckdb'), async (db) => {
    for (const s of statements) await db.run(s);
  });
  return dir;
}

describe('avalake test', () => {
  it('passes on the emulator lake: keys, not-null, accepted values, freshness and the stake reconciliation', async () => {
    const hash = () =>
      createHash('sha256')
        .update(readFileSync(join(dataDir, 'warehouse.duckdb')))
        .digest('hex');
    const before = hash();
    const { code, out } = await run({ dataDir, select: CLEAN });
    expect(out).not.toMatch(/^(FAIL|ERROR)/m);
    expect(code).toBe(0);
    expect(out).toMatch(/^PASS\s+unique stg_rewards \(utxo_id\)$/m);
    expect(out).toMatch(/^PASS\s+accepted_values stg_delegators\.delegation_status$/m);
    expect(out).toMatch(/^PASS\s+reconcile_validator_stake$/m);
    expect(out).toMatch(/^PASS\s+metrics_whole_values$/m);
    expect(out).toMatch(/^PASS\s+freshness rewards$/m);
    // No stream holds every EVM transaction yet: the reconciliation says why it did not run.
    expect(out).toMatch(/^SKIP\s+reconcile_evm_tx_count: needs stg_evm_transactions/m);
    // Read-only: the warehouse is byte for byte what the build wrote.
    expect(hash()).toBe(before);
  });

  it('the stake reconciliation compares something: validators and delegations joined to their transactions', async () => {
    const rows = await withDuckDB(
      join(dataDir, 'warehouse.duckdb'),
      (db) =>
        queryRows(
          db,
          `select count(*) as n from stg_validators v join stg_staking_transactions s on s.tx_hash = v.tx_id where v.subnet = 'primary'`,
        ),
      { readOnly: true },
    );
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);
  });

  it('a duplicate key, a null, a value outside the accepted ones and a changed stake fail with their rows', async () => {
    // Staging models are tables: the tampering edits them in place.
    const dir = await tampered([
      `insert into stg_rewards select * from stg_rewards order by utxo_id limit 1`,
      `update stg_rewards set reward_type = 'BOGUS' where utxo_id = (select max(utxo_id) from stg_rewards)`,
      `update stg_rewards set node_id = null where utxo_id = (select utxo_id from stg_rewards order by utxo_id desc limit 1 offset 1)`,
      `update stg_validators set weight = weight + 1 where tx_id in (select tx_hash from stg_staking_transactions) and subnet = 'primary'`,
    ]);
    const { code, out } = await run({ dataDir: dir, select: CLEAN });
    expect(code).toBe(1);
    const duplicate = await withDuckDB(
      join(dir, 'warehouse.duckdb'),
      (db) => queryRows(db, 'select min(utxo_id) as id from stg_rewards'),
      { readOnly: true },
    );
    expect(out).toMatch(/^FAIL\s+unique stg_rewards \(utxo_id\): 1 offending row$/m);
    expect(out).toContain(String(duplicate[0]?.id));
    expect(out).toMatch(
      /^FAIL\s+accepted_values stg_rewards\.reward_type: 1 offending row\n.*\n.*\n\s+BOGUS\s+1$/m,
    );
    expect(out).toMatch(/^FAIL\s+not_null stg_rewards\.node_id: 1 offending row$/m);
    expect(out).toMatch(/^FAIL\s+reconcile_validator_stake: \d+ offending rows?$/m);
    expect(out).toContain('validator differs from its staking tx');
    expect(out).toMatch(/\d+ passed, 4 failed, 0 errors, \d+ skipped$/m);
  });

  it('metrics_whole_values fails on a count or amount with a fraction, with its rows, and lets a rate have one', async () => {
    // Every metric's newest day point of one chain set to 2.5: a value a rate may take, a count may not.
    const point = `time_interval = 'day'
      and chain_id = (select min(chain_id) from stg_metrics)
      and period_start = (select max(period_start) from stg_metrics where time_interval = 'day')`;
    const dir = await tampered([`update stg_metrics set "value" = 2.5 where ${point}`]);
    const counts = CHAIN_METRICS.filter((m) => !RATE_METRICS.has(m));
    const planted = await withDuckDB(
      join(dir, 'warehouse.duckdb'),
      (db) => queryRows(db, `select metric from stg_metrics where ${point} order by metric`),
      { readOnly: true },
    );
    expect(planted.map((r) => r.metric)).toEqual([...CHAIN_METRICS].sort());
    const { code, out } = await run({ dataDir: dir, select: 'stg_metrics' });
    expect(code).toBe(1);
    expect(out).toMatch(new RegExp(`^FAIL\\s+metrics_whole_values: ${counts.length} offending rows$`, 'm'));
    expect(out).toMatch(/^\s+fuji\s+\S+\s+activeAddresses\s+day\s+.*\s2\.5\s*$/m);
    // The SQL lists the count metrics itself: the rows it reports are exactly those not in RATE_METRICS.
    const wholeValues = loadSqlTests(DEFAULT_TESTS_DIR).find((t) => t.name === 'metrics_whole_values');
    const reported = await withDuckDB(
      join(dir, 'warehouse.duckdb'),
      (db) => queryRows(db, `select distinct metric from (${wholeValues?.sql}) order by metric`),
      { readOnly: true },
    );
    expect(reported.map((r) => r.metric)).toEqual([...counts].sort());
  });

  it('freshness fails for a stream whose partitions were last checked longer ago than --max-age, naming them', async () => {
    const later = newestCommit + 2 * 86_400_000 + 3_600_000;
    const stale = await run({ dataDir, select: 'stg_metrics' }, later);
    expect(stale.code).toBe(1);
    const partitions = (await readLakeState(dataDir)).get('metrics')?.partitions.size;
    expect(stale.out).toMatch(
      new RegExp(
        `^FAIL\\s+freshness metrics: ${partitions} of ${partitions} partitions last checked more than 1d 0h ago \\(oldest: network=fuji .*, 2d 1h ago\\)$`,
        'm',
      ),
    );
    const allowed = await run({ dataDir, select: 'stg_metrics', maxAge: ['metrics=3d'] }, later);
    expect(allowed.code).toBe(0);
    expect(allowed.out).toMatch(/^PASS\s+freshness metrics$/m);
    const bad = await run({ dataDir, maxAge: ['soon'] });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--max-age: "soon" is not a duration');
  });

  it('reconciles a day of EVM transactions with the txCount metric once a model holds them', async () => {
    // A chain's txCount for one day, and transactions around it so the lake holds that day whole.
    const [day] = await withDuckDB(
      join(dataDir, 'warehouse.duckdb'),
      (db) =>
        queryRows(
          db,
          `select chain_id, cast(period_start as varchar) as day, cast("value" as bigint) as n from stg_metrics
           where metric = 'txCount' and time_interval = 'day' and "value" between 1 and 5000 order by period_start desc, chain_id limit 1`,
        ),
      { readOnly: true },
    );
    expect(day).toBeDefined();
    const transactions = (n: number) => [
      `create table stg_evm_transactions as
         select '${day?.chain_id}' as chain_id, t.ts as block_timestamp from (
           select cast('${day?.day}' as timestamptz) - interval 1 hour as ts
           union all select cast('${day?.day}' as timestamptz) + interval 1 hour + i * interval 1 second from range(${n}) r(i)
           union all select cast('${day?.day}' as timestamptz) + interval 25 hour
         ) t`,
    ];
    const whole = await run({ dataDir: await tampered(transactions(Number(day?.n))), select: 'stg_metrics' });
    expect(whole.out).toMatch(/^PASS\s+reconcile_evm_tx_count$/m);
    const short = await run({
      dataDir: await tampered(transactions(Number(day?.n) - 1)),
      select: 'stg_metrics',
    });
    expect(short.code).toBe(1);
    expect(short.out).toMatch(/^FAIL\s+reconcile_evm_tx_count: 1 offending row$/m);
    expect(short.out).toContain(String(day?.chain_id));
  });

  it('no warehouse is exit 2 with how to build one; a check that cannot run is an error, exit 1', async () => {
    const none = await run({ dataDir: join(tmpdir(), 'avalake-no-such-dir') });
    expect(none.code).toBe(2);
    expect(none.err).toContain('run "avalake build');
    const dir = await tampered(['alter table stg_rewards drop column reward_type']);
    const report = await runWarehouseTests({
      dataDir: dir,
      modelsDir: STAGING,
      select: 'stg_rewards',
      now: newestCommit,
    });
    const broken = report.outcomes.find((o) => o.name === 'accepted_values stg_rewards.reward_type');
    expect(broken?.status).toBe('error');
    expect(broken?.message).toContain('reward_type');
  });

  it('a SQL test reading a model the pipeline does not produce is skipped with its reason, not an error', async () => {
    // As if the pipeline named no validators: reconcile_validator_stake reads stg_validator_delegators
    // without listing it under `requires`; what the test reads is enough to know it cannot run.
    const dir = await tampered(['drop table stg_validator_delegators']);
    const { code, out } = await run({ dataDir: dir, select: CLEAN });
    expect(code).toBe(0);
    expect(out).toMatch(
      /^SKIP\s+reconcile_validator_stake: needs stg_validator_delegators, not in the warehouse/m,
    );
    expect(out).not.toMatch(/^ERROR/m);
  });

  it('the checks of a model not built, and the freshness of streams never extracted, are one line each', async () => {
    const report = await runWarehouseTests({ dataDir, modelsDir: STAGING, now: newestCommit });
    const { code, out } = await run({ dataDir });
    expect(code).toBe(0);
    const lines = out.trimEnd().split('\n');
    const skips = lines.filter((l) => l.startsWith('SKIP'));
    // A model of a stream the pipeline did not extract: every check of it skipped, on one line.
    const unbuilt = report.outcomes.filter((o) => o.subject === 'stg_blockchain_status');
    expect(unbuilt.length).toBeGreaterThan(1);
    expect(unbuilt.every((o) => o.status === 'skip')).toBe(true);
    expect(skips.filter((l) => l.includes('stg_blockchain_status'))).toEqual([
      `SKIP   ${unbuilt.length} checks of stg_blockchain_status: stg_blockchain_status is not in the warehouse (the build skips a model whose streams have no data yet)`,
    ]);
    const stale = report.outcomes.filter((o) => o.kind === 'freshness' && o.status === 'skip');
    expect(stale.length).toBeGreaterThan(1);
    expect(skips.filter((l) => l.includes('freshness'))).toEqual([
      `SKIP   freshness of ${stale.length} streams (${stale.map((o) => o.subject).join(', ')}): nothing committed yet (not extracted by the pipeline)`,
    ]);
    // Fewer lines than skips, every skip still counted.
    expect(skips.length).toBeLessThan(report.skipped / 3);
    expect(lines.at(-1)).toBe(
      `${report.passed} passed, ${report.failed} failed, ${report.errored} errors, ${report.skipped} skipped`,
    );
  });
});
