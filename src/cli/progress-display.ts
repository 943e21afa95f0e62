import { createLogger, type Logger, type LoggerOptions, redactor } from '../extract/log.ts';
import {
  applyProgress,
  createProgressState,
  type ProgressEvent,
  type ProgressSink,
  type ProgressState,
  remainingPages,
} from '../extract/progress.ts';
import { durationText } from '../warehouse/duration.ts';

/**
 * How a run's progress is shown: on a terminal, a live display redrawn in place a few times a second;
 * elsewhere, one log line per event. The events and their state are the extract's (extract/progress.ts).
 */

const count = (n: number) => n.toLocaleString('en-US');

/**
 * One line per stream and a total line: what the live display draws. Pure: same state and time, same
 * lines. At most `maxLines` (a display taller than the terminal cannot be redrawn in place): running
 * streams first, then the rest folded into one line.
 */
export function renderProgress(state: ProgressState, now: number, columns = 120, maxLines = 1000): string[] {
  const streams = [...state.streams.values()];
  const nameWidth = Math.max(6, ...streams.map((s) => s.name.length));
  const shown: { line: string; order: number; state: 'running' | 'done' | 'waiting' }[] = [];
  let rows = 0;
  let ended = 0;
  let partitions = 0;
  for (const s of streams) {
    rows += s.rows;
    ended += s.ended;
    partitions += Math.max(s.partitions, s.started);
    const of = Math.max(s.partitions, s.started);
    const finished = s.started > 0 && s.ended === of;
    const elapsed = ((finished ? (s.lastAt ?? now) : now) - (s.firstAt ?? now)) / 1000;
    const cells = [
      s.name.padEnd(nameWidth),
      `${s.ended}/${of}`.padStart(6),
      `${count(s.pages)} pages`.padStart(11),
      `${count(s.rows)} rows`.padStart(13),
      (elapsed >= 0.5 && s.rows > 0 ? `${count(Math.round(s.rows / elapsed))} rows/s` : '').padStart(12),
      s.retries > 0 ? `${s.retries} retries` : '',
    ];
    let what: 'running' | 'done' | 'waiting' = 'running';
    if (s.started === 0) {
      cells.push('waiting');
      what = 'waiting';
    } else if (finished) {
      cells.push(s.failed > 0 ? `${s.failed} failed` : 'done');
      what = 'done';
    } else {
      const remaining = remainingPages(s);
      if (remaining !== undefined && s.pages > 0 && elapsed > 0) {
        const total = s.pages + remaining;
        const eta = remaining / (s.pages / elapsed);
        cells.push(`${Math.floor((100 * s.pages) / total)}%  ~${durationText(eta)} left`);
      } else cells.push('running');
    }
    shown.push({
      line: fitLine(cells.filter((c) => c !== '').join('  '), columns),
      order: shown.length,
      state: what,
    });
  }
  let lines = shown.map((x) => x.line);
  if (shown.length + 1 > maxLines) {
    const rank = { running: 0, done: 1, waiting: 2 } as const;
    const sorted = [...shown].sort((a, b) => rank[a.state] - rank[b.state] || a.order - b.order);
    const keep = sorted.slice(0, Math.max(0, maxLines - 2));
    const rest = sorted.slice(keep.length);
    const n = (w: string) => rest.filter((x) => x.state === w).length;
    lines = [
      ...keep.sort((a, b) => a.order - b.order).map((x) => x.line),
      fitLine(
        `… ${rest.length} more streams: ${n('running')} running, ${n('done')} done, ${n('waiting')} waiting`,
        columns,
      ),
    ];
  }
  const elapsed = state.startedAt === undefined ? 0 : (now - state.startedAt) / 1000;
  lines.push(
    fitLine(
      `extract  ${ended}/${partitions} partitions  ${count(rows)} rows  ${durationText(elapsed)}`,
      columns,
    ),
  );
  return lines;
}

/** A line never wraps: a wrapped line would break the redraw in place. */
const fitLine = (line: string, columns: number) =>
  line.length < columns ? line : `${line.slice(0, columns - 2)}…`;

/** Redraw at most this often: a few times a second is live enough and cheap on a slow terminal. */
export const REDRAW_INTERVAL_MS = 250;

export interface LiveDisplay {
  update(event: ProgressEvent): void;
  /** A log line above the display (a warning), which is then redrawn under it. */
  log(line: string): void;
  /** Draws the final state and stops redrawing. */
  stop(): void;
}

/** Progress redrawn in place on a terminal (ANSI cursor movement), at most every `intervalMs`. */
export function createLiveDisplay(options: {
  write: (text: string) => void;
  columns?: () => number;
  /** The terminal's height: the display keeps below it. */
  rows?: () => number;
  intervalMs?: number;
  /** On the clock of the events' `at`. */
  now?: () => number;
}): LiveDisplay {
  const now = options.now ?? (() => performance.now());
  const interval = options.intervalMs ?? REDRAW_INTERVAL_MS;
  const state = createProgressState();
  let drawn = 0;
  let lastDraw = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const clear = () => (drawn > 0 ? `\x1b[${drawn}F\x1b[J` : '');
  const draw = () => {
    timer = undefined;
    lastDraw = now();
    const lines = renderProgress(
      state,
      lastDraw,
      options.columns?.() ?? 120,
      Math.max(3, (options.rows?.() ?? 1000) - 1),
    );
    options.write(`${clear()}${lines.join('\n')}\n`);
    drawn = lines.length;
  };
  const schedule = () => {
    if (timer || stopped) return;
    timer = setTimeout(draw, Math.max(0, interval - (now() - lastDraw)));
    timer.unref();
  };
  return {
    update(event) {
      applyProgress(state, event);
      schedule();
    },
    log(line) {
      options.write(`${clear()}${line}\n`);
      drawn = 0;
      if (state.streams.size > 0 && !stopped) schedule();
    },
    stop() {
      if (stopped) return;
      if (timer) clearTimeout(timer);
      if (state.streams.size > 0) draw();
      stopped = true;
      // What follows is written below the final state, which stays on screen.
      drawn = 0;
    },
  };
}

/** Where a command's logs and progress go. */
export interface RunOutput {
  log: Logger;
  progress: ProgressSink;
  close(): void;
}

/**
 * On a terminal with pretty logs (and not --quiet): the live display, with warnings and errors above it
 * (info too with --verbose). Otherwise: one log line per event, page progress at debug level so a cron
 * log stays short unless --verbose asks for every page.
 */
export function createRunOutput(
  options: LoggerOptions & { live: boolean; columns?: () => number; writeRaw?: (text: string) => void },
): RunOutput {
  const redact = redactor(options.secrets);
  if (options.live && options.format === 'pretty' && !options.quiet) {
    const raw = options.writeRaw ?? ((text: string) => process.stderr.write(text));
    const display = createLiveDisplay({
      write: (text) => raw(redact(text)),
      columns: options.columns ?? (() => process.stderr.columns ?? 120),
      rows: () => process.stderr.rows ?? 1000,
    });
    const log = createLogger({ ...options, quiet: !options.verbose, write: (line) => display.log(line) });
    return { log, progress: display.update, close: display.stop };
  }
  const log = createLogger(options);
  const progress: ProgressSink = (event) => {
    switch (event.kind) {
      case 'plan':
        log({
          msg: 'plan',
          partitions: Object.values(event.partitions).reduce((a, b) => a + b, 0),
          streams: Object.keys(event.partitions).length,
        });
        return;
      case 'start':
        log({ level: 'debug', msg: 'partition started', stream: event.stream, partition: event.partition });
        return;
      case 'page': {
        const { kind: _, at: __, ...fields } = event;
        log({ level: 'debug', msg: 'page', ...fields });
        return;
      }
      // The fetcher logs each retry and the runner each partition's end; one line per event, not two.
      case 'retry':
      case 'end':
        return;
    }
  };
  return { log, progress, close: () => {} };
}
