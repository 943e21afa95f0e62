import { STREAM_NAMES } from '../extract/streams/index.ts';
import { parseMaxAge } from '../warehouse/freshness.ts';
import { formatTable } from '../warehouse/sql.ts';
import { runWarehouseTests, type TestOutcome, type TestReport } from '../warehouse/test.ts';
import { lakeOption } from './catalog.ts';
import { EXIT } from './exit.js';
import { reportWarehouseError } from './sql.ts';

interface TestArgs {
  dataDir?: string;
  catalog?: string;
  localDir?: string;
  select?: string;
  models?: string;
  tests?: string;
  maxAge?: string[];
  json?: boolean;
}

const LABEL = { pass: 'PASS ', warn: 'WARN ', fail: 'FAIL ', error: 'ERROR', skip: 'SKIP ' } as const;

/**
 * One line a check; a failing one is followed by its first offending rows as a small table. Skips for
 * one reason are one line: the checks of a model not built, the freshness of the streams never
 * extracted (a pipeline that reads a few streams would otherwise bury its results under hundreds).
 */
export function formatTestReport(report: TestReport): string {
  const lines: string[] = [];
  // A skip's group: its reason, and for a model's checks, the model.
  const groupOf = (o: TestOutcome) => (o.kind === 'freshness' ? o.message : `${o.subject}\n${o.message}`);
  const skips = new Map<string, TestOutcome[]>();
  for (const o of report.outcomes) {
    if (o.status !== 'skip') continue;
    const group = skips.get(groupOf(o));
    if (group) group.push(o);
    else skips.set(groupOf(o), [o]);
  }
  for (const o of report.outcomes) {
    const group = o.status === 'skip' ? skips.get(groupOf(o)) : undefined;
    if (group && group.length > 1) {
      // Once, where the group's first skip stood.
      if (group[0] !== o) continue;
      const what =
        o.kind === 'freshness'
          ? `freshness of ${group.length} streams (${group.map((g) => g.subject).join(', ')})`
          : `${group.length} checks of ${o.subject}`;
      lines.push(`${LABEL.skip}  ${what}: ${o.message}`);
      continue;
    }
    lines.push(`${LABEL[o.status]}  ${o.name}${o.message ? `: ${o.message}` : ''}`);
    if (o.sample)
      lines.push(
        ...formatTable(o.sample, { maxCellWidth: 70 })
          .split('\n')
          .map((l) => `       ${l}`),
      );
  }
  lines.push(
    `${report.passed} passed, ${report.warned > 0 ? `${report.warned} warned, ` : ''}${report.failed} failed, ${report.errored} errors, ${report.skipped} skipped`,
  );
  return lines.join('\n');
}

/**
 * The whole command, returning its exit code: 0 when nothing failed (skips are not failures, nor are
 * warnings: partitions still catching up, checked within the maximum age).
 */
export async function test(
  args: TestArgs,
  now = Date.now(),
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  const lake = await lakeOption(args, env);
  if (typeof lake === 'number') return lake;
  try {
    const report = await runWarehouseTests({
      ...lake,
      ...(args.models !== undefined ? { modelsDir: args.models } : {}),
      ...(args.tests !== undefined ? { testsDir: args.tests } : {}),
      ...(args.select !== undefined ? { select: args.select } : {}),
      maxAge: parseMaxAge(args.maxAge ?? [], STREAM_NAMES),
      now,
    });
    process.stdout.write(`${args.json ? JSON.stringify(report) : formatTestReport(report)}\n`);
    return report.failed + report.errored > 0 ? EXIT.failed : EXIT.ok;
  } catch (error) {
    return reportWarehouseError(error);
  }
}
