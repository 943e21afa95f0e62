import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { CHARTS } from '../../src/report/charts.ts';
import { groupDigits, navaxToAvax } from '../../src/report/format.ts';
import { renderPage } from '../../src/report/html.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { type Browser, findChromium, launchChromium, type Page } from '../helpers/chromium.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { MART_STREAMS } from '../helpers/truth.ts';
import { queryWarehouse } from '../helpers/warehouse.ts';

const DAY = 86_400;
/** Three extract runs a day apart: three validators snapshots, so stake has a history. */
const RUNS = 3;

/** Runs the CLI as a user would. */
function avalake(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/avalake.js', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const chromium = findChromium();
const NO_CHROMIUM =
  "no chromium on PATH or in /usr/bin for the report test. Install Debian's package: apt-get install -y chromium (.ci/run does).";
if (!chromium) console.warn(`SKIPPED the report test in Chromium: ${NO_CHROMIUM}`);

// On a developer's machine a missing browser skips the test (said above); in CI it fails, so a CI that
// lost its browser cannot pass without ever rendering the report.
it.runIf(!chromium && process.env.CI)('CI has Chromium for the report test', () => {
  expect.fail(NO_CHROMIUM);
});

describe.skipIf(!chromium)('avalake report, rendered in headless Chromium', () => {
  let emulator: Emulator;
  let workspace: ReturnType<typeof demoWorkspace>;
  let browser: Browser;
  let page: Page;
  let reportPath: string;
  const q = (sql: string) => queryWarehouse(workspace.dataDir, sql);
  const count = async (sql: string) => Number((await q(sql))[0]?.n);

  beforeAll(async () => {
    emulator = await startEmulator();
    workspace = demoWorkspace(emulator);
    // Note: a validators snapshot is stamped with the extractor's wall clock; pinning Date to the
    // emulator's clock gives one snapshot per world day, as in the marts test.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      for (let run = 0; run < RUNS; run++) {
        if (run > 0) emulator.advance(DAY);
        vi.setSystemTime(Math.floor(emulator.clock.now()) * 1000);
        const summary = await extractOnce(workspace.pipelinePath, workspace.dataDir, {
          streams: MART_STREAMS.join(','),
        });
        expect(summary.status).toBe('ok');
      }
    } finally {
      vi.useRealTimers();
    }
    // Only the staging models of streams this lake does not hold may be skipped; every mart builds.
    const { skipped } = await buildWarehouse({ dataDir: workspace.dataDir });
    expect(skipped.filter((s) => !s.name.startsWith('stg_'))).toEqual([]);

    reportPath = join(workspace.dir, 'out', 'report.html');
    const run = await avalake(['report', '--data-dir', workspace.dataDir, '--out', reportPath]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('9 of 9 charts with data');

    browser = await launchChromium(chromium as string);
    page = await browser.open(pathToFileURL(reportPath).href);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await emulator?.close();
    if (workspace) rmSync(workspace.dir, { recursive: true, force: true });
  });

  it('writes one file, with nothing left aside', () => {
    expect(readdirSync(join(workspace.dir, 'out'))).toEqual(['report.html']);
  });

  it('loads with no console error and fetches nothing but itself', () => {
    const problems = page.log.console.filter((m) => ['error', 'exception', 'warning'].includes(m.level));
    expect(problems).toEqual([]);
    expect(page.log.requests).toEqual([pathToFileURL(reportPath).href]);
    expect(readFileSync(reportPath, 'utf8')).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('each chart draws one visible mark per row of its mart query', async () => {
    const drawn = await page.evaluate<{ id: string; points: number; marks: number; visible: number }[]>(`
      [...document.querySelectorAll('figure[data-chart]')].map((figure) => {
        const svg = figure.querySelector('svg.plot');
        const box = svg ? svg.getBoundingClientRect() : null;
        const marks = svg ? [...svg.querySelectorAll('.mark')] : [];
        const inside = (r) => r.width > 0 && box && r.left >= box.left - 1 && r.right <= box.right + 1
          && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
        return {
          id: figure.dataset.chart,
          points: Number(figure.dataset.points),
          marks: marks.length,
          visible: marks.filter((m) => inside(m.getBoundingClientRect())).length,
        };
      })`);
    // Counted here straight from the marts, not with the report's own queries.
    const stakeDays = await count('select count(*) as n from stake_distribution_daily');
    const expected: Record<string, number> = {
      stake: stakeDays,
      validators: 2 * stakeDays,
      distribution: await count(
        "select count(*) as n from validators_history where subnet = 'primary' and is_current",
      ),
      'rewards-avax': await count('select count(distinct reward_day) as n from rewards_daily'),
      'rewards-usd': await count(
        'select count(*) as n from (select reward_day from rewards_daily group by all having bool_and(is_priced))',
      ),
      transactions: await count('select count(tx_count) as n from chain_metrics_daily'),
      'active-addresses': await count('select count(active_addresses) as n from chain_metrics_daily'),
      'icm-latency': await count('select count(avg_latency_seconds) as n from icm_backlog_daily'),
      'icm-latency-histogram': 10,
    };
    expect(drawn.map((c) => c.id)).toEqual(CHARTS.map((c) => c.id));
    for (const chart of drawn) {
      const want = expected[chart.id];
      expect(want, chart.id).toBeGreaterThan(0);
      expect(chart, chart.id).toEqual({ id: chart.id, points: want, marks: want, visible: want });
    }
  });

  it('reads numbers exactly: stake, Nakamoto set and latency counts', async () => {
    const [latest] = await q(
      'select total_stake_navax, nakamoto_coefficient from stake_distribution_daily order by snapshot_day desc limit 1',
    );
    const [current] = await q(
      "select sum(total_stake_navax) as navax from validators_history where subnet = 'primary' and is_current",
    );
    expect(String(current?.navax)).toBe(String(latest?.total_stake_navax));
    const shown = await page.evaluate<{ tiles: string; highlighted: number; histogram: number }>(`({
      tiles: document.querySelector('.tiles').textContent,
      highlighted: document.querySelectorAll('#chart-distribution .mark.highlight').length,
      histogram: [...document.querySelectorAll('#chart-icm-latency-histogram tbody tr')]
        .reduce((sum, tr) => sum + Number(tr.lastElementChild.textContent), 0),
    })`);
    expect(shown.tiles).toContain(`${groupDigits(navaxToAvax(String(latest?.total_stake_navax)))} AVAX`);
    expect(shown.highlighted).toBe(Number(latest?.nakamoto_coefficient));
    expect(shown.histogram).toBe(
      await count('select count(delivery_latency_seconds) as n from icm_delivery'),
    );
  });

  it('renders to a page a person can look at', async () => {
    const png = await page.screenshot();
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    writeFileSync(join(workspace.dir, 'report.png'), png);
  });
});

describe('avalake report without data', () => {
  it('says so, exit 2, when there is no warehouse', async () => {
    const run = await avalake(['report', '--data-dir', '/nonexistent/avalake-data']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no warehouse at /nonexistent/avalake-data/warehouse.duckdb');
    expect(run.stderr).toContain('avalake build');
  });

  it('an empty chart says why instead of drawing nothing', () => {
    const html = renderPage({
      network: 'fuji',
      networks: ['fuji'],
      generatedAt: '2026-11-02T00:00:00.000Z',
      latestStake: null,
      rewardTotals: null,
      icmTotals: null,
      charts: CHARTS.map((def, i) =>
        i === 0 ? { def, rows: [], missing: 'rewards_daily is not in the warehouse' } : { def, rows: [] },
      ),
    });
    expect(html.match(/data-points="0"/g)).toHaveLength(CHARTS.length);
    expect(html.match(/No data to draw/g)).toHaveLength(CHARTS.length);
    expect(html).toContain('No data to draw: rewards_daily is not in the warehouse.');
    expect(html).not.toContain('<svg');
  });
});
