import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { Pipeline } from '../../src/extract/pipeline.ts';
import { DEFAULT_MODELS_DIR } from '../../src/warehouse/build.ts';
import { loadModels } from '../../src/warehouse/models.ts';
import { TEST_EPOCH } from '../helpers/emulator.ts';
import { type MartsWorkspace, martsWorkspace } from '../helpers/marts.ts';
import { queryWarehouse, scaled, utcDay } from '../helpers/warehouse.ts';

const DAY = 86_400;
/** Three extract runs a day apart: three validators snapshots, and the world growing in between. */
const RUNS = 3;

// Everything is computed here from the emulator's world with BigInt arithmetic, never with SQL, and compared
// with the marts exactly (amounts to the nAVAX, USD to the cent, APR to its twelfth decimal).
describe('marts against the emulator truth', () => {
  let emulator: Emulator;
  let workspace: MartsWorkspace['workspace'];
  let pipeline: Pipeline;
  let snapshotTimes: number[] = [];
  let now = 0;
  const q = (sql: string) => queryWarehouse(workspace.dataDir, sql);

  beforeAll(async () => {
    ({ emulator, workspace, pipeline, snapshotTimes, now } = await martsWorkspace({ runs: RUNS }));
    expect(snapshotTimes[0]).toBe(TEST_EPOCH);
  }, 60_000);
  afterAll(() => emulator?.close());

  const primary = () => emulator.truth.primary(pipeline.network);
  const isMirrored = (nodeId: string, addresses: readonly string[]) =>
    pipeline.primary.nodeIds.includes(nodeId) ||
    addresses.some((a) => pipeline.primary.addresses.includes(a));

  it('rewards_daily: count, nAVAX and USD to the cent per reward address, node and day', async () => {
    const expected = new Map<string, { count: number; navax: bigint; navaxMicros: bigint }>();
    for (const { utxo, stake } of primary().rewards(now)) {
      if (!isMirrored(stake.nodeId, utxo.addresses)) continue;
      // Prices have six decimals (sub-cent): the truth sums nAVAX × micro-USD exactly.
      const priceMicros = BigInt(Math.round(primary().priceAt(utxo.createdAt, 'usd') * 1e6));
      for (const address of utxo.addresses) {
        const key = `${utcDay(utxo.createdAt)} ${address} ${stake.nodeId}`;
        const e = expected.get(key) ?? { count: 0, navax: 0n, navaxMicros: 0n };
        expected.set(key, e);
        e.count++;
        e.navax += utxo.amount;
        e.navaxMicros += utxo.amount * priceMicros;
      }
    }
    const want = Object.fromEntries(
      [...expected].map(([key, e]) => [
        key,
        // nAVAX × micro-USD → cents (1e9 × 1e6 / 100), rounded half up
        {
          count: e.count,
          navax: String(e.navax),
          usd: scaled((e.navaxMicros + 5_000_000_000_000n) / 10_000_000_000_000n, 2),
        },
      ]),
    );
    const rows = await q(
      'select reward_day, reward_address, node_id, count_rewards, reward_navax, reward_usd from rewards_daily',
    );
    const got = Object.fromEntries(
      rows.map((r) => [
        `${r.reward_day} ${r.reward_address} ${r.node_id}`,
        { count: Number(r.count_rewards), navax: String(r.reward_navax), usd: String(r.reward_usd) },
      ]),
    );
    expect(Object.keys(want).length).toBeGreaterThan(50);
    expect(got).toEqual(want);
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
      const fee = d.rewardUtxos
        .filter((u) => u.rewardType === 'VALIDATOR_FEE')
        .reduce((n, u) => n + u.amount, 0n);
      w.fees = (w.fees ?? 0n) + fee;
      if (d.rewardUtxos.some((u) => u.rewardType === 'DELEGATOR')) w.rewarded++;
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

  it('stake_distribution_daily: total stake, counts, Nakamoto coefficient and staking ratio of each day', async () => {
    const want = snapshotTimes.map((t) => {
      const stakes = primary()
        .validators(t)
        .map((v) => {
          const delegations = primary().currentDelegations(v, t);
          const delegated = delegations.reduce((s, d) => s + d.amount, 0n);
          return { own: v.amount, delegated, total: v.amount + delegated, delegators: delegations.length };
        });
      const total = stakes.reduce((s, x) => s + x.total, 0n);
      // What platform.getCurrentSupply answers at t: the newest block's supply.
      const supply = (primary().block(primary().blockCount(t) - 1, t) as { supply: bigint }).supply;
      const ratio = (total * 10n ** 18n) / supply;
      const byStake = stakes.map((s) => s.total).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
      let nakamoto = 0;
      for (let cumulative = 0n; cumulative * 3n <= total; nakamoto++) cumulative += byStake[nakamoto] ?? 0n;
      return {
        day: utcDay(t),
        total: String(total),
        own: String(stakes.reduce((s, x) => s + x.own, 0n)),
        delegated: String(stakes.reduce((s, x) => s + x.delegated, 0n)),
        validators: stakes.length,
        delegators: stakes.reduce((s, x) => s + x.delegators, 0),
        nakamoto,
        largest: String(byStake[0]),
        supply: String(supply),
        ratio: `0.${String(ratio).padStart(18, '0')}`,
      };
    });
    const rows = await q('select * from stake_distribution_daily order by snapshot_day');
    expect(
      rows.map((r) => ({
        day: r.snapshot_day,
        total: String(r.total_stake_navax),
        own: String(r.validator_stake_navax),
        delegated: String(r.delegator_stake_navax),
        validators: Number(r.count_validators),
        delegators: Number(r.count_delegators),
        nakamoto: Number(r.nakamoto_coefficient),
        largest: String(r.largest_stake_navax),
        supply: String(r.supply_navax),
        ratio: String(r.staking_ratio),
      })),
    ).toEqual(want);
    expect(want.every((d) => Number(d.ratio) > 0 && Number(d.ratio) < 1)).toBe(true);
    expect(want.every((d) => d.nakamoto > 1 && d.validators > d.nakamoto)).toBe(true);
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

  it('icm: latency is delivered minus sent, and the backlog closes on the messages', async () => {
    const [m] = await q(
      `select count(*) as n,
              count(*) filter (where delivery_latency_seconds <> epoch(delivered_at) - epoch(sent_at)) as wrong,
              count(*) filter (where delivery_latency_seconds < 0) as negative,
              count(sent_at) as sent
       from icm_delivery`,
    );
    expect(Number(m?.n)).toBeGreaterThan(100);
    expect(Number(m?.wrong)).toBe(0);
    expect(Number(m?.negative)).toBe(0);
    const [b] = await q('select sum(count_sent) as sent from icm_backlog_daily');
    expect(String(b?.sent)).toBe(String(m?.sent));
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
      const described = await q(`describe ${m.name}`);
      const columns = described.map((c) => c.column_name);
      // Amounts, money and durations are exact: a DOUBLE there would round what an analyst sums.
      const inexact = described
        .filter((c) => /(_navax|_amount|_usd|_seconds)$/.test(String(c.column_name)))
        .filter((c) => /DOUBLE|FLOAT|REAL/.test(String(c.column_type)))
        .map((c) => c.column_name);
      expect(inexact, `${m.name}: exact types for amounts and durations`).toEqual([]);
      expect(
        m.columns.map((c) => c.name),
        `${m.name} documents every column, in order`,
      ).toEqual(columns);
    }
  });
});
