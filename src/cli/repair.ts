import { repairCatalogLake, repairLake, type StreamRepair } from '../load/index.ts';
import { lakeOption } from './catalog.ts';
import { noLakeIn } from './data-dir.ts';
import { EXIT } from './exit.js';
import { lakeCommandExit } from './lake-failure.ts';
import { lakeStreamsFlag } from './lake-streams-flag.ts';
import { checkpointText, partitionText } from './status.ts';

export interface RepairArgs {
  dataDir?: string;
  catalog?: string;
  /** Comma-separated streams; default every stream of the lake. */
  streams?: string;
  dryRun?: boolean;
  wait?: boolean;
  json?: boolean;
}

/** What `repair --json` prints. */
export interface RepairReport {
  dataDir: string;
  /** `clean`: nothing to repair; `dry-run`: what a repair would do, nothing written. */
  status: 'repaired' | 'clean' | 'dry-run';
  streams: StreamRepair[];
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function fileLine(stream: string, d: StreamRepair['dropped'][number], dryRun: boolean): string {
  const found =
    d.foundBytes === null
      ? 'missing'
      : `${d.foundBytes} bytes where ${d.bytes} were committed; ${d.movedTo ? `moved to lake/${d.movedTo}` : 'to be moved to lake/_damaged/'}`;
  const held =
    d.table === 'confirmations'
      ? 'confirmations of unchanged snapshots, which cannot be read again'
      : `${d.rows} ${d.table === 'rejects' ? 'rejects' : 'rows'}`;
  return `${stream}: ${dryRun ? 'would drop' : 'dropped'} ${d.path} (${found}; it held ${held})`;
}

export function formatRepair(report: RepairReport): string {
  const dryRun = report.status === 'dry-run';
  if (report.streams.length === 0)
    return `nothing to repair in ${report.dataDir}: every file the commit log names is in place`;
  const lines: string[] = [];
  for (const s of report.streams) {
    for (const d of s.dropped) lines.push(fileLine(s.stream, d, dryRun));
    if (s.rewound.length > 0)
      lines.push(
        `${s.stream}: the next run ${dryRun ? 'would read' : 'reads'} ${plural(s.rewound.length, 'partition')} again from the start:`,
        ...s.rewound.map(
          (r) =>
            `  ${partitionText(r.partition)}  (checkpoint was ${checkpointText(r.checkpoint)}${r.by === 'folder' ? "; it writes into a dropped file's folder" : ''})`,
        ),
      );
  }
  const files = report.streams.reduce((n, s) => n + s.dropped.length, 0);
  const partitions = report.streams.reduce((n, s) => n + s.rewound.length, 0);
  const what = `${plural(files, 'file')} in ${plural(report.streams.length, 'stream')}`;
  lines.push(
    dryRun
      ? `nothing written (--dry-run): a repair would drop ${what} from the commit log and rewind ${plural(partitions, 'partition')}`
      : `repaired ${what}: the next "avalake run" (or extract) reads ${plural(partitions, 'partition')} again from the pipeline's start; ` +
          'what the source no longer has (older versions of a record, past snapshots) is not in the lake any more',
  );
  return lines.join('\n');
}

/**
 * `avalake repair`: drops damaged files from a lake's commit log (its own files, or a catalog's) and
 * rewinds their partitions. Exit 0 (repaired, or nothing to repair, or a dry run), 2 for an unknown
 * stream, no lake or a catalog over another lake, 75 when another run holds a local lake's lock, 1 for
 * a commit log that does not parse or a catalog that fails.
 */
export async function repair(
  args: RepairArgs,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  const lake = await lakeOption(args, env);
  if (typeof lake === 'number') return lake;
  const { dataDir, catalog } = lake;
  const noLake = await noLakeIn(dataDir);
  if (noLake) {
    process.stderr.write(`avalake: ${noLake}\n`);
    return EXIT.usage;
  }
  try {
    const flag = await lakeStreamsFlag(args.streams, dataDir, catalog);
    if ('refused' in flag) {
      process.stderr.write(`avalake: ${flag.refused}\n`);
      return EXIT.usage;
    }
    const { streams } = flag;
    const common = { dataDir, ...(streams ? { streams } : {}), ...(args.dryRun ? { dryRun: true } : {}) };
    // A catalog's workers are not waited for: each stream is repaired holding it alone in the catalog,
    // and a worker that read a partition before its rewind cannot commit over it.
    const repaired = catalog
      ? await repairCatalogLake({ ...common, catalog })
      : await repairLake({ ...common, lock: { wait: args.wait ?? false } });
    const report: RepairReport = {
      dataDir,
      status: args.dryRun ? 'dry-run' : repaired.length === 0 ? 'clean' : 'repaired',
      streams: repaired,
    };
    process.stdout.write(`${args.json ? JSON.stringify(report) : formatRepair(report)}\n`);
    return EXIT.ok;
  } catch (error) {
    const failed = lakeCommandExit(error, dataDir);
    if (failed !== undefined) return failed;
    throw error;
  }
}
