import { join } from 'node:path';
import { writeReport } from '../report/report.ts';
import { warehouseDirOf } from './data-dir.ts';
import { EXIT } from './exit.js';
import { reportWarehouseError } from './sql.ts';

interface ReportArgs {
  dataDir?: string;
  out?: string;
  network?: string;
}

/** The whole command, returning its exit code. */
export async function report(
  args: ReportArgs,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const dataDir = warehouseDirOf(args.dataDir, env);
  try {
    const summary = await writeReport({
      dataDir,
      out: args.out ?? join(dataDir, 'report.html'),
      ...(args.network === undefined ? {} : { network: args.network }),
    });
    const empty = summary.charts.filter((c) => c.points === 0).map((c) => c.id);
    process.stderr.write(
      `avalake: wrote ${summary.path} (${summary.charts.length - empty.length} of ${summary.charts.length} charts with data${
        empty.length > 0 ? `; none for ${empty.join(', ')}` : ''
      })\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return reportWarehouseError(error);
  }
}
