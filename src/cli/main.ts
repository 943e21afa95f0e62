import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { emulatorCommand } from './emulator.ts';
import { UsageError } from './errors.ts';
import { VERSION } from './version.ts';

/** Exit codes of DESIGN.md. */
export const EXIT = { ok: 0, failed: 1, usage: 2, partial: 3, locked: 75, interrupted: 130 } as const;

await yargs(hideBin(process.argv))
  .scriptName('avalake')
  .usage(
    '$0 <command> [options]\n\nMirror the Avalanche Data API, Metrics API and P-Chain RPC into a Parquet lake.',
  )
  .command(emulatorCommand)
  .demandCommand(1, 'Name a command; see the list above.')
  .strict()
  .version(VERSION)
  .alias('h', 'help')
  .wrap(Math.min(110, process.stdout.columns ?? 110))
  .fail((message, error, y) => {
    if (error && !(error instanceof UsageError)) throw error;
    process.stderr.write(
      `${y.help() && ''}avalake: ${error?.message ?? message}\nRun "avalake --help" for usage.\n`,
    );
    process.exit(EXIT.usage);
  })
  .parseAsync();
