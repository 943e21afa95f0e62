import { dirname, resolve } from 'node:path';
import { ConfigError, type ExtractFlags, resolveExtractConfig } from '../extract/config.ts';
import { createHttpClient } from '../extract/http.ts';
import { redactor } from '../extract/log.ts';
import { type PartitionSummary, RunStoppedError, type RunSummary, runExtract } from '../extract/run.ts';
import { processLimitOf, processLimitReason } from '../load/index.ts';
import { deviceFailureCode, errnoReason } from '../warehouse/output.ts';
import { EXIT } from './exit.js';
import { lakeFailureCode } from './lake-failure.ts';
import { createRunOutput, type RunOutput } from './progress-display.ts';
import { untilSignal } from './until-signal.ts';
import { VERSION } from './version.js';

export interface ExtractArgs extends ExtractFlags {
  json?: boolean;
  logFormat?: 'json' | 'pretty';
  quiet?: boolean;
  verbose?: boolean;
}

/** Exit code of a finished run (DESIGN.md): a spent quota is a clean stop, the next run continues. */
export function exitCodeOf(summary: RunSummary): number {
  switch (summary.status) {
    case 'ok':
    case 'quota':
      return EXIT.ok;
    case 'partial':
      return EXIT.partial;
    case 'failed':
      return EXIT.failed;
    case 'interrupted':
      return EXIT.interrupted;
  }
}

/** A run's partitions summed per stream, in the order the streams first appear; failures' errors once each. */
export interface StreamTotals {
  partitions: number;
  requests: number;
  retries: number;
  rows: number;
  rejects: number;
  failed: number;
  errors?: string[];
}

export function streamTotals(summary: RunSummary): Map<string, StreamTotals> {
  const byStream = new Map<string, StreamTotals>();
  for (const p of summary.partitions) {
    const s = byStream.get(p.stream) ?? {
      partitions: 0,
      requests: 0,
      retries: 0,
      rows: 0,
      rejects: 0,
      failed: 0,
    };
    byStream.set(p.stream, s);
    s.partitions++;
    s.requests += p.requests;
    s.retries += p.retries;
    s.rows += p.rows;
    s.rejects += p.rejects;
    if (p.status !== 'failed') continue;
    s.failed++;
    s.errors ??= [];
    if (p.error && !s.errors.includes(p.error)) s.errors.push(p.error);
  }
  return byStream;
}

/**
 * A partition's failure is what stopped the run (a limit of the process fails every partition alike): the
 * stop's words begin with it, so the summaries say it once.
 */
export const saysWhatStopped = (error: string | undefined, stop: string | undefined): boolean =>
  error !== undefined && error !== '' && stop?.startsWith(error) === true;

/** One line per stream: what a person at a terminal wants after a run. */
export function formatSummary(summary: RunSummary): string {
  const byStream = streamTotals(summary);
  const header = ['stream', 'partitions', 'rows', 'rejects', 'requests', 'retries', 'failed'];
  const rows = [...byStream].map(([name, s]) =>
    [name, s.partitions, s.rows, s.rejects, s.requests, s.retries, s.failed].map(String),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)))
      .join('  ');
  const lines = [line(header), ...rows.map(line)];
  lines.push(
    `run ${summary.runId}: ${summary.status}${summary.quota ? ` (${summary.quota}; the next run continues)` : ''}`,
  );
  // A failure that stopped the run in a partition (a limit of the process) is said once, on the
  // partitions' line below.
  if (summary.error && !summary.partitions.some((p) => saysWhatStopped(p.error, summary.error)))
    lines.push(`  stopped by: ${summary.error}`);
  // The same failure in many partitions (a rejected key, a host down) is one line, not one per partition.
  const failures = new Map<string, PartitionSummary[]>();
  for (const p of summary.partitions.filter((x) => x.error)) {
    const what = (p.error as string).replace(/ \(stream .*\)$/, '');
    failures.set(what, [...(failures.get(what) ?? []), p]);
  }
  for (const [what, list] of failures) {
    const first = list[0] as PartitionSummary;
    if (list.length === 1) lines.push(`  ${first.stream} ${JSON.stringify(first.partition)}: ${first.error}`);
    else {
      const streams = [...new Set(list.map((p) => p.stream))].join(', ');
      const location = first.error?.slice(what.length + 2, -1);
      lines.push(
        `  ${list.length} partitions of ${streams}: ${what}${location ? ` (first: ${location})` : ''}`,
      );
    }
  }
  return lines.join('\n');
}

/** The whole command, returning its exit code (tests call it directly). */
export function extract(
  args: ExtractArgs,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  return untilSignal(async (interrupted) => {
    const config = await resolveOrReport(args, env);
    if (typeof config === 'number') return config;
    const output = outputOf(args, config);
    try {
      const { code, summary, error } = await extractWith(config, output, interrupted);
      output.close();
      if (summary)
        process.stdout.write(
          redactorOf(config)(`${args.json ? JSON.stringify(summary) : formatSummary(summary)}\n`),
        );
      // Stopped before the run began (the lock held, the catalog or the bucket not there): --json still
      // prints its one object, so a script reading stdout learns why rather than finding nothing.
      else if (args.json && error !== undefined)
        process.stdout.write(redactorOf(config)(`${JSON.stringify(notBegun(code, error))}\n`));
      return code;
    } finally {
      output.close();
    }
  });
}

/** The `--json` object of a run that never began: no run id, no partitions, and why. */
const notBegun = (code: number, error: string) => ({
  runId: '-',
  status: code === EXIT.locked ? 'locked' : 'failed',
  partitions: [],
  recovered: { rolledForward: 0, discarded: 0 },
  error,
});

export type ExtractConfig = Awaited<ReturnType<typeof resolveExtractConfig>>;

/** The resolved configuration, or exit 2 with the one-line reason on stderr. */
export async function resolveOrReport(
  args: ExtractFlags,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ExtractConfig | number> {
  try {
    return await resolveExtractConfig(args, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`avalake: ${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
}

/** Logs and progress on stderr: live on a terminal, one line per event elsewhere; the key masked. */
export function outputOf(
  args: Pick<ExtractArgs, 'logFormat' | 'quiet' | 'verbose'>,
  config: ExtractConfig,
): RunOutput {
  return createRunOutput({
    format: args.logFormat ?? (process.stderr.isTTY ? 'pretty' : 'json'),
    quiet: args.quiet ?? false,
    verbose: args.verbose ?? false,
    secrets: config.apiKey ? [config.apiKey] : [],
    live: process.stderr.isTTY === true,
  });
}

export const redactorOf = (config: ExtractConfig) => redactor(config.apiKey ? [config.apiKey] : []);

/** Codes of a write refused by the file system's permissions or flags, not by its room. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST']);

/** One extract run of a resolved configuration: its exit code, and its summary when it ran. */
export async function extractWith(
  config: ExtractConfig,
  output: RunOutput,
  signal: AbortSignal,
): Promise<{ code: number; summary?: RunSummary; error?: string }> {
  const http = createHttpClient({
    userAgent: `avalake/${VERSION}`,
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    keyedOrigins: [new URL(config.pipeline.urls.data).origin],
    connectionsPerHost: Math.max(2, config.pipeline.concurrency),
  });
  const redact = redactorOf(config);
  try {
    const summary = await runExtract({
      pipeline: config.pipeline,
      streams: config.streams,
      dataDir: config.dataDir,
      http,
      fullRefresh: config.fullRefresh,
      wait: config.wait,
      log: output.log,
      progress: output.progress,
      signal,
      ...(config.retries !== undefined ? { retries: config.retries } : {}),
      ...(config.catalog ? { catalog: config.catalog } : {}),
    });
    for (const host of summary.unreachable ?? [])
      process.stderr.write(redact(`avalake: ${unreachableMessage(config, host)}\n`));
    if (summary.keyRefused !== undefined) process.stderr.write(redact(`avalake: ${summary.keyRefused}\n`));
    return { code: exitCodeOf(summary), summary };
  } catch (thrown) {
    // Stopped mid-run: what committed before the failure is still the run's to report.
    const stopped = thrown instanceof RunStoppedError ? { summary: thrown.summary } : {};
    const error = thrown instanceof RunStoppedError ? thrown.cause : thrown;
    // The lock held (75), a catalog of another lake or refusing its URL (2), the lake, catalog or bucket
    // failing (1): one line, also kept for the run's summary.
    const failed = lakeFailureCode(error);
    if (failed !== undefined) {
      const message = redact((error as Error).message);
      process.stderr.write(`avalake: ${message}\n`);
      return { code: failed, error: message, ...stopped };
    }
    // A device that cannot take more (or failed): the run fails, the next one continues.
    const device = deviceFailureCode(error);
    if (device !== undefined) {
      const message =
        `writing the lake in ${config.dataDir} failed: ${errnoReason({ code: device })}; what was committed stays, ` +
        'and the next run continues from it once the device has room';
      process.stderr.write(`avalake: ${message}\n`);
      return { code: EXIT.failed, error: message, ...stopped };
    }
    // A limit of the process (open files, memory): the run stopped, what it committed stays.
    const limit = processLimitOf(error);
    if (limit !== undefined) {
      const message =
        `${processLimitReason(limit)}; the run stopped: what was committed to the lake in ${config.dataDir} ` +
        'stays, and the next run continues from it';
      process.stderr.write(`avalake: ${message}\n`);
      return { code: EXIT.failed, error: message, ...stopped };
    }
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (NOT_WRITABLE.has(code)) {
      // A folder in the lake it may not write in (permissions changed by hand, an immutable flag) is
      // named: the data directory itself may be writable, and another one would begin a new lake. The
      // lake only creates, renames and deletes files, so a folder is what refused: the file's, or for a
      // rename either of the two.
      const { path, dest } = error as NodeJS.ErrnoException & { dest?: string };
      const folders = [...new Set([path, dest].flatMap((p) => (p ? [resolve(dirname(p))] : [])))];
      const folder = folders.some((f) => f !== resolve(config.dataDir)) ? folders.join(' or ') : undefined;
      if (thrown instanceof RunStoppedError) {
        const message =
          `writing in ${folder ?? config.dataDir} failed: ${errnoReason(error)}; what was committed to the ` +
          `lake in ${config.dataDir} stays, and the next run continues from it once avalake may write there`;
        process.stderr.write(`avalake: ${message}\n`);
        return { code: EXIT.failed, error: message, ...stopped };
      }
      const message = folder
        ? `cannot write in ${folder}, in the data directory ${config.dataDir}: ${errnoReason(error)}; make it writable`
        : `the data directory ${config.dataDir} is not writable: ${errnoReason(error)}; make it writable, or choose another with --data-dir`;
      process.stderr.write(`avalake: ${message}\n`);
      return { code: EXIT.usage, error: message };
    }
    // Anything else is avalake's own fault: said so, with the stack to report it, and the run's summary
    // (--json's one object) still printed, so a scheduler's log says what happened.
    const message = redact(error instanceof Error ? error.message : String(error));
    const stack = error instanceof Error && error.stack ? `\n${redact(error.stack)}` : '';
    process.stderr.write(
      `avalake: unexpected error, a fault of avalake's (please report it): ${message}${stack}\n`,
    );
    return { code: EXIT.failed, error: message, ...stopped };
  } finally {
    await http.close();
  }
}

/** Where each URL of the pipeline comes from, most specific first. */
const URL_SOURCES = {
  data: { what: 'the Data API URL', flag: '--base-url', env: 'AVALAKE_BASE_URL' },
  metrics: { what: 'the Metrics API URL', flag: '--metrics-url', env: 'AVALAKE_METRICS_URL' },
  node: { what: 'the node URL', flag: '--node-url', env: 'AVALAKE_NODE_URL' },
} as const;

/** One line for a host declared unreachable: what failed, which configured URLs point at it, where to fix them. */
export function unreachableMessage(
  config: Pick<ExtractConfig, 'pipeline' | 'pipelinePath'>,
  host: { origin: string; error: string },
): string {
  const uses = (Object.keys(URL_SOURCES) as (keyof typeof URL_SOURCES)[])
    .filter((name) => new URL(config.pipeline.urls[name]).origin === host.origin)
    .map((name) => {
      const s = URL_SOURCES[name];
      return `${s.what} ${config.pipeline.urls[name]} (set by ${s.flag}, ${s.env} or "urls.${name}" in ${config.pipelinePath})`;
    });
  const where = uses.length > 0 ? ` It is ${uses.join(' and ')}.` : '';
  return `${host.error}${where} Its partitions failed, the other hosts' went on; checkpoints are kept.`;
}
