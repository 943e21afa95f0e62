import { cell, duration, escapeHtml, groupDigits, navaxToAvax } from './format.ts';
import type { ChartData, ReportData } from './report.ts';
import { renderSvg } from './svg.ts';

/** Rows shown in a chart's data table; the chart itself draws every row. */
const TABLE_ROWS = 400;

const SECTIONS: { title: string; charts: string[] }[] = [
  { title: 'Staking', charts: ['stake', 'validators', 'distribution'] },
  { title: 'Rewards', charts: ['rewards-avax', 'rewards-usd'] },
  { title: 'Chains', charts: ['transactions', 'active-addresses'] },
  { title: 'Interchain messaging (ICM)', charts: ['icm-latency', 'icm-latency-histogram'] },
];

/** The whole report as one self-contained HTML page: inline CSS and SVG, no script, nothing fetched. */
export function renderPage(data: ReportData): string {
  const nakamoto = Number(data.latestStake?.nakamoto_coefficient ?? 0);
  const byId = new Map(data.charts.map((c) => [c.def.id, c]));
  const sections = SECTIONS.map((section) => {
    const figures = section.charts
      .map((id) => byId.get(id))
      .filter((c): c is ChartData => c !== undefined)
      .map((c) => figure(c, nakamoto, data))
      .join('\n');
    return `<section><h2>${escapeHtml(section.title)}</h2><div class="grid">${figures}</div></section>`;
  }).join('\n');
  const title = `avalake report${data.network ? ` · ${data.network}` : ''}`;
  const others = data.networks.filter((n) => n !== data.network);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1>${escapeHtml(title)}</h1>
<p class="meta">From the marts of the DuckDB warehouse · generated ${escapeHtml(data.generatedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}${
    others.length > 0
      ? ` · the warehouse also holds ${others.map((n) => `<b>${escapeHtml(n)}</b>`).join(', ')} (avalake report --network NAME)`
      : ''
  }</p>
${data.network === null ? '<p class="empty">The warehouse has no rows in its marts yet: run "avalake extract" and "avalake build" first.</p>' : tiles(data)}
</header>
<main>
${sections}
</main>
<footer>Hover a mark for its exact values; each chart's data table lists them as the warehouse gives them (nAVAX, exact decimals).</footer>
</body>
</html>
`;
}

function tiles(data: ReportData): string {
  const items: [label: string, value: string, note: string][] = [];
  const stake = data.latestStake;
  if (stake) {
    items.push(
      [
        'Total stake',
        `${groupDigits(navaxToAvax(String(stake.total_stake_navax)))} AVAX`,
        `on ${cell(stake.snapshot_day)}`,
      ],
      ['Validators', cell(stake.count_validators), `${cell(stake.count_delegators)} delegations`],
      ['Nakamoto coefficient', cell(stake.nakamoto_coefficient), 'validators to pass ⅓ of the stake'],
    );
  }
  const rewards = data.rewardTotals;
  if (rewards && rewards.reward_navax !== null) {
    items.push([
      'Rewards paid',
      `${groupDigits(navaxToAvax(String(rewards.reward_navax)))} AVAX`,
      `${cell(rewards.count_rewards)} rewards, ${cell(rewards.first_day)} to ${cell(rewards.last_day)}${
        rewards.priced_usd === null
          ? ''
          : ` · $${groupDigits(String(rewards.priced_usd))}${rewards.is_priced ? '' : ' (priced days)'}`
      }`,
    ]);
  }
  const icm = data.icmTotals;
  if (icm && Number(icm.count_delivered) + Number(icm.count_pending) > 0) {
    items.push([
      'ICM messages delivered',
      groupDigits(cell(icm.count_delivered)),
      `${cell(icm.count_pending)} pending${
        icm.median_latency_seconds === null ? '' : ` · median ${duration(Number(icm.median_latency_seconds))}`
      }`,
    ]);
  }
  return `<div class="tiles">${items
    .map(
      ([label, value, note]) =>
        `<div class="tile"><div class="label">${escapeHtml(label)}</div><div class="value">${escapeHtml(value)}</div><div class="note">${escapeHtml(note)}</div></div>`,
    )
    .join('')}</div>`;
}

function figure(chart: ChartData, nakamoto: number, data: ReportData): string {
  const { def, rows } = chart;
  const points = rows.length;
  let body: string;
  let legend = '';
  let callout = '';
  if (points === 0) {
    const why =
      chart.missing ??
      (data.network === null
        ? 'the warehouse has no rows yet'
        : `no rows in ${def.sources.join(' / ')} for ${data.network} yet`);
    body = `<p class="empty">No data to draw: ${escapeHtml(why)}.</p>`;
  } else {
    const drawn = def.draw(rows, { nakamoto });
    body = renderSvg(drawn, def.title);
    const series = drawn.series.length > 1 || def.id === 'distribution' ? drawn.series : [];
    legend = `<ul class="legend">${series
      .map(
        (s) =>
          `<li><span class="swatch${s.dashed ? ' dashed' : ''}" style="--c:${s.color}"></span>${escapeHtml(s.name)}</li>`,
      )
      .join(
        '',
      )}${def.id === 'distribution' && nakamoto > 0 ? '<li><span class="swatch outline"></span>Nakamoto set (full colour)</li>' : ''}</ul>`;
    if (def.id === 'distribution' && data.latestStake)
      callout = `<p class="callout">Nakamoto coefficient <b>${escapeHtml(cell(data.latestStake.nakamoto_coefficient))}</b>: the ${escapeHtml(cell(data.latestStake.nakamoto_coefficient))} largest of ${points} validators together hold more than a third of the ${escapeHtml(groupDigits(navaxToAvax(String(data.latestStake.total_stake_navax))))} AVAX staked (snapshot of ${escapeHtml(cell(data.latestStake.snapshot_day))}).</p>`;
  }
  return `<figure class="chart" id="chart-${def.id}" data-chart="${def.id}" data-source="${escapeHtml(def.sources.join(' '))}" data-points="${points}">
<figcaption><h3>${escapeHtml(def.title)}</h3><p>${escapeHtml(def.subtitle)}</p></figcaption>
${callout}${legend}${body}
${points === 0 ? '' : table(chart)}
</figure>`;
}

function table({ def, rows }: ChartData): string {
  const columns = Object.keys(rows[0] ?? {});
  const shown = rows.slice(0, TABLE_ROWS);
  const head = columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('');
  const body = shown
    .map((r) => `<tr>${columns.map((c) => `<td>${escapeHtml(cell(r[c]))}</td>`).join('')}</tr>`)
    .join('');
  const more =
    rows.length > shown.length ? `<p class="more">First ${TABLE_ROWS} of ${rows.length} rows.</p>` : '';
  return `<details><summary>Data: ${rows.length} rows from ${def.sources.map((s) => `<code>${escapeHtml(s)}</code>`).join(' and ')}</summary><div class="table"><table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>${more}</details>`;
}

const CSS = `
:root { color-scheme: light; --ink: #1f2430; --muted: #5b6475; --line: #e3e6ec; --panel: #fff; --bg: #f5f6f8; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header, main, footer { max-width: 1320px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 28px; }
h1 { font-size: 24px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 17px; margin: 28px 0 12px; color: var(--muted); text-transform: uppercase; letter-spacing: 0.06em; }
h3 { font-size: 15px; margin: 0; }
.meta { color: var(--muted); margin: 0 0 18px; }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 12px; }
.tile { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.tile .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.05em; }
.tile .value { font-size: 20px; white-space: nowrap; font-weight: 600; margin: 2px 0; font-variant-numeric: tabular-nums; }
.tile .note { color: var(--muted); font-size: 12px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 16px; }
figure.chart { margin: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px 10px; min-width: 0; }
figcaption p { margin: 2px 0 6px; color: var(--muted); font-size: 13px; }
.callout { margin: 4px 0 6px; padding: 6px 10px; background: #eef3fe; border-radius: 6px; font-size: 13px; }
.legend { list-style: none; margin: 4px 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 12px; color: var(--muted); }
.legend li { display: flex; align-items: center; gap: 6px; }
.swatch { width: 14px; height: 10px; border-radius: 2px; background: var(--c); display: inline-block; }
.swatch.dashed { height: 0; border-top: 2px dashed var(--c); background: none; }
.swatch.outline { background: #2563eb; box-shadow: 0 0 0 1px #fff, 0 0 0 2px #93a3c0; }
svg.plot { width: 100%; height: auto; display: block; margin-top: 6px; }
svg.plot text { font: 13px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: var(--muted); }
svg.plot .axis-title { font-size: 13px; font-weight: 500; fill: var(--ink); }
svg.plot .grid { stroke: var(--line); stroke-width: 1; }
svg.plot .baseline, svg.plot .tick-mark { stroke: #9aa3b2; stroke-width: 1; }
svg.plot .line { fill: none; stroke-width: 2; stroke-linejoin: round; }
svg.plot .zero { fill: #9aa3b2; }
svg.plot .mark { transition: opacity 0.1s; }
svg.plot circle.mark { stroke: #fff; stroke-width: 1; }
svg.plot .mark:hover { opacity: 0.7; }
svg.plot .has-highlight .mark:not(.highlight) { opacity: 0.35; }
.empty { color: var(--muted); background: #fafbfc; border: 1px dashed var(--line); border-radius: 8px; padding: 28px; text-align: center; }
details { margin-top: 8px; font-size: 12px; }
summary { cursor: pointer; color: var(--muted); }
.table { max-height: 260px; overflow: auto; margin-top: 6px; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { position: sticky; top: 0; background: #f0f2f5; }
code { font-size: 12px; }
.more { color: var(--muted); }
footer { color: var(--muted); font-size: 12px; padding: 24px; }
`;
