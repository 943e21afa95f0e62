import type { DuckDBConnection } from '@duckdb/node-api';
import { queryRows, quoteLiteral } from '../warehouse/duckdb.ts';
import { checkOutput, writeOutput } from '../warehouse/output.ts';
import { warehouseObjects, withWarehouse } from '../warehouse/sql.ts';
import { WarehouseUsageError } from '../warehouse/usage-error.ts';
import { CHARTS, type ChartDef, type Row } from './charts.ts';
import { renderPage } from './html.ts';

/** A chart's rows, or why it has none. */
export interface ChartData {
  def: ChartDef;
  rows: Row[];
  /** Set when a mart the chart reads is not in the warehouse. */
  missing?: string;
}

/** Everything the page shows, read from the warehouse in one read-only session. */
export interface ReportData {
  /** The network reported on; null when no mart has a row. */
  network: string | null;
  /** Every network the marts hold. */
  networks: string[];
  generatedAt: string;
  /** The newest stake snapshot's row of stake_distribution_daily, if any. */
  latestStake: Row | null;
  rewardTotals: Row | null;
  icmTotals: Row | null;
  charts: ChartData[];
}

export interface WriteReportOptions {
  dataDir: string;
  out: string;
  /** Which network to report on when the warehouse holds several; default: the only one, else mainnet. */
  network?: string;
  /** The page's "generated" time; default now. */
  now?: Date;
}

/** What was written: the file and, per chart, how many rows (marks) it drew. */
export interface ReportSummary {
  path: string;
  network: string | null;
  charts: { id: string; points: number; missing?: string }[];
}

const NETWORK_MARTS = ['stake_distribution_daily', 'rewards_daily', 'chain_metrics_daily', 'icm_delivery'];

/** Reads the marts (read-only), renders the page and writes it aside, then renames it over `out`. */
export async function writeReport(options: WriteReportOptions): Promise<ReportSummary> {
  // Before reading the marts: a mistyped --out costs no work.
  await checkOutput('--out', options.out, { createFolders: true, dataDir: options.dataDir });
  const data = await withWarehouse(options.dataDir, (db) =>
    loadReport(db, { network: options.network, now: options.now ?? new Date() }),
  );
  // Note: a reader (a browser, a web server) must never see half a report: written aside, then renamed.
  const path = await writeOutput('--out', options.out, renderPage(data));
  return {
    path,
    network: data.network,
    charts: data.charts.map((c) => ({
      id: c.def.id,
      points: c.rows.length,
      ...(c.missing ? { missing: c.missing } : {}),
    })),
  };
}

/** Runs every chart's query on an open warehouse. */
export async function loadReport(
  db: DuckDBConnection,
  options: { network?: string | undefined; now: Date },
): Promise<ReportData> {
  const objects = await warehouseObjects(db);
  const present = NETWORK_MARTS.filter((m) => objects.has(m));
  const networks =
    present.length === 0
      ? []
      : (
          await queryRows(
            db,
            `${present.map((m) => `select distinct network from ${m}`).join(' union ')} order by network`,
          )
        ).map((r) => String(r.network));
  const network = chooseNetwork(networks, options.network);
  const literal = quoteLiteral(network ?? '');
  const one = async (mart: string, sql: string): Promise<Row | null> =>
    objects.has(mart) && network !== null ? ((await queryRows(db, sql))[0] ?? null) : null;

  const latestStake = await one(
    'stake_distribution_daily',
    `select * from stake_distribution_daily where network = ${literal} order by snapshot_day desc limit 1`,
  );
  const rewardTotals = await one(
    'rewards_daily',
    `select
        sum(reward_navax) as reward_navax,
        sum(count_rewards) as count_rewards,
        sum(reward_usd) filter (where is_priced) as priced_usd,
        bool_and(is_priced) as is_priced,
        min(reward_day) as first_day,
        max(reward_day) as last_day
     from rewards_daily where network = ${literal}`,
  );
  const icmTotals = await one(
    'icm_delivery',
    `select
        count(*) filter (where not is_pending) as count_delivered,
        count(*) filter (where is_pending) as count_pending,
        median(delivery_latency_seconds) as median_latency_seconds
     from icm_delivery where network = ${literal}`,
  );
  const charts: ChartData[] = [];
  for (const def of CHARTS) {
    const absent = def.sources.filter((s) => !objects.has(s));
    if (absent.length > 0) {
      charts.push({
        def,
        rows: [],
        missing: `${absent.join(' and ')} ${absent.length > 1 ? 'are' : 'is'} not in the warehouse: run "avalake build" to make ${absent.length > 1 ? 'them' : 'it'}`,
      });
      continue;
    }
    charts.push({ def, rows: network === null ? [] : await queryRows(db, def.sql(literal)) });
  }
  return {
    network,
    networks,
    generatedAt: options.now.toISOString(),
    latestStake,
    rewardTotals,
    icmTotals,
    charts,
  };
}

function chooseNetwork(networks: string[], wanted: string | undefined): string | null {
  if (wanted !== undefined) {
    if (!networks.includes(wanted))
      throw new WarehouseUsageError(
        `no data for network "${wanted}" in the warehouse; it holds: ${networks.join(', ') || 'nothing yet'}`,
      );
    return wanted;
  }
  if (networks.length === 0) return null;
  return networks.includes('mainnet') ? 'mainnet' : (networks[0] ?? null);
}
