import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { aggregateCommand } from './aggregate.ts';
import { buildCommand } from './build.ts';
import { docsCommand } from './docs.ts';
import { emulatorCommand } from './emulator.ts';
import { UsageError } from './errors.ts';
import { EXIT } from './exit.ts';
import { exportCommand } from './export.ts';
import { extractCommand } from './extract.ts';
import { reportCommand } from './report.ts';
import { runCommand } from './run.ts';
import { sqlCommand } from './sql.ts';
import { statusCommand } from './status.ts';
import { testCommand } from './test.ts';
import { verifyMessageCommand } from './verify-message.ts';
import { VERSION } from './version.ts';

await yargs(hideBin(process.argv))
  .scriptName('avalake')
  .usage(
    '$0 <command> [options]\n\nMirror the Avalanche Data API, Metrics API and P-Chain RPC into a Parquet lake.',
  )
  .command(extractCommand)
  .command(buildCommand)
  .command(testCommand)
  .command(runCommand)
  .command(exportCommand)
  .command(sqlCommand)
  .command(reportCommand)
  .command(docsCommand)
  .command(statusCommand)
  .command(emulatorCommand)
  .command(aggregateCommand)
  .command(verifyMessageCommand)
  .demandCommand(1, 'Name a command; see the list above.')
  .strict()
  .version(VERSION)
  .alias('h', 'help')
  .wrap(Math.min(110, process.stdout.columns ?? 110))
  .fail((message, error) => {
    // A usage mistake is one line and exit 2; anything else is a bug and keeps its stack.
    if (error && !(error instanceof UsageError)) throw error;
    process.stderr.write(`avalake: ${error?.message ?? message}\nRun "avalake --help" for usage.\n`);
    process.exit(EXIT.usage);
  })
  .parseAsync();
