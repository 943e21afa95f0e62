import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { Pipeline } from '../../src/extract/pipeline.ts';
import { CHAIN_METRICS, RATE_METRICS } from '../../src/reference/metrics.ts';
import { DEFAULT_MODELS_DIR } from '../../src/warehouse/build.ts';
import { loadModels } from '../../src/warehouse/models.ts';
import { TEST_EPOCH } from '../helpers/emulator.ts';
import {
  isMirrored as isMirroredBy,
  type MartsWorkspace,
  martsWorkspace,
  metricColumn,
  type Rows,
  rewardsDailyIn,
  rewardsDailyTruth,
  stakeDistributionIn,
  stakeDistributionTruth,
} from '../helpers/marts.ts';
import { queryWarehouse, utcDay } from '../helpers/warehouse.ts';

// chain_metrics_daily's SQL cannot import RATE_METRICS: the types checked of every mart below hold its
// casts to the set (DOUBLE for the rates, exact for the rest).
const rateColumns = CHAIN_METRICS.filter((m) => RATE_METRICS.has(m)).map(metricColumn);
const countColumns = CHAIN_METRICS.filter((m) => !RATE_METRICS.has(m)).map(metricColumn);

/** The marts' DOUBLE columns, all rates or averages, or a reading beside an exact column; every other number is exact. */
const INEXACT_COLUMNS: Record<string, string[]> = {
  chain_metrics_daily: rateColumns,
  erc20_flows_daily: ['in_tokens', 'out_tokens'],
  validators_history: ['delegation_fee_percent'],
};
/** Columns whose exact type is named, where the name alone (no _navax or _amount) would not say it is an amount. */
const EXACT_COLUMNS: Record<string, Record<string, string>> = {
  chain_metrics_daily: {
    count_metrics: 'BIGINT',
    // Fees in wei can pass a BIGINT's range.
    ...Object.fromEntries(countColumns.map((c) => [c, c === 'fees_paid' ? 'DECIMAL(38,0)' : 'BIGINT'])),
  },
};

const DAY = 86_400;
/** Three extract runs a day apart: three validators snapshots, and the world growing in between. */
const RUNS = 3;

// Everything is computed here from the emulator's world with BigInt arithmetic, never with SQL, and compared
// with the marts exactly (amounts to the nAVAX, USD to the cent, APR to its twelfth decimal).
describe('marts against the emulator truth', () => {
  let ws: MartsWorkspace;
  let emulator: Emulator;
  let workspace: MartsWorkspace['workspace'];
  let pipeline: Pipeline;
  let snapshotTimes: number[] = [];
  let now = 0;
  const q = (sql: string) => queryWarehouse(workspace.dataDir, sql);

  beforeAll(async () => {
    ws = await martsWorkspace({ runs: RUNS });
    ({ emulator, workspace, pipeline, snapshotTimes, now } = ws);
    expect(snapshotTimes[0]).toBe(TEST_EPOCH);
  }, 60_000);
  afterAll(() => emulator?.close());

  const primary = () => emulator.truth.primary(pipeline.network);
  const isMirrored = (nodeId: string, owners: readonly string[]) => isMirroredBy(pipeline, nodeId, owners);

  it('rewards_daily: count, nAVAX and USD to the cent per reward address, node and day of payment', async () => {
    const want = rewardsDailyTruth(ws);
    expect(Object.keys(want).length).toBeGreaterThan(50);
    expect(await rewardsDailyIn(q)).toEqual(want);
  });

  it('delegations: counts, stake, fees paid and rewarded ones by status', async () => {
    const want: Record<string, { count: number; navax: bigint; fees: bigint | null; rewarded: number }> = {};
    for (const d of primary().delegations(now)) {
      if (!isMirrored(d.nodeId, d.rewardAddresses)) continue;
      // Status from the period's times, fees from the reward UTXOs the world minted: not the functions the emulator answers with.
      const status = now < d.start ? 'pending' : now < d.end ? 'active' : 'completed';
      const w = want[status] ?? { count: 0, navax: 0n, fees: null, rewarded: 0 };
      want[status] = w;
      w.count++;
      w.navax += d.amount;
      if (status !== 'completed') continue;
      // The fee is what the validator takes from the delegation's reward: the reward minus what the
      // delegator's UTXO paid (the validator's own UTXO of it comes only when the validator's period ends).
      const net = d.rewardUtxos.find((u) => u.rewardType === 'DELEGATOR')?.amount;
      w.fees = (w.fees ?? 0n) + (net === undefined ? 0n : d.potentialReward - net);
      if (net !== undefined) w.rewarded++;
    }
    const rows = await q(
      `select delegation_status, count(*) as n, sum(amount_delegated_navax) as navax, sum(fee_paid_navax) as fees,
              count(*) filter (where is_rewarded) as rewarded
       from delegations group by all`,
    );
    const got = Object.fromEntries(
      rows.map((r) => [
        r.delegation_status as string,
        {
          count: Number(r.n),
          navax: String(r.navax),
          fees: r.fees === null ? null : String(r.fees),
          rewarded: Number(r.rewarded),
        },
      ]),
    );
    expect(Object.keys(want).sort()).toEqual(['active', 'completed', 'pending']);
    expect(got).toEqual(
      Object.fromEntries(
        Object.entries(want).map(([k, w]) => [
          k,
          { ...w, navax: String(w.navax), fees: w.fees === null ? null : String(w.fees) },
        ]),
      ),
    );
    // Some completed delegations earned nothing (their validator's uptime fell short).
    expect(want.completed?.rewarded).toBeLessThan(want.completed?.count ?? 0);
  });

  it('delegations: lead_seconds and staking_seconds of every delegation, row by row from the world', async () => {
    const want: Rows = {};
    for (const d of primary().delegations(now)) {
      if (!isMirrored(d.nodeId, d.rewardAddresses)) continue;
      // Accepted when its transaction was, known when the transaction is among a configured address's.
      const accepted = d.tx.parties.some((a) => pipeline.primary.addresses.includes(a)) ? d.tx.time : null;
      want[d.tx.hash] = {
        accepted_at: accepted,
        lead_seconds: accepted === null ? null : String(d.start - accepted),
        staking_seconds: String(d.end - d.start),
      };
    }
    const rows = await q(
      'select tx_hash, epoch(accepted_at)::bigint as accepted_at, lead_seconds, staking_seconds from delegations',
    );
    const got = Object.fromEntries(
      rows.map((r) => [
        String(r.tx_hash),
        {
          accepted_at: r.accepted_at === null ? null : Number(r.accepted_at),
          lead_seconds: r.lead_seconds === null ? null : String(r.lead_seconds),
          staking_seconds: String(r.staking_seconds),
        },
      ]),
    );
    const values = Object.values(want);
    expect(values.filter((v) => v.lead_seconds !== null).length).toBeGreaterThan(10);
    expect(values.filter((v) => v.lead_seconds === null).length).toBeGreaterThan(0);
    expect(got).toEqual(want);
  });

  it('stake_distribution_daily: total stake, counts, Nakamoto coefficient and staking ratio of each day', async () => {
    const want = stakeDistributionTruth(
      snapshotTimes.map((t) => ({
        day: utcDay(t),
        validators: primary()
          .validators(t)
          .map((v) => {
            const delegations = primary().currentDelegations(v, t);
            const delegated = delegations.reduce((s, d) => s + d.amount, 0n);
            return { own: v.amount, delegated, delegators: delegations.length };
          }),
        // What platform.getCurrentSupply answers at t: the newest block's supply.
        supply: (primary().block(primary().blockCount(t) - 1, t) as { supply: bigint }).supply,
      })),
    );
    expect(await stakeDistributionIn(q)).toEqual(want);
    const days = Object.values(want);
    expect(days).toHaveLength(snapshotTimes.length);
    expect(days.every((d) => Number(d.ratio) > 0 && Number(d.ratio) < 1)).toBe(true);
    expect(days.every((d) => Number(d.nakamoto) > 1 && Number(d.validators) > Number(d.nakamoto))).toBe(true);
  });

  it('validators_history: one version per change or return, and the current ones are the newest snapshot', async () => {
    let versions = 0;
    let previous = new Map<string, string>();
    for (const t of snapshotTimes) {
      const states = new Map(
        primary()
          .validators(t)
          .map((v) => {
            const delegations = primary().currentDelegations(v, t);
            const weight = delegations.reduce((s, d) => s + d.amount, 0n);
            return [v.nodeId, `${v.tx.hash} ${v.amount} ${delegations.length} ${weight}`] as const;
          }),
      );
      for (const [node, state] of states) if (previous.get(node) !== state) versions++;
      previous = states;
    }
    const current = [...previous].map(([node, state]) => `${node} ${state}`).sort();
    const rows = await q(`select * from validators_history where subnet = 'primary'`);
    expect(rows).toHaveLength(versions);
    expect(
      rows
        .filter((r) => r.is_current)
        .map((r) => `${r.node_id} ${r.tx_id} ${r.weight} ${r.count_delegators} ${r.delegator_weight_navax}`)
        .sort(),
    ).toEqual(current);
    expect(rows.every((r) => (r.valid_to === null) === r.is_current)).toBe(true);
  });

  it('address_balances_daily: each configured address and chain, every full day, to the nAVAX', async () => {
    const lastDay = utcDay(now);
    const rows = await q(
      `select address, chain, balance_day, balance_amount from address_balances_daily
       where balance_day < '${lastDay}'`,
    );
    const got = new Map(
      rows.map((r) => [`${r.address} ${r.chain} ${r.balance_day}`, String(r.balance_amount)]),
    );
    let compared = 0;
    for (const address of pipeline.primary.addresses)
      for (const chain of ['p', 'x'] as const) {
        const utxos = primary()
          .utxosOf(address, chain, now)
          .filter((u) => u.createdAt <= now);
        if (utxos.length === 0) continue;
        const first = Math.min(...utxos.map((u) => u.createdAt));
        for (let day = first - (first % DAY); utcDay(day) < lastDay; day += DAY) {
          const end = day + DAY;
          const balance = utxos
            .filter((u) => u.createdAt < end && !(u.spent && u.spent.at < end))
            .reduce((s, u) => s + u.amount, 0n);
          expect(
            got.get(`${address} ${chain}-chain ${utcDay(day)}`),
            `${address} ${chain} ${utcDay(day)}`,
          ).toBe(String(balance));
          compared++;
        }
      }
    expect(compared).toBeGreaterThan(100);
    // The lake holds every UTXO's history here, so the balances snapshot leaves nothing to open with.
    const [openings] = await q(
      `select count(*) as n, count(*) filter (where opening_amount <> 0 or opening_utxos <> 0) as nonzero
       from address_balance_openings`,
    );
    expect(Number(openings?.n)).toBeGreaterThanOrEqual(pipeline.primary.addresses.length);
    expect(Number(openings?.nonzero)).toBe(0);
  });

  it('erc20_flows_daily: in, out and counts per chain, token, address and day', async () => {
    const want = new Map<string, { count: number; in: bigint; out: bigint }>();
    for (const chainId of pipeline.evm.chains) {
      const chain = emulator.truth.evm.chain(chainId);
      if (!chain) throw new Error(`no EVM chain ${chainId}`);
      for (const configured of pipeline.evm.addresses) {
        const address = configured.toLowerCase();
        for (const t of chain.listErc20(configured, {}, now, undefined, Number.MAX_SAFE_INTEGER).items) {
          const key = `${chainId} ${t.erc20Token.address.toLowerCase()} ${address} ${utcDay(t.blockTimestamp)}`;
          const e = want.get(key) ?? { count: 0, in: 0n, out: 0n };
          want.set(key, e);
          e.count++;
          if (t.to.address.toLowerCase() === address) e.in += BigInt(t.value);
          if (t.from.address.toLowerCase() === address) e.out += BigInt(t.value);
        }
      }
    }
    const rows = await q(
      'select chain_id, token_address, address, flow_day, count_transfers, in_amount, out_amount, net_amount from erc20_flows_daily',
    );
    expect(
      rows.every(
        (r) => BigInt(String(r.net_amount)) === BigInt(String(r.in_amount)) - BigInt(String(r.out_amount)),
      ),
    ).toBe(true);
    const got = Object.fromEntries(
      rows.map((r) => [
        `${r.chain_id} ${r.token_address} ${r.address} ${r.flow_day}`,
        { count: Number(r.count_transfers), in: String(r.in_amount), out: String(r.out_amount) },
      ]),
    );
    expect(want.size).toBeGreaterThan(50);
    expect(got).toEqual(
      Object.fromEntries(
        [...want].map(([k, e]) => [k, { count: e.count, in: String(e.in), out: String(e.out) }]),
      ),
    );
  });

  it('every mart: its key unique and not null, exact types for amounts and durations, its not_null and enum columns hold, every column documented', async () => {
    const marts = loadModels(DEFAULT_MODELS_DIR).filter((m) => m.layer === 'marts');
    expect(marts.map((m) => m.name).sort()).toEqual(
      expect.arrayContaining([
        'address_balances_daily',
        'apr_realized',
        'chain_metrics_daily',
        'delegations',
        'erc20_flows_daily',
        'icm_delivery',
        'rewards_daily',
        'stake_distribution_daily',
        'validators_history',
      ]),
    );
    for (const m of marts) {
      expect(m.unique.length, `${m.name} declares a key`).toBeGreaterThan(0);
      const key = m.unique.join(', ');
      const [row] = await q(
        `select count(*) as n, count(distinct (${key})) as keys,
                count(*) filter (where ${[...m.unique, ...m.notNull].map((c) => `${c} is null`).join(' or ')}) as nulls
         from ${m.name}`,
      );
      expect(Number(row?.n), `${m.name} has rows`).toBeGreaterThan(0);
      expect(Number(row?.keys), `${m.name} key (${key}) is unique`).toBe(Number(row?.n));
      expect(Number(row?.nulls), `${m.name} key and not_null columns`).toBe(0);
      for (const { column, values } of m.acceptedValues) {
        const list = values.map((v) => `'${v}'`).join(', ');
        const [bad] = await q(`select count(*) as n from ${m.name} where ${column} not in (${list})`);
        expect(Number(bad?.n), `${m.name}.${column} within ${list}`).toBe(0);
      }
      // Network is in every key: chain ids (the metrics' aggregates total, mainnet, testnet) and days
      // repeat across networks, and a pipeline of each can share a lake.
      expect(m.unique, `${m.name}: network in its key`).toContain('network');
      const described = await q(`describe ${m.name}`);
      const columns = described.map((c) => c.column_name);
      const types = Object.fromEntries(described.map((c) => [String(c.column_name), String(c.column_type)]));
      // Amounts, money, counts and durations are exact: a DOUBLE there would round what an analyst sums.
      // Only rates and averages, and amounts scaled for reading beside their exact column, may be DOUBLE.
      const inexact = Object.keys(types).filter((c) => /DOUBLE|FLOAT|REAL/.test(types[c] as string));
      expect(inexact, `${m.name}: DOUBLE only for rates and averages`).toEqual(INEXACT_COLUMNS[m.name] ?? []);
      for (const [column, type] of Object.entries(EXACT_COLUMNS[m.name] ?? {}))
        expect(types[column], `${m.name}.${column}`).toBe(type);
      for (const column of Object.keys(types).filter((c) => /(_navax|_amount|_usd|_seconds)$/.test(c)))
        expect(types[column], `${m.name}.${column}: an exact type`).toMatch(
          /^(DECIMAL|BIGINT|HUGEINT|INTEGER)/,
        );
      expect(
        m.columns.map((c) => c.name),
        `${m.name} documents every column, in order`,
      ).toEqual(columns);
    }
  });
});
