import { compact, escapeHtml } from './format.ts';

/** Hand-written SVG charts: every data row is one element of class `mark`, with its exact values as a tooltip. */

/** A named series and how it is drawn. */
export interface Series {
  name: string;
  color: string;
  dashed?: boolean;
}

/** One bar (one row): its stacked segments by series index, bottom first. */
export interface BarDatum {
  /** A UTC day (YYYY-MM-DD) on a day axis, or the band's label. */
  x: string;
  segments: number[];
  title: string;
  highlight?: boolean;
}

export interface BarChart {
  kind: 'bars';
  /** `day`: bars on a UTC time axis; otherwise bands in order, labelled along the axis named here. */
  xAxis: 'day' | { band: string };
  yLabel: string;
  series: Series[];
  bars: BarDatum[];
}

/** One point (one row) of a line. */
export interface LinePoint {
  series: number;
  day: string;
  value: number;
  title: string;
}

export interface LineChart {
  kind: 'lines';
  yLabel: string;
  series: Series[];
  points: LinePoint[];
}

export type Chart = BarChart | LineChart;

export const PALETTE = [
  '#2563eb',
  '#ea8a0c',
  '#0d9f6e',
  '#d9434b',
  '#7c5cd6',
  '#0891b2',
  '#c2417f',
  '#5d8f16',
];
export const AGGREGATE_COLOR = '#6b7280';

const WIDTH = 760;
const HEIGHT = 300;
const MARGIN = { left: 78, right: 20, top: 14, bottom: 54 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
const DAY_MS = 86_400_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The chart as one `<svg>` element. */
export function renderSvg(chart: Chart, label: string): string {
  const body = chart.kind === 'bars' ? barBody(chart) : lineBody(chart);
  return `<svg class="plot" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(label)}">${body}</svg>`;
}

const dayNumber = (day: string): number => Math.round(Date.parse(`${day}T00:00:00Z`) / DAY_MS);

function dayLabel(n: number): string {
  const date = new Date(n * DAY_MS);
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]}`;
}

/** 0 up to a round number above `max`, in about five steps. */
function niceTicks(max: number): number[] {
  const top = max > 0 ? max : 1;
  const rough = top / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * power >= rough) ?? 10) * power;
  const ticks: number[] = [];
  for (let v = 0; v < top + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function yAxis(ticks: number[], label: string): { y: (v: number) => number; svg: string } {
  const top = ticks[ticks.length - 1] ?? 1;
  const y = (v: number) => MARGIN.top + PLOT_H - (v / top) * PLOT_H;
  const lines = ticks
    .map(
      (t) =>
        `<line class="grid" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${f(y(t))}" y2="${f(y(t))}"/>` +
        `<text class="tick" x="${MARGIN.left - 8}" y="${f(y(t) + 4)}" text-anchor="end">${compact(t)}</text>`,
    )
    .join('');
  const cy = MARGIN.top + PLOT_H / 2;
  const title = `<text class="axis-title" x="16" y="${f(cy)}" text-anchor="middle" transform="rotate(-90 16 ${f(cy)})">${escapeHtml(label)}</text>`;
  return { y, svg: `<g class="axis y">${lines}${title}</g>` };
}

function xAxisFrame(ticks: { x: number; text: string }[], label: string): string {
  const base = MARGIN.top + PLOT_H;
  const marks = ticks
    .map(
      (t) =>
        `<line class="tick-mark" x1="${f(t.x)}" x2="${f(t.x)}" y1="${base}" y2="${base + 5}"/>` +
        `<text class="tick" x="${f(t.x)}" y="${base + 21}" text-anchor="middle">${escapeHtml(t.text)}</text>`,
    )
    .join('');
  return (
    `<g class="axis x"><line class="baseline" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${base}" y2="${base}"/>` +
    `${marks}<text class="axis-title" x="${MARGIN.left + PLOT_W / 2}" y="${HEIGHT - 8}" text-anchor="middle">${escapeHtml(label)}</text></g>`
  );
}

/** A day scale over [first, last] (widened by `pad` days each side) and ticks at a readable step. */
function dayScale(days: number[], pad: number) {
  const first = Math.min(...days);
  const last = Math.max(...days);
  const lo = first - pad;
  const hi = Math.max(last + pad, lo + 1);
  const x = (d: number) => MARGIN.left + ((d - lo) / (hi - lo)) * PLOT_W;
  const span = last - first;
  const step = [1, 2, 3, 7, 14, 28, 56, 91, 182, 365].find((s) => span / s <= 7) ?? 365;
  const ticks: { x: number; text: string }[] = [];
  for (let d = first; d <= last; d += step) ticks.push({ x: x(d), text: dayLabel(d) });
  return { x, unit: PLOT_W / (hi - lo), ticks };
}

function barBody(chart: BarChart): string {
  const totals = chart.bars.map((b) => b.segments.reduce((s, v) => s + Math.max(v, 0), 0));
  const ticks = niceTicks(Math.max(0, ...totals));
  const { y, svg: ySvg } = yAxis(ticks, chart.yLabel);
  let position: (i: number) => number;
  let width: number;
  let xSvg: string;
  if (chart.xAxis === 'day') {
    const days = chart.bars.map((b) => dayNumber(b.x));
    const scale = dayScale(days, 0.5);
    position = (i) => scale.x(days[i] ?? 0);
    width = Math.max(1, Math.min(48, scale.unit * 0.78));
    xSvg = xAxisFrame(scale.ticks, 'UTC day');
  } else {
    const band = PLOT_W / Math.max(1, chart.bars.length);
    position = (i) => MARGIN.left + band * (i + 0.5);
    width = Math.max(0.6, Math.min(56, band * 0.78));
    const every = Math.ceil(chart.bars.length / 12);
    const ticks = chart.bars
      .map((b, i) => ({ x: position(i), text: b.x }))
      .filter((_, i) => i % every === 0 || i === chart.bars.length - 1);
    xSvg = xAxisFrame(ticks, chart.xAxis.band);
  }
  const marks = chart.bars
    .map((bar, i) => {
      const cx = position(i);
      let base = 0;
      const rects = bar.segments
        .map((value, s) => {
          const v = Math.max(value, 0);
          const top = y(base + v);
          const height = y(base) - top;
          base += v;
          const color = chart.series[s]?.color ?? PALETTE[0];
          return `<rect x="${f(cx - width / 2)}" y="${f(top)}" width="${f(width)}" height="${f(height)}" fill="${color}"/>`;
        })
        .join('');
      // A bar of zero is still a row: a hairline on the axis shows it was drawn.
      const zero =
        base > 0
          ? ''
          : `<rect class="zero" x="${f(cx - width / 2)}" y="${f(y(0) - 1)}" width="${f(width)}" height="1"/>`;
      return `<g class="mark${bar.highlight ? ' highlight' : ''}">${zero}<title>${escapeHtml(bar.title)}</title>${rects}</g>`;
    })
    .join('');
  const emphasis = chart.bars.some((b) => b.highlight) ? ' has-highlight' : '';
  return `${ySvg}${xSvg}<g class="marks${emphasis}">${marks}</g>`;
}

function lineBody(chart: LineChart): string {
  const ticks = niceTicks(Math.max(0, ...chart.points.map((p) => p.value)));
  const { y, svg: ySvg } = yAxis(ticks, chart.yLabel);
  const scale = dayScale(
    chart.points.map((p) => dayNumber(p.day)),
    0.3,
  );
  const radius = chart.points.length > 150 ? 2 : 3;
  const paths = chart.series
    .map((series, s) => {
      const points = chart.points
        .filter((p) => p.series === s)
        .map((p) => [scale.x(dayNumber(p.day)), y(p.value)] as const)
        .sort((a, b) => a[0] - b[0]);
      if (points.length < 2) return '';
      const d = points.map(([px, py], i) => `${i === 0 ? 'M' : 'L'}${f(px)},${f(py)}`).join('');
      return `<path class="line" d="${d}" stroke="${series.color}"${series.dashed ? ' stroke-dasharray="5 4"' : ''}/>`;
    })
    .join('');
  const marks = chart.points
    .map((p) => {
      const color = chart.series[p.series]?.color ?? PALETTE[0];
      return `<circle class="mark" cx="${f(scale.x(dayNumber(p.day)))}" cy="${f(y(p.value))}" r="${radius}" fill="${color}"><title>${escapeHtml(p.title)}</title></circle>`;
    })
    .join('');
  return `${ySvg}${xAxisFrame(scale.ticks, 'UTC day')}<g class="lines">${paths}</g><g class="marks">${marks}</g>`;
}

const f = (n: number): string => (Math.round(n * 10) / 10).toString();
