// @ts-check

/**
 * Every command's name, description and flags, and nothing else: `avalake --help` and `--version` load this
 * file and yargs only. A command's module (and with it DuckDB, Arrow, the emulator, the BLS curves) is
 * imported when that command runs.
 *
 * Note: plain JavaScript (checked by tsc through JSDoc), like main.js, so that `--help` and `--version` do
 * not pay for the TypeScript loader; it is registered only when a command's module is first imported.
 */

import { processLimitOf, processLimitReason } from '../load/process-limits.js';
import { EXIT } from './exit.js';
import { releaseSignals } from './held-signals.js';

export const WARP_NETWORKS = /** @type {const} */ (['mainnet', 'fuji', 'testnet']);

/** @type {Promise<void> | undefined} */
let typescript;

/**
 * The TypeScript loader, registered once, before the first command module is imported; none when this
 * runs built (scripts/build.ts defines __AVALAKE_BUILT__), where every module is JavaScript already.
 */
const loadTypeScript = () => {
  if (typeof __AVALAKE_BUILT__ !== 'undefined') return Promise.resolve();
  typescript ??= import('tsx/esm/api').then(({ register }) => {
    register();
  });
  return typescript;
};

/**
 * A handler that imports its module on first use; the command's exit code becomes the process's.
 * yargs has checked the flags against the builder, which is what the command's args type describes.
 * A signal that came while the module loaded (held since main.js began) is handed over once the command
 * has started, so that a command with handlers of its own, set before its first await, receives it.
 * @param {() => Promise<(args: any, env: NodeJS.ProcessEnv) => Promise<number | undefined>>} load
 */
function lazy(load) {
  /** @param {unknown} args */
  return async (args) => {
    let command;
    try {
      await loadTypeScript();
      command = await load();
    } catch (error) {
      // The module loader reads a command's files all at once: a low `ulimit -n` fails it here, before
      // the command began, so nothing was written.
      if (!limitStopped(error, 'avalake stopped as it loaded, before it read or wrote anything')) throw error;
      process.exitCode = EXIT.usage;
      return;
    }
    const running = command(args, process.env);
    releaseSignals();
    try {
      const code = await running;
      if (code !== undefined) process.exitCode = code;
    } catch (error) {
      // A command that does not name such a failure itself (status, sql…): it may have begun, so 1.
      if (!limitStopped(error, 'the command stopped')) throw error;
      process.exitCode = EXIT.failed;
    }
  };
}

/**
 * Whether `error` is a limit of the process (open files, virtual memory), which is then said in one line
 * with what became of the command (`outcome`).
 * @param {unknown} error
 * @param {string} outcome
 */
function limitStopped(error, outcome) {
  const limit = processLimitOf(error);
  if (limit === undefined) return false;
  process.stderr.write(`avalake: ${processLimitReason(limit)}; ${outcome}\n`);
  return true;
}

/**
 * A mistake in how avalake was called, as main.js's fail handler recognises it (by name: the UsageError
 * class is TypeScript, not loaded here): one line, exit 2.
 * @param {string} message
 */
const usageError = (message) => Object.assign(new Error(message), { name: 'UsageError' });

/** Flags that may be given more than once (repeatedValue): any other, repeated, is a usage mistake. */
export const REPEATABLE_FLAGS = new Set(['max-age']);

/**
 * A flag that takes a value and may be repeated; `nargs` (not `array`) so that `-1h` is taken as its
 * value rather than split into the flags `-1 -h` (which printed the help and exited 0).
 * @param {string} describe
 */
const repeatedValue = (describe) =>
  /** @type {const} */ ({
    type: 'string',
    requiresArg: true,
    describe,
    coerce: (/** @type {string | string[]} */ value) => [value].flat(),
  });

/**
 * Durations count back from now (`--max-age`) or forward (`--build-wait`): a negative one is a typo.
 * @param {Record<string, unknown>} argv
 */
function noNegativeDuration(argv) {
  for (const flag of ['max-age', 'build-wait']) {
    for (const value of [argv[flag] ?? []].flat()) {
      const text = String(value);
      const duration = text.slice(text.indexOf('=') + 1).trim(); // after `stream=`, if any
      if (duration.startsWith('-'))
        throw usageError(
          `--${flag} ${text}: a duration cannot be negative; write how long, e.g. ${flag === 'max-age' ? '24h or metrics=2d' : '30m or 0s'}`,
        );
    }
  }
  return true;
}

/** The extract's flags; `run` takes all of them too. */
/** @param {import('yargs').Argv} y */
const extractOptions = (y) =>
  y
    .positional('pipeline', { type: 'string', describe: 'Pipeline file (default pipelines/demo.json)' })
    .option('streams', {
      type: 'string',
      describe: 'Comma-separated streams to run (default: all the pipeline feeds)',
    })
    .option('data-dir', {
      type: 'string',
      describe:
        'Data directory (default data), or s3://bucket/prefix for a lake on object storage (needs --catalog)',
    })
    .option('base-url', { type: 'string', describe: 'Data API base URL' })
    .option('metrics-url', { type: 'string', describe: 'Metrics API base URL' })
    .option('node-url', { type: 'string', describe: 'Node base URL ({node}/ext/bc/P)' })
    .option('api-key', {
      type: 'string',
      requiresArg: true,
      describe: 'Data API key (prefer AVALAKE_API_KEY)',
    })
    .option('full-refresh', { type: 'boolean', describe: 'Ignore checkpoints and read everything again' })
    .option('wait', { type: 'boolean', describe: 'Wait for another run holding the data directory' })
    .option('retries', {
      // A string, so that a mistake is shown as typed (yargs makes "abc" NaN); config.ts checks it.
      type: 'string',
      requiresArg: true,
      describe: 'Attempts after the first for a 429, 5xx or dropped connection (default 8; AVALAKE_RETRIES)',
    })
    .option('catalog', catalogOption)
    .option('local-dir', localDirOption)
    .option('json', { type: 'boolean', describe: 'Print the run summary as JSON' })
    .option('log-format', { choices: ['json', 'pretty'], describe: 'Log lines on stderr' })
    .option('quiet', { type: 'boolean', describe: 'Only warnings and errors' })
    .option('verbose', { type: 'boolean', describe: 'Debug events too' })
    .check((argv) => {
      if (argv.quiet && argv.verbose)
        throw usageError('--quiet and --verbose contradict each other: pass one of them, or neither');
      return true;
    });

const selectOption = /** @type {const} */ ({
  type: 'string',
  describe: 'Only these models: name, name+ (and downstream), +name',
});
// No yargs default: an unset flag falls back to AVALAKE_DATA_DIR, then data (src/cli/data-dir.ts).
const dataDirOption = /** @type {const} */ ({
  type: 'string',
  describe:
    'Data directory (default AVALAKE_DATA_DIR, else data), or s3://bucket/prefix for a lake on object storage (needs --catalog)',
});
const localDirOption = /** @type {const} */ ({
  type: 'string',
  describe:
    'With an s3:// data directory: the local directory of the warehouse and the lake mirror it is built from (default data; AVALAKE_LOCAL_DIR)',
});
const catalogOption = /** @type {const} */ ({
  type: 'string',
  describe: 'PostgreSQL catalog of a lake shared by several workers, postgres://… (AVALAKE_CATALOG)',
});
const modelsOption = /** @type {const} */ ({
  type: 'string',
  describe:
    'Folder of the models (default sql/models in the working directory, else the models avalake ships)',
});

const testsOption = /** @type {const} */ ({
  type: 'string',
  describe: 'Folder of the SQL tests (default sql/tests beside the models)',
});

/** @type {import('yargs').CommandModule[]} */
export const COMMANDS = [
  {
    command: 'extract [pipeline]',
    describe: 'Mirror the streams of a pipeline into the Parquet lake, from where the last run stopped',
    builder: extractOptions,
    handler: lazy(async () => (await import('./extract.ts')).extract),
  },
  {
    command: 'build',
    describe: 'Build the SQL models into data/warehouse.duckdb, aside, then swap it in',
    builder: (y) =>
      y
        .option('data-dir', dataDirOption)
        .option('catalog', catalogOption)
        .option('local-dir', localDirOption)
        .option('select', selectOption)
        .option('models', modelsOption)
        .option('json', { type: 'boolean', describe: 'Print the result as JSON' })
        .option('wait', { type: 'boolean', describe: 'Wait for another build of the warehouse to finish' }),
    handler: lazy(async () => (await import('./build.ts')).build),
  },
  {
    command: 'test',
    describe: 'Check the warehouse: keys, not-null and accepted values, freshness per partition, sql/tests',
    builder: (y) =>
      y
        .option('data-dir', dataDirOption)
        .option('catalog', catalogOption)
        .option('local-dir', localDirOption)
        .option('select', selectOption)
        .option('models', modelsOption)
        .option('tests', testsOption)
        .option(
          'max-age',
          repeatedValue(
            "How long ago each partition may have been read, and read up to the source's head, last: 24h (default), or stream=2d for one stream",
          ),
        )
        .option('json', { type: 'boolean', describe: 'Print the report as JSON' })
        .check(noNegativeDuration),
    // Note: test() takes a clock as its second parameter, not the environment.
    handler: lazy(async () => {
      const { test } = await import('./test.ts');
      return (/** @type {Parameters<typeof test>[0]} */ args, /** @type {NodeJS.ProcessEnv} */ env) =>
        test(args, Date.now(), env);
    }),
  },
  {
    command: 'run [pipeline]',
    describe: 'Extract, build the warehouse and test it, in that order: the one command for cron',
    builder: (y) =>
      extractOptions(y)
        .option('models', modelsOption)
        .option('tests', testsOption)
        .option(
          'max-age',
          repeatedValue(
            "How long ago each partition may have been read, and read up to the source's head, last before freshness fails (or, still catching up, warns): 24h (default), stream=2d",
          ),
        )
        .option('build-wait', {
          type: 'string',
          requiresArg: true,
          describe:
            'How long the build waits for another build of the warehouse before exit 75: 30m (default), 0s',
        })
        .check(noNegativeDuration),
    handler: lazy(async () => (await import('./run.ts')).run),
  },
  {
    command: 'export <model>',
    describe: 'Copy a model out of the warehouse as Parquet or CSV, for BI tools',
    builder: (y) =>
      y
        .positional('model', { type: 'string', describe: 'A table or view of the warehouse' })
        .option('format', {
          choices: ['parquet', 'csv'],
          default: 'parquet',
          describe: 'File format',
        })
        .option('out', {
          type: 'string',
          demandOption: true,
          describe: 'File to write (a folder with --partition-by)',
        })
        .option('partition-by', {
          type: 'string',
          describe: 'Write a folder with one col=value/ subfolder per value',
        })
        .option('data-dir', dataDirOption)
        .option('json', { type: 'boolean', describe: 'Print the result as JSON' }),
    handler: lazy(async () => (await import('./export.ts')).exportCommandRun),
  },
  {
    command: 'sql <query>',
    describe: 'Run a query on the warehouse (read-only) and print the answer',
    builder: (y) =>
      y
        .positional('query', { type: 'string', describe: 'SQL, e.g. "select * from stg_rewards limit 5"' })
        .option('data-dir', dataDirOption)
        .option('format', {
          choices: ['table', 'csv', 'json'],
          default: 'table',
          describe: 'Output: a text table, CSV with a header, or a JSON array of rows',
        }),
    handler: lazy(async () => (await import('./sql.ts')).sql),
  },
  {
    command: 'report',
    describe: 'Write one self-contained HTML page of charts from the marts (reads the warehouse read-only)',
    builder: (y) =>
      y
        .option('data-dir', dataDirOption)
        .option('out', {
          type: 'string',
          describe: 'The HTML file to write (default: <data-dir>/report.html)',
        })
        .option('network', {
          type: 'string',
          describe: 'mainnet or fuji, when the warehouse holds both (default: the only one, else mainnet)',
        }),
    handler: lazy(async () => (await import('./report.ts')).report),
  },
  {
    command: 'docs',
    describe: 'Write the data dictionary (docs/data-dictionary.md) from the models and the built warehouse',
    builder: (y) =>
      y
        .option('data-dir', { ...dataDirOption, describe: 'Data directory of the built warehouse' })
        .option('models', modelsOption)
        .option('out', { type: 'string', describe: 'File to write (default docs/data-dictionary.md)' })
        .option('check', { type: 'boolean', describe: 'Write nothing; exit 1 if the file is out of date' }),
    handler: lazy(async () => (await import('./docs.ts')).docs),
  },
  {
    command: 'compact',
    describe:
      'Merge small Parquet files of the lake into large ones, as a commit of their own (run does it when due)',
    builder: (y) =>
      y
        .option('data-dir', dataDirOption)
        .option('catalog', catalogOption)
        .option('local-dir', localDirOption)
        .option('streams', { type: 'string', describe: 'Comma-separated streams (default: every stream)' })
        .option('wait', { type: 'boolean', describe: 'Wait for another run holding the data directory' })
        .option('json', { type: 'boolean', describe: 'Print the result as JSON' }),
    handler: lazy(async () => (await import('./compact.ts')).compact),
  },
  {
    command: 'repair',
    describe:
      'Drop lake files deleted or cut short by hand from the commit log, and rewind their partitions so the next run reads those rows again',
    builder: (y) =>
      y
        .option('data-dir', dataDirOption)
        .option('catalog', catalogOption)
        .option('streams', { type: 'string', describe: 'Comma-separated streams (default: every stream)' })
        .option('dry-run', { type: 'boolean', describe: 'Say what it would drop and rewind; write nothing' })
        .option('wait', { type: 'boolean', describe: 'Wait for another run holding the data directory' })
        .option('json', { type: 'boolean', describe: 'Print the result as JSON' }),
    handler: lazy(async () => (await import('./repair.ts')).repair),
  },
  {
    command: 'catalog-import',
    describe:
      "Move a local lake's commit log into a PostgreSQL catalog, so workers on several machines go on from where it stands",
    builder: (y) =>
      y
        .option('data-dir', dataDirOption)
        .option('catalog', {
          ...catalogOption,
          describe: 'The PostgreSQL catalog to move it into, postgres://… (AVALAKE_CATALOG)',
        })
        .option('to', {
          type: 'string',
          describe: "Move the lake's files to object storage too, s3://bucket/prefix (then work there)",
        })
        .option('json', { type: 'boolean', describe: 'Print the result as JSON' }),
    handler: lazy(async () => (await import('./catalog-import.ts')).catalogImport),
  },
  {
    command: 'status',
    describe: 'Where each stream and partition stands: last commit, checkpoint, rows, rejects, freshness',
    builder: (y) =>
      y
        .option('data-dir', {
          type: 'string',
          describe: 'Data directory, or s3://bucket/prefix with --catalog (default data; AVALAKE_DATA_DIR)',
        })
        .option('catalog', catalogOption)
        .option('json', { type: 'boolean', describe: 'Print JSON instead of a table' }),
    handler: lazy(async () => {
      const { status } = await import('./status.ts');
      return (/** @type {Parameters<typeof status>[0]} */ args, /** @type {NodeJS.ProcessEnv} */ env) =>
        status(args, env);
    }),
  },
  {
    command: 'emulator',
    describe: 'Serve the Data API, Metrics API and P-Chain RPC locally from one port',
    builder: (y) =>
      y
        .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
        // Numbers as strings, so that a mistake is shown as typed (yargs makes "abc" NaN).
        .option('port', { type: 'string', default: '0', describe: 'Port; 0 picks any free one' })
        .option('seed', {
          type: 'string',
          default: '1',
          describe: 'World seed: the same seed gives the same world',
        })
        .option('scale', { type: 'string', default: 'small', describe: 'World size: small, medium or large' })
        .option('faults', {
          type: 'string',
          default: '',
          describe: 'Injected faults, e.g. "429=0.1,500=0.02,reset=0.01,truncate=0.01,slow=0.02:3000"',
        })
        .option('rate-limit', {
          type: 'string',
          default: 'on',
          describe: 'on (published CU allowances), off, or e.g. "minute=1,day=60,scale=0.1"',
        })
        .option('clock', {
          type: 'string',
          default: 'real',
          describe: 'real, fixed:<unix seconds> or speed:<factor>',
        })
        .option('genesis', {
          type: 'string',
          default: '',
          describe:
            "UTC day the world begins (YYYY-MM-DD); default: the scale's history before the clock's day. Pass the day an earlier start printed to serve its world again",
        })
        .option('keys', {
          type: 'string',
          default: '',
          describe:
            'Known API keys, e.g. "KEY:pro,KEY2:free:deny=/v1/signatureAggregator" (or set AVALAKE_EMULATOR_KEYS, kept off the command line)',
        }),
    handler: lazy(async () => {
      const { serveEmulator } = await import('./emulator.ts');
      return async (/** @type {Parameters<typeof serveEmulator>[0]} */ args) => {
        await serveEmulator(args);
        return undefined;
      };
    }),
  },
  {
    command: 'aggregate',
    describe:
      'Have the Data API aggregate validator signatures over a Warp message; print it signed and decoded',
    builder: (y) =>
      y
        .option('network', { choices: WARP_NETWORKS, demandOption: true, describe: 'Network of the message' })
        .option('message', {
          type: 'string',
          describe: 'Unsigned Warp message, hex (or SendWarpMessage log data)',
        })
        .option('justification', { type: 'string', describe: 'Justification for the validators, hex' })
        // Numbers as strings, so that a mistake is shown as typed (yargs makes "abc" NaN).
        .option('quorum', {
          type: 'string',
          requiresArg: true,
          describe: "Percentage of the signing subnet's weight required (service default 67)",
        })
        .option('buffer', {
          type: 'string',
          requiresArg: true,
          describe: 'Extra weight percentage to attempt beyond the quorum',
        })
        .option('p-chain-height', {
          type: 'string',
          requiresArg: true,
          describe: 'Validator set at this P-Chain height (0 = current)',
        })
        .option('signing-subnet', {
          type: 'string',
          describe: "Signing subnet id (default: the source chain's subnet)",
        })
        .option('base-url', { type: 'string', describe: 'Data API base URL (default: the public Data API)' })
        .option('node-url', {
          type: 'string',
          describe:
            'Node to read validator weights from for the decoded view (default: the network’s public node)',
        })
        .option('api-key', {
          type: 'string',
          requiresArg: true,
          describe: 'Data API key (default: $AVALAKE_API_KEY); never printed',
        }),
    handler: lazy(async () => (await import('./aggregate.ts')).aggregate),
  },
  {
    command: 'verify-message <hex>',
    describe:
      'Check a signed Warp message against the current validator set from a node (exit 0 valid, 1 invalid)',
    builder: (y) =>
      y
        .positional('hex', {
          type: 'string',
          demandOption: true,
          describe: 'The signed message, hex (0x optional)',
        })
        .option('network', { choices: WARP_NETWORKS, demandOption: true, describe: 'Network of the message' })
        .option('node-url', {
          type: 'string',
          describe:
            'Node whose P-Chain RPC gives the validators (default: the public API node of the network)',
        })
        .option('quorum', {
          type: 'string',
          requiresArg: true,
          describe: "Percentage of the signing subnet's weight that must have signed (default 67)",
        })
        .option('signing-subnet', {
          type: 'string',
          describe: "Subnet whose validators signed (default: the source chain's subnet)",
        }),
    handler: lazy(async () => (await import('./verify-message.ts')).verifyMessage),
  },
];
