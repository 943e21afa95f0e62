import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { StakeRec } from '../../src/emulator/world/primary/index.ts';
import { type Pipeline, PipelineSchema } from '../../src/extract/pipeline.ts';
import type { ChainMetric } from '../../src/reference/metrics.ts';
import { buildWarehouse, DEFAULT_MODELS_DIR } from '../../src/warehouse/build.ts';
import { startEmulator, TEST_EPOCH } from './emulator.ts';
import { demoWorkspace, extractOnce } from './extract.ts';
import { MART_STREAMS } from './truth.ts';
import { queryWarehouse, scaled, utcDay } from './warehouse.ts';

const DAY = 86_400;

/** The lake the marts are checked on: extract runs of the demo pipeline's mart streams, built into a warehouse. */
export interface MartsWorkspace {
  emulator: Emulator;
  workspace: ReturnType<typeof demoWorkspace>;
  pipeline: Pipeline;
  /** The world time of each run, oldest first: each run's validators snapshot was taken then. */
  snapshotTimes: number[];
  /** The last run's world time (the newest extract). */
  now: number;
  /** Runs a query on the built warehouse. */
  query(sql: string): Promise<Record<string, unknown>[]>;
}

/**
 * An emulator at TEST_EPOCH and `runs` extract runs of the mart streams a day apart (three validators
 * snapshots, and the world growing in between), then one warehouse build in which every mart builds.
 * The caller closes `emulator`.
 */
export async function martsWorkspace(options: { runs?: number } = {}): Promise<MartsWorkspace> {
  const runs = options.runs ?? 3;
  const emulator = await startEmulator();
  const workspace = demoWorkspace(emulator);
  const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
  const snapshotTimes: number[] = [];
  // Note: a snapshot is stamped with the extractor's wall clock; pinning Date to the emulator's clock
  // makes each snapshot's time the world time it shows.
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    for (let run = 0; run < runs; run++) {
      if (run > 0) emulator.advance(DAY);
      const now = Math.floor(emulator.clock.now());
      vi.setSystemTime(now * 1000);
      const summary = await extractOnce(workspace.pipelinePath, workspace.dataDir, {
        streams: MART_STREAMS.join(','),
      });
      if (summary.status !== 'ok') throw new Error(`extract run ${run + 1} ended ${summary.status}`);
      snapshotTimes.push(now);
    }
  } finally {
    vi.useRealTimers();
  }
  if (snapshotTimes[0] !== TEST_EPOCH) throw new Error(`the first run was at ${snapshotTimes[0]}`);
  const built = await buildWarehouse({ dataDir: workspace.dataDir });
  // Staging models of streams this lake does not hold are skipped; every mart builds.
  const skippedMarts = built.skipped.filter((s) => !s.name.startsWith('stg_'));
  if (skippedMarts.length > 0) throw new Error(`marts not built: ${JSON.stringify(skippedMarts)}`);
  return {
    emulator,
    workspace,
    pipeline,
    snapshotTimes,
    now: snapshotTimes[snapshotTimes.length - 1] as number,
    query: (sql) => queryWarehouse(workspace.dataDir, sql),
  };
}

/** A metric's column in chain_metrics_daily: its name in snake case (avgGasPrice → avg_gas_price). */
export const metricColumn = (metric: ChainMetric): string =>
  metric.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Rows by key, each row's compared columns. */
export type Rows = Record<string, Record<string, unknown>>;

/** The keys whose rows differ between two keyed sets (a row missing on either side included). */
export const differing = (got: Rows, want: Rows): string[] =>
  [...new Set([...Object.keys(got), ...Object.keys(want)])].filter(
    (k) => JSON.stringify(got[k]) !== JSON.stringify(want[k]),
  );

/** A query on one warehouse: the workspace's own, or a planted copy's. */
export type Query = (sql: string) => Promise<Record<string, unknown>[]>;

/**
 * A copy of sql/models with one edit to one mart (`from` replaced by `to`, which must occur), built with
 * what it reads into a warehouse of its own beside the workspace's lake. Returns a query on it. Call it
 * inside a test: the copy and its warehouse are deleted when that test finishes.
 */
export async function buildPlanted(
  w: MartsWorkspace,
  plant: { mart: string; from: string; to: string },
): Promise<Query> {
  const dir = mkdtempSync(join(tmpdir(), 'avalake-planted-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const models = join(dir, 'models');
  cpSync(DEFAULT_MODELS_DIR, models, { recursive: true });
  const path = join(models, 'marts', `${plant.mart}.sql`);
  const sql = readFileSync(path, 'utf8');
  if (!sql.includes(plant.from))
    throw new Error(`${plant.mart}.sql has no "${plant.from}" to plant a defect in`);
  writeFileSync(path, sql.replace(plant.from, plant.to));
  await buildWarehouse({
    dataDir: w.workspace.dataDir,
    localDir: dir,
    modelsDir: models,
    select: `+${plant.mart}`,
  });
  return (query) => queryWarehouse(dir, query);
}

/** Whether the pipeline mirrors a reward or delegation: its node is configured, or one of its owners. */
export const isMirrored = (pipeline: Pipeline, nodeId: string, owners: readonly string[]): boolean =>
  pipeline.primary.nodeIds.includes(nodeId) || owners.some((a) => pipeline.primary.addresses.includes(a));

/**
 * rewards_daily from the world: per UTC day of payment (the reward UTXO's creation), reward address and
 * node, the rewards' count and nAVAX, the VALIDATOR_FEE ones alone, and USD to the cent.
 */
export function rewardsDailyTruth(w: MartsWorkspace, now = w.now): Rows {
  const primary = w.emulator.truth.primary(w.pipeline.network);
  const sums = new Map<
    string,
    { count: number; navax: bigint; fees: number; feeNavax: bigint; micros: bigint }
  >();
  for (const { utxo, stake } of primary.rewards(now)) {
    if (!isMirrored(w.pipeline, stake.nodeId, utxo.addresses)) continue;
    // Prices have six decimals (sub-cent): the truth sums nAVAX × micro-USD exactly.
    const priceMicros = BigInt(Math.round(primary.priceAt(utxo.createdAt, 'usd') * 1e6));
    const isFee = utxo.rewardType === 'VALIDATOR_FEE';
    for (const address of utxo.addresses) {
      const key = `${utcDay(utxo.createdAt)} ${address} ${stake.nodeId}`;
      const e = sums.get(key) ?? { count: 0, navax: 0n, fees: 0, feeNavax: 0n, micros: 0n };
      sums.set(key, e);
      e.count++;
      e.navax += utxo.amount;
      e.fees += isFee ? 1 : 0;
      e.feeNavax += isFee ? utxo.amount : 0n;
      e.micros += utxo.amount * priceMicros;
    }
  }
  return Object.fromEntries(
    [...sums].map(([key, e]) => [
      key,
      {
        count: e.count,
        navax: String(e.navax),
        fees: e.fees,
        fee_navax: String(e.feeNavax),
        // nAVAX × micro-USD → cents (1e9 × 1e6 / 100), rounded half up
        usd: scaled((e.micros + 5_000_000_000_000n) / 10_000_000_000_000n, 2),
      },
    ]),
  );
}

/** rewards_daily as a warehouse holds it, in rewardsDailyTruth's form. */
export async function rewardsDailyIn(query: Query): Promise<Rows> {
  const rows = await query(
    `select reward_day, reward_address, node_id, count_rewards, reward_navax, count_fee_rewards,
            fee_reward_navax, reward_usd
     from rewards_daily`,
  );
  return Object.fromEntries(
    rows.map((r) => [
      `${r.reward_day} ${r.reward_address} ${r.node_id}`,
      {
        count: Number(r.count_rewards),
        navax: String(r.reward_navax),
        fees: Number(r.count_fee_rewards),
        fee_navax: String(r.fee_reward_navax),
        usd: String(r.reward_usd),
      },
    ]),
  );
}

const YEAR_SECONDS = 31_536_000n;
/** A rate as apr_realized gives it: `navax / (amount × seconds)` a year, truncated to 12 decimals. */
const annual = (navax: bigint, s: StakeRec) =>
  scaled((navax * YEAR_SECONDS * 10n ** 12n) / (s.amount * BigInt(s.end - s.start)), 12);
/** A period's reward UTXOs of the given types paid by `now`, summed. */
const paidOf = (s: StakeRec, types: readonly string[], now: number) =>
  s.rewardUtxos
    .filter((u) => types.includes(u.rewardType as string) && u.createdAt <= now)
    .reduce((n, u) => n + u.amount, 0n);

/**
 * apr_realized against the world: each row the mart holds beside what the world says of its period
 * (`got`, `want`, keyed by staking transaction), and the finished periods the mart must hold but does not.
 */
export async function aprTruth(
  w: MartsWorkspace,
  query: Query,
): Promise<{ got: Rows; want: Rows; missing: string[]; rows: Record<string, unknown>[] }> {
  const { pipeline, now, snapshotTimes } = w;
  const stakes = new Map(
    w.emulator.truth
      .primary(pipeline.network)
      .stakes(now)
      .map((s) => [s.tx.hash, s]),
  );
  const rows = await query('select * from apr_realized');
  const got: Rows = {};
  const want: Rows = {};
  for (const r of rows) {
    const hash = String(r.staking_tx_hash);
    got[hash] = {
      kind: r.staking_kind,
      node: r.node_id,
      staked: String(r.amount_staked_navax),
      seconds: String(r.staking_seconds),
      rewarded: r.is_rewarded,
      reward: String(r.reward_navax),
      fees: r.fee_income_navax === null ? null : String(r.fee_income_navax),
      gross: String(r.gross_reward_navax),
      apr: String(r.apr),
      aprWithFees: String(r.apr_with_fees),
    };
    const s = stakes.get(hash);
    if (!s?.rewardTx || s.rewardTx.time > now) continue; // not a finished period of the world: no truth
    const reward = paidOf(s, ['VALIDATOR', 'DELEGATOR'], now);
    // A validation's fee income: the fees on its own delegations, paid when it ended.
    const fees =
      s.kind === 'validator'
        ? (s.delegators ?? []).reduce((n, d) => n + paidOf(d, ['VALIDATOR_FEE'], now), 0n)
        : undefined;
    want[hash] = {
      kind: s.kind === 'validator' ? 'validation' : 'delegation',
      node: s.nodeId,
      staked: String(s.amount),
      seconds: String(s.end - s.start),
      rewarded: reward > 0n,
      reward: String(reward),
      fees: fees === undefined ? null : String(fees),
      // A rewarded delegation's reward before the validator's fee is its whole reward, the fee included
      // (which its validator is paid later, at the validator's own end).
      gross: String(s.kind === 'validator' || reward === 0n ? reward : s.potentialReward),
      apr: annual(reward, s),
      aprWithFees: annual(reward + (fees ?? 0n), s),
    };
  }
  // What must be there: every paid period the lake mirrors, every completed delegation of a configured
  // node or owner, and every validation of a configured node that a snapshot saw and that ended by the last.
  const lastSnapshot = snapshotTimes.at(-1) as number;
  const seen = (s: StakeRec) => snapshotTimes.some((t) => s.start <= t && t < s.end);
  const missing = [...stakes.values()]
    .filter((s) => {
      if (!s.rewardTx || s.rewardTx.time > now) return false;
      if (
        paidOf(s, ['VALIDATOR', 'DELEGATOR'], now) > 0n &&
        isMirrored(pipeline, s.nodeId, s.rewardAddresses)
      )
        return true;
      if (s.kind === 'delegator') return isMirrored(pipeline, s.nodeId, s.rewardAddresses);
      return pipeline.primary.nodeIds.includes(s.nodeId) && seen(s) && s.end <= lastSnapshot;
    })
    .map((s) => s.tx.hash)
    .filter((hash) => !(hash in got));
  return { got, want, missing, rows };
}

/** What `readWithFewerPartitions` did: the address left out, and the days before and after. */
export interface FewerPartitions {
  dropped: string;
  kept: string[];
  /** The UTC day of the workspace's last run, and of the run without the dropped address. */
  before: string;
  after: string;
  /** The world time of the run without the dropped address. */
  now: number;
}

/**
 * A day later, one more extract of the UTXOs and ICM messages, the pipeline without its first address
 * and its first ICM address, then a build: those partitions end a day before the others.
 */
export async function readWithFewerPartitions(w: MartsWorkspace): Promise<FewerPartitions> {
  const before = utcDay(w.now);
  const [dropped, ...kept] = w.pipeline.primary.addresses as [string, ...string[]];
  const pipelinePath = `${w.workspace.dataDir}/../fewer.json`;
  writeFileSync(
    pipelinePath,
    JSON.stringify({
      ...w.pipeline,
      primary: { ...w.pipeline.primary, addresses: kept },
      icm: { ...w.pipeline.icm, addresses: w.pipeline.icm.addresses.slice(1) },
    }),
  );
  w.emulator.advance(DAY);
  const now = Math.floor(w.emulator.clock.now());
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(now * 1000);
    const summary = await extractOnce(pipelinePath, w.workspace.dataDir, { streams: 'utxos,icm_messages' });
    if (summary.status !== 'ok') throw new Error(`the extract without ${dropped} ended ${summary.status}`);
  } finally {
    vi.useRealTimers();
  }
  await buildWarehouse({ dataDir: w.workspace.dataDir });
  return { dropped, kept, before, after: utcDay(now), now };
}

/**
 * The last day of each address in address_balances_daily, from the world: the day its partition was last
 * read (an address holding no UTXO then has no rows).
 */
export function balanceEndsTruth(w: MartsWorkspace, read: FewerPartitions): Rows {
  const primary = w.emulator.truth.primary(w.pipeline.network);
  const holds = (address: string, lastRead: number) =>
    (['p', 'x'] as const).some((chain) =>
      primary.utxosOf(address, chain, lastRead).some((u) => u.createdAt <= lastRead),
    );
  return Object.fromEntries([
    ...(holds(read.dropped, w.now) ? [[read.dropped, { last_day: read.before }]] : []),
    ...read.kept.filter((a) => holds(a, read.now)).map((a) => [a, { last_day: read.after }]),
  ]);
}

/** The last day of each address in address_balances_daily, in balanceEndsTruth's form. */
export async function balanceEndsIn(query: Query): Promise<Rows> {
  const rows = await query(
    'select address, max(balance_day) as last_day from address_balances_daily group by address',
  );
  return Object.fromEntries(rows.map((r) => [String(r.address), { last_day: String(r.last_day) }]));
}

/** One day's validators snapshot, as stake_distribution_daily reads it. */
export interface StakeDay {
  day: string;
  validators: { own: bigint; delegated: bigint; delegators: number }[];
  supply: bigint;
}

/** stake_distribution_daily from validator stakes: totals, counts, largest stake, Nakamoto coefficient and staking ratio. */
export function stakeDistributionTruth(days: readonly StakeDay[]): Rows {
  return Object.fromEntries(
    days.map(({ day, validators, supply }) => {
      const stakes = validators.map((v) => v.own + v.delegated).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
      const total = stakes.reduce((s, x) => s + x, 0n);
      // The fewest validators, largest first, whose stake is more than a third of the total.
      let nakamoto = 0;
      for (let cumulative = 0n; cumulative * 3n <= total; nakamoto++) cumulative += stakes[nakamoto] ?? 0n;
      return [
        day,
        {
          total: String(total),
          own: String(validators.reduce((s, v) => s + v.own, 0n)),
          delegated: String(validators.reduce((s, v) => s + v.delegated, 0n)),
          validators: validators.length,
          delegators: validators.reduce((s, v) => s + v.delegators, 0),
          nakamoto,
          largest: String(stakes[0]),
          supply: String(supply),
          ratio: scaled((total * 10n ** 18n) / supply, 18),
        },
      ];
    }),
  );
}

/** stake_distribution_daily as a warehouse holds it, in stakeDistributionTruth's form. */
export async function stakeDistributionIn(query: Query): Promise<Rows> {
  const rows = await query('select * from stake_distribution_daily order by snapshot_day');
  return Object.fromEntries(
    rows.map((r) => [
      String(r.snapshot_day),
      {
        total: String(r.total_stake_navax),
        own: String(r.validator_stake_navax),
        delegated: String(r.delegator_stake_navax),
        validators: Number(r.count_validators),
        delegators: Number(r.count_delegators),
        nakamoto: Number(r.nakamoto_coefficient),
        largest: String(r.largest_stake_navax),
        supply: String(r.supply_navax),
        ratio: String(r.staking_ratio),
      },
    ]),
  );
}
