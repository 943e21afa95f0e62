// @ts-check
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { COMMANDS, REPEATABLE_FLAGS } from './commands.js';
import { EXIT } from './exit.js';
import { holdSignals } from './held-signals.js';
import { VERSION } from './version.js';

holdSignals();
// A reader gone away (`avalake run … | head -1`, a log collector that died) does not stop a run: what
// it would have been shown is dropped, and the run goes on to commit its work and exit as it would.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error) => {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EPIPE') throw error;
  });

const parser = yargs(hideBin(process.argv));
// yargs renders the matched command's whole help page as its handler starts, in case the handler asks
// for it (avalake's never do): 50-60 ms of every command, spent in string-width's segmenting of each
// character. `--help` and usage errors render their own page as before. The usage instance is yargs's
// internal (bundled at a fixed version); should it move, this line does nothing.
const usage = /** @type {any} */ (parser).getInternalMethods?.()?.getUsageInstance?.();
if (typeof usage?.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};

// Note: plain JavaScript, and only the command table is imported here: each command registers the
// TypeScript loader and loads its own modules when it runs, so `--help` and `--version` stay fast.
try {
  await parser
    .scriptName('avalake')
    .usage(
      '$0 <command> [options]\n\nMirror the Avalanche Data API, Metrics API and P-Chain RPC into a Parquet lake.',
    )
    .command(COMMANDS)
    .demandCommand(1, 'Name a command; see the list above.')
    .strict()
    .version(VERSION)
    .alias('h', 'help')
    // avalake's descriptions and messages are English: yargs's own words (Options:, Show help) are kept in
    // English too, not translated by LANG into a page of two languages. The built CLI bundles yargs without
    // its locale files, so this also keeps the built CLI and the source one alike.
    .locale('en')
    // A flag given twice reaches a command as a list, where it takes one value (a cron wrapper adding its own
    // --data-dir to the line): refused as a usage error, exit 2, rather than failing later on a list.
    .middleware((argv) => {
      const repeated = Object.keys(argv).filter(
        (key) => key !== '_' && !REPEATABLE_FLAGS.has(key) && !/[A-Z]/.test(key) && Array.isArray(argv[key]),
      );
      if (repeated.length === 0) return;
      const error = new Error(
        `${repeated.map((key) => `--${key}`).join(', ')} given more than once; give each once`,
      );
      error.name = 'UsageError';
      throw error;
    })
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .fail((message, error) => usageMistake(message, error))
    .parseAsync();
} catch (error) {
  // The middleware's mistakes come out here, past .fail (thrown as yargs parses, before any promise).
  usageMistake(/** @type {Error} */ (error).message, /** @type {Error} */ (error));
}

/**
 * A usage mistake (UsageError, src/cli/errors.ts) is one line and exit 2; anything else is a bug and keeps
 * its stack. By name: its class is TypeScript, which this file does not load. A YError is yargs's own,
 * for a flag without its value ("Not enough arguments following: retries").
 * @param {string} message
 * @param {Error | undefined} error
 */
function usageMistake(message, error) {
  if (error && error.name !== 'UsageError' && error.name !== 'YError') throw error;
  process.stderr.write(`avalake: ${error?.message ?? message}\nRun "avalake --help" for usage.\n`);
  process.exit(EXIT.usage);
}
