import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricsAsOf } from '../../src/emulator/world/evm/index.ts';
import { alignDown } from '../../src/emulator/world/evm/intervals.ts';
import { PRIMARY_CHAINS } from '../../src/emulator/world/networks.ts';
import {
  CHAIN_METRICS,
  type ChainMetric,
  RATE_METRICS,
  servesInterval,
} from '../../src/reference/metrics.ts';
import {
  buildPlanted,
  differing,
  type MartsWorkspace,
  martsWorkspace,
  metricColumn,
  type Query,
  type Rows,
} from '../helpers/marts.ts';
import { scaled, utcDay } from '../helpers/warehouse.ts';

const DAY = 86_400;

/**
 * A served metric value as its column holds it: a count or amount as the exact integer of the JSON
 * number the API sent (as text, so an amount past 2^53 is compared digit by digit), a rate as a number.
 */
const metricValue = (metric: ChainMetric, value: number | null) =>
  value === null ? null : RATE_METRICS.has(metric) ? value : String(BigInt(value));
/** A TIMESTAMPTZ column as Unix seconds, to compare with the world's times. */
const unixSeconds = (column: string) => `epoch(${column})::bigint as ${column}`;
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
const sum = (amounts: readonly bigint[]) => amounts.reduce((s, a) => s + a, 0n);

// Issue 12.6: the columns an analyst charts, each compared with the emulator's world recomputed here
// (BigInt for amounts; the world's own times for days, versions and latencies), never with SQL or with the
// mart's other columns. The lake is martsWorkspace's: three extract runs a day apart, the last one at
// midnight UTC, so its day is the day of the newest extract (and of every partition's newest read).
describe('marts against the world, recomputed', () => {
  let m: MartsWorkspace;
  beforeAll(async () => {
    m = await martsWorkspace();
  }, 120_000);
  afterAll(() => m?.emulator.close());

  /** Every configured chain's day points as the Metrics API serves them at the newest extract. */
  function chainMetricsTruth(): Rows {
    const { emulator, pipeline, now } = m;
    const world = emulator.truth;
    const asOf = metricsAsOf(now);
    const served = pipeline.metrics.intervals.includes('day')
      ? pipeline.metrics.metrics.filter((metric) => servesInterval(metric, 'day'))
      : [];
    const want: Rows = {};
    for (const chainId of pipeline.metrics.chains) {
      const chains = world.evm.metricChains(chainId);
      if (!chains) throw new Error(`the world has no metrics chain ${chainId}`);
      // From the world's first day to the newest extract's (its value so far).
      for (let t = alignDown(world.genesis, 'day'); t <= alignDown(asOf, 'day'); t += DAY) {
        const row: Record<string, unknown> = { count_metrics: String(served.length) };
        for (const metric of CHAIN_METRICS)
          row[metricColumn(metric)] = metricValue(
            metric,
            served.includes(metric) ? world.evm.metric(chains, metric, 'day', t, asOf) : null,
          );
        want[`${pipeline.network} ${chainId} ${utcDay(t)}`] = row;
      }
    }
    return want;
  }

  async function chainMetricsIn(query: Query): Promise<Rows> {
    const rows = await query('select * from chain_metrics_daily');
    return Object.fromEntries(
      rows.map((r) => {
        const row: Record<string, unknown> = { count_metrics: text(r.count_metrics) };
        for (const metric of CHAIN_METRICS) {
          const value = r[metricColumn(metric)];
          row[metricColumn(metric)] = RATE_METRICS.has(metric) ? num(value) : text(value);
        }
        return [`${r.network} ${r.chain_id} ${r.metric_day}`, row];
      }),
    );
  }

  it('chain_metrics_daily: each metric of each chain and UTC day is the value the Metrics API serves', async () => {
    const want = chainMetricsTruth();
    expect(Object.keys(want).length).toBeGreaterThan(100);
    const busy = Object.values(want).filter((r) => Number(r.tx_count) > 0 && Number(r.avg_gas_price) > 0);
    expect(busy.length).toBeGreaterThan(Object.keys(want).length / 2);
    // Fees in wei pass 2^53: the exact columns are compared as the integers the API sent, digit by digit.
    expect(Object.values(want).some((r) => Number(r.fees_paid) > 2 ** 53)).toBe(true);
    expect(await chainMetricsIn(m.query)).toEqual(want);
  });

  it('chain_metrics_daily: the comparison catches a copy of the mart whose days are one off', async () => {
    const planted = await buildPlanted(m, {
      mart: 'chain_metrics_daily',
      from: 'cast(make_timestamp(epoch_us(period_start)) as date) as metric_day',
      to: 'cast(make_timestamp(epoch_us(period_start)) as date) + 1 as metric_day',
    });
    const want = chainMetricsTruth();
    // Each day shows the day before's values, and there is one day too many per chain.
    expect(differing(await chainMetricsIn(planted), want).length).toBeGreaterThan(Object.keys(want).length);
  });

  it('validators_history: valid_from and valid_to of every version, from the world at each snapshot', async () => {
    const { emulator, pipeline, snapshotTimes } = m;
    const primary = emulator.truth.primary(pipeline.network);
    const kinds = new Map(
      emulator.truth.evm.chains(pipeline.network).map((c) => [c.info.subnetId, c.info.validatorSet]),
    );
    /** Each validator's declared state at t, by subnet and node: what makes a version. */
    const statesAt = (t: number) => {
      const states = new Map<string, { id: string; weight: string; state: string }>();
      for (const v of primary.validators(t)) {
        const delegations = primary.currentDelegations(v, t);
        const delegated = sum(delegations.map((d) => d.amount));
        states.set(`primary ${v.nodeId}`, {
          id: v.tx.hash,
          weight: String(v.amount),
          state: `${v.start} ${v.end} ${v.potentialReward} ${v.feePpm} ${v.signer?.publicKey} ${delegations.length} ${delegated}`,
        });
      }
      for (const subnet of pipeline.primary.subnets) {
        if (kinds.get(subnet) === 'l1')
          for (const { validator: v, balance } of primary.l1Validators(t))
            if (v.subnetId === subnet && balance > 0n)
              states.set(`${subnet} ${v.nodeId}`, {
                id: v.validationId,
                weight: String(v.weight),
                state: `${v.registeredAt} ${v.publicKey}`,
              });
        if (kinds.get(subnet) === 'permissioned')
          for (const tx of primary.subnetValidators(subnet, t))
            states.set(`${subnet} ${tx.nodeId}`, {
              id: tx.hash,
              weight: String(tx.subnetPeriod?.weight),
              state: `${tx.subnetPeriod?.start} ${tx.subnetPeriod?.end}`,
            });
      }
      return states;
    };
    const want: Rows = {};
    const open = new Map<string, { from: number; last: number; count: number; id: string; weight: string }>();
    let previous = new Map<string, { id: string; weight: string; state: string }>();
    for (const t of snapshotTimes) {
      const states = statesAt(t);
      const same = (key: string) => JSON.stringify(previous.get(key)) === JSON.stringify(states.get(key));
      // A version ends at the first snapshot without the validator, or with it changed.
      for (const [key, v] of [...open])
        if (!same(key)) {
          want[`${key} ${v.from}`] = { ...v, to: t };
          open.delete(key);
        }
      for (const [key, s] of states) {
        const v = open.get(key);
        if (v) {
          v.last = t;
          v.count++;
        } else open.set(key, { from: t, last: t, count: 1, id: s.id, weight: s.weight });
      }
      previous = states;
    }
    for (const [key, v] of open) want[`${key} ${v.from}`] = { ...v, to: null };
    const rows = await m.query(
      `select subnet, node_id, coalesce(tx_id, validation_id) as id, weight, count_snapshots, is_current,
              ${unixSeconds('valid_from')}, ${unixSeconds('valid_to')}, ${unixSeconds('last_seen_at')}
       from validators_history`,
    );
    const got = Object.fromEntries(
      rows.map((r) => [
        `${r.subnet} ${r.node_id} ${r.valid_from}`,
        {
          from: num(r.valid_from),
          last: num(r.last_seen_at),
          count: num(r.count_snapshots),
          id: r.id,
          weight: text(r.weight),
          to: num(r.valid_to),
        },
      ]),
    );
    expect(rows.every((r) => r.is_current === (r.valid_to === null))).toBe(true);
    // Versions that end before the newest snapshot, on the primary network and on a subnet.
    const ended = Object.keys(want).filter((k) => want[k]?.to !== null);
    expect(ended.filter((k) => k.startsWith('primary ')).length).toBeGreaterThan(3);
    expect(ended.filter((k) => !k.startsWith('primary ')).length).toBeGreaterThan(0);
    expect(got).toEqual(want);
  });

  it('address_balances_daily: UTXO count, received, spent and balance per configured address, chain, asset and day', async () => {
    const { emulator, pipeline, now } = m;
    const primary = emulator.truth.primary(pipeline.network);
    const asset = PRIMARY_CHAINS[pipeline.network].avaxAssetId;
    const lastDay = utcDay(now);
    const want: Rows = {};
    for (const address of pipeline.primary.addresses)
      for (const chain of ['p', 'x'] as const) {
        const utxos = primary.utxosOf(address, chain, now).filter((u) => u.createdAt <= now);
        if (utxos.length === 0) continue;
        // A spend after the newest extract is not in the lake yet.
        const spentAt = (u: (typeof utxos)[number]) =>
          u.spent && u.spent.at <= now ? u.spent.at : undefined;
        const first = Math.min(...utxos.map((u) => u.createdAt));
        for (let day = first - (first % DAY); utcDay(day) <= lastDay; day += DAY) {
          const end = day + DAY;
          const during = (t: number | undefined) => t !== undefined && t >= day && t < end;
          const held = utxos.filter((u) => u.createdAt < end && !((spentAt(u) ?? end) < end));
          want[`${address} ${chain}-chain ${asset} ${utcDay(day)}`] = {
            count_utxos: held.length,
            balance_amount: String(sum(held.map((u) => u.amount))),
            received_amount: String(sum(utxos.filter((u) => during(u.createdAt)).map((u) => u.amount))),
            spent_amount: String(sum(utxos.filter((u) => during(spentAt(u))).map((u) => u.amount))),
          };
        }
      }
    const rows = await m.query(
      `select address, chain, asset_id, balance_day, count_utxos, balance_amount, received_amount, spent_amount
       from address_balances_daily`,
    );
    const got = Object.fromEntries(
      rows.map((r) => [
        `${r.address} ${r.chain} ${r.asset_id} ${r.balance_day}`,
        {
          count_utxos: num(r.count_utxos),
          balance_amount: text(r.balance_amount),
          received_amount: text(r.received_amount),
          spent_amount: text(r.spent_amount),
        },
      ]),
    );
    const values = Object.values(want);
    expect(values.filter((v) => v.spent_amount !== '0').length).toBeGreaterThan(10);
    expect(values.filter((v) => v.received_amount !== '0').length).toBeGreaterThan(10);
    // Rows of exactly the configured addresses: a co-owner of a mirrored UTXO has most of its UTXOs
    // outside the lake, so a series for it would not be its balance.
    expect(got).toEqual(want);
  });

  /** The world's ICM messages the lake mirrors: those listed for a configured address at the newest extract. */
  function icmMessagesTruth() {
    const { emulator, pipeline, now } = m;
    const icm = emulator.truth.evm.icm(pipeline.network);
    const indexes = new Set(pipeline.icm.addresses.flatMap((a) => [...icm.indexesDesc(a, now)]));
    return [...indexes].map((k) => {
      const record = icm.message(k, now);
      // Listed without its send when the source transaction is not indexed (the status says so).
      const sendListed = record.status !== 'delivered_source_not_indexed';
      return {
        id: record.messageId,
        pair: `${record.sourceBlockchainId} ${record.destinationBlockchainId}`,
        status: record.status,
        sentAt: sendListed ? icm.sentAt(k) : null,
        deliveredAt: icm.deliveredAt(k) <= now ? icm.deliveredAt(k) : null,
      };
    });
  }

  it('icm_delivery: each message sent and delivered when the world did, its latency the difference', async () => {
    const messages = icmMessagesTruth();
    const want = Object.fromEntries(
      messages.map((x) => [
        x.id,
        {
          pair: x.pair,
          status: x.status,
          is_pending: x.deliveredAt === null,
          sent_at: x.sentAt,
          delivered_at: x.deliveredAt,
          delivery_latency_seconds:
            x.sentAt !== null && x.deliveredAt !== null ? x.deliveredAt - x.sentAt : null,
        },
      ]),
    );
    const rows = await m.query(
      `select message_id, source_blockchain_id, destination_blockchain_id, status, is_pending,
              ${unixSeconds('sent_at')}, ${unixSeconds('delivered_at')}, delivery_latency_seconds
       from icm_delivery`,
    );
    const got = Object.fromEntries(
      rows.map((r) => [
        r.message_id,
        {
          pair: `${r.source_blockchain_id} ${r.destination_blockchain_id}`,
          status: r.status,
          is_pending: r.is_pending,
          sent_at: num(r.sent_at),
          delivered_at: num(r.delivered_at),
          delivery_latency_seconds: num(r.delivery_latency_seconds),
        },
      ]),
    );
    expect(messages.length).toBeGreaterThan(100);
    // (The newest extract ran at midnight, when none happens to be pending; the backlog sees pending ones.)
    const statuses = messages.map((x) => x.status);
    expect(statuses).toContain('delivered');
    expect(statuses).toContain('delivered_source_not_indexed');
    // About one in twenty-five is slow (about two hours): latencies are not one value.
    const latencies = Object.values(want).map((w) => w.delivery_latency_seconds);
    expect(latencies.filter((l) => l !== null && l > 3_600).length).toBeGreaterThan(0);
    expect(got).toEqual(want);
  });

  it('icm_backlog_daily: sent, delivered, latency and the backlog at the end of each day, per chain pair', async () => {
    const messages = icmMessagesTruth();
    const lastDay = utcDay(m.now);
    const want: Rows = {};
    for (const pair of new Set(messages.map((x) => x.pair))) {
      const ofPair = messages.filter((x) => x.pair === pair);
      const first = Math.min(...ofPair.map((x) => x.sentAt ?? (x.deliveredAt as number)));
      for (let day = first - (first % DAY); utcDay(day) <= lastDay; day += DAY) {
        const end = day + DAY;
        const during = (t: number | null) => t !== null && t >= day && t < end;
        const delivered = ofPair.filter((x) => during(x.deliveredAt));
        const latencies = delivered
          .filter((x) => x.sentAt !== null)
          .map((x) => (x.deliveredAt as number) - (x.sentAt as number));
        const n = BigInt(latencies.length);
        const total = sum(latencies.map(BigInt));
        want[`${pair} ${utcDay(day)}`] = {
          count_sent: ofPair.filter((x) => during(x.sentAt)).length,
          count_delivered: delivered.length,
          // Sent by the end of the day and not delivered by then; a message whose send is not listed is
          // not known to be pending, so it is in no backlog (as the mart documents).
          count_pending_end_of_day: ofPair.filter(
            (x) => x.sentAt !== null && x.sentAt < end && (x.deliveredAt === null || x.deliveredAt >= end),
          ).length,
          // The mean to the millisecond, rounded half up.
          avg_latency_seconds: n === 0n ? null : scaled((total * 2_000n + n) / (2n * n), 3),
          max_latency_seconds: n === 0n ? null : String(Math.max(...latencies)),
        };
      }
    }
    const rows = await m.query(
      `select source_blockchain_id, destination_blockchain_id, activity_day, count_sent, count_delivered,
              count_pending_end_of_day, avg_latency_seconds, max_latency_seconds
       from icm_backlog_daily`,
    );
    const got = Object.fromEntries(
      rows.map((r) => [
        `${r.source_blockchain_id} ${r.destination_blockchain_id} ${r.activity_day}`,
        {
          count_sent: num(r.count_sent),
          count_delivered: num(r.count_delivered),
          count_pending_end_of_day: num(r.count_pending_end_of_day),
          avg_latency_seconds: text(r.avg_latency_seconds),
          max_latency_seconds: text(r.max_latency_seconds),
        },
      ]),
    );
    const values = Object.values(want);
    expect(values.filter((v) => Number(v.count_pending_end_of_day) > 0).length).toBeGreaterThan(3);
    expect(values.filter((v) => v.avg_latency_seconds === null).length).toBeGreaterThan(0);
    expect(got).toEqual(want);
  });
});
