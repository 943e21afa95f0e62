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

const operands = operandsOf(hideBin(process.argv));
const parser = yargs(operands.args);
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
    // yargs reads `--no-X` as X=false, which reached commands as a value for flags that take text
    // (`--no-rate-limit`, `--no-data-dir`: "spec.split is not a function", a stack). avalake's boolean
    // flags are all off unless given, so there is no `--no-` form: such a flag is refused by name below.
    .parserConfiguration({ 'boolean-negation': false })
    // A flag given twice reaches a command as a list, where it takes one value (a cron wrapper adding its own
    // --data-dir to the line): refused as a usage error, exit 2, rather than failing later on a list. Both
    // checks run before yargs's own (`true`), so `--no-X` is named as such, not as an unknown argument.
    .middleware((argv) => {
      operands.restore(argv);
      // Only a `--` before the command's name is left to yargs (see operandsOf).
      if (argv['--'] !== undefined)
        throw usageError(
          'a lone -- goes after the command, before its argument: avalake <command> [options] -- <argument>',
        );
      const negated = Object.keys(argv).find((key) => key.startsWith('no-'));
      if (negated) {
        const flag = `--${negated.slice(3)}`;
        throw usageError(
          `--${negated}: avalake's flags have no --no- form; leave ${flag} out (a switch is off unless given), ` +
            `or give it a value (avalake ${argv._[0] ?? ''} --help lists them)`,
        );
      }
      // The options yargs holds as the middleware runs are the matched command's (getOptions is not typed).
      const bare = flagsWithoutValue(argv, /** @type {any} */ (parser).getOptions());
      if (bare.length > 0)
        throw usageError(
          `${bare.join(', ')} ${bare.length > 1 ? 'need values' : 'needs a value'}${positionalHint(bare, String(argv._[0] ?? ''))}; ` +
            `see avalake ${argv._[0] ?? ''} --help`,
        );
      const repeated = Object.keys(argv).filter(
        (key) => key !== '_' && !REPEATABLE_FLAGS.has(key) && !/[A-Z]/.test(key) && Array.isArray(argv[key]),
      );
      if (repeated.length === 0) return;
      throw usageError(
        `${repeated.map((key) => `--${key}`).join(', ')} given more than once; give each once`,
      );
    }, true)
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .fail((message, error) => usageMistake(message, error))
    .parseAsync();
} catch (error) {
  // The middleware's mistakes come out here, past .fail (thrown as yargs parses, before any promise).
  usageMistake(/** @type {Error} */ (error).message, /** @type {Error} */ (error));
}

/**
 * The words after a lone `--` are the command's positionals as written, whatever they start with
 * (`avalake sql -- "-- note\nselect 1"`). yargs keeps such words out of the positionals, on purpose
 * (yargs#2423: "Not enough non-option arguments"), so the `--` is taken out and each word after it is
 * handed to yargs as a stand-in it cannot read as a flag, then put back (`restore`, `text`) before any
 * check or command reads it. A stand-in holds a NUL, which no word of a command line can.
 * The stand-ins take the place of the `--`, ahead of any flags just before it: such a flag
 * (`--data-dir -- …`) is left without a value, as `--` ends the flags, rather than taking the first word
 * after it. Before the command's name, `--` is left to yargs (`avalake -- sql …` names no command).
 * @param {string[]} all the command line after `avalake`
 */
function operandsOf(all) {
  const end = all.indexOf('--');
  const names = new Set(COMMANDS.map((c) => String(c.command).split(' ')[0]));
  const command = all.findIndex((word, i) => i < end && names.has(word));
  if (command === -1) return { args: all, restore: () => {}, text: (/** @type {string} */ s) => s };
  const words = all.slice(end + 1);
  let at = end;
  while (at > command + 1 && all[at - 1]?.startsWith('-')) at -= 1;
  const STAND_IN = /\0avalake-operand-(\d+)\0/g;
  /** @param {string} s */
  const text = (s) => s.replace(STAND_IN, (_, i) => words[Number(i)] ?? '');
  /** @param {unknown} value @returns {unknown} */
  const original = (value) =>
    typeof value === 'string' ? text(value) : Array.isArray(value) ? value.map(original) : value;
  return {
    args: [...all.slice(0, at), ...words.map((_, i) => `\0avalake-operand-${i}\0`), ...all.slice(at, end)],
    /** @param {Record<string, unknown>} argv */
    restore: (argv) => {
      for (const key of Object.keys(argv)) argv[key] = original(argv[key]);
    },
    text,
  };
}

/**
 * The text flags given without a value: nothing after them (`--pipeline --data-dir x`, `--scale` last),
 * nothing after their `=` (`--data-dir=`, a wrapper's `--data-dir="$UNSET"`) or an empty word
 * (`--data-dir ""`), in either spelling yargs accepts (`--dataDir`). yargs gives such a flag its default,
 * or the empty string, which commands took for a value (the emulator ran at its defaults, `status` read
 * the current folder). Each is named once, in its kebab form, as --help lists it. An empty value stays
 * where it is the flag's default written out (`--faults ""`), and so does one that starts with a dash
 * where yargs took it as the value (`--max-age -1h`, which the command then judges).
 * @param {Record<string, unknown>} argv
 * @param {{ string: string[], choices?: Record<string, unknown[]>, default: Record<string, unknown> }} options
 *   the command's: `string` lists the flags that take a value, `choices` those that take one of a few
 */
function flagsWithoutValue(argv, options) {
  const all = hideBin(process.argv);
  // What follows a lone `--` is not options (the text of `avalake sql -- …`).
  const tokens = all.includes('--') ? all.slice(0, all.indexOf('--')) : all;
  const bare = tokens.flatMap((token, i) => {
    const [, name, written] = /^--([a-z][a-zA-Z0-9-]*)(?:=(.*))?$/s.exec(token) ?? [];
    const key = name === undefined ? undefined : kebab(name);
    // A choice flag too (`--format`, `--log-format`): with nothing after it, yargs lets it pass empty.
    if (key === undefined || !(options.string.includes(key) || key in (options.choices ?? {}))) return [];
    const value = written ?? wordTaken(tokens[i + 1], argv[key]);
    const missing = value === undefined || (value === '' && options.default[key] !== '');
    return missing ? [`--${key}`] : [];
  });
  return [...new Set(bare)];
}

/**
 * The flags among `bare` that are the command's positionals (yargs reads `--pipeline x` too), said as
 * --help shows them: under Positionals, a word after the command (`avalake extract [pipeline]`).
 * @param {string[]} bare the flags without a value, `--name`
 * @param {string} name the command's
 */
function positionalHint(bare, name) {
  const usage = String(COMMANDS.find((c) => String(c.command).split(' ')[0] === name)?.command ?? '');
  const shown = [...usage.matchAll(/[[<]([a-z][a-z0-9-]*)[\]>]/g)]
    .filter(([, key]) => bare.includes(`--${key}`))
    .map(([, key]) => `the ${key} is a positional, written after the command without a flag`);
  return shown.length === 0 ? '' : `: ${shown.join('; ')} (avalake ${usage})`;
}

/**
 * The word after a flag written without `=`, if yargs took it as the flag's value: a word that starts
 * with a dash is taken only when it is not itself a flag (`-1h`, `-`).
 * @param {string | undefined} next
 * @param {unknown} parsed what yargs made of the flag (a list when it was given more than once)
 */
function wordTaken(next, parsed) {
  if (next === undefined) return undefined;
  const taken = !next.startsWith('-') || next === '-' || [parsed].flat().map(String).includes(next);
  return taken ? next : undefined;
}

/**
 * A mistake found as the command line is read, reported as usageMistake reports a command's own.
 * @param {string} message
 */
function usageError(message) {
  const error = new Error(message);
  error.name = 'UsageError';
  return error;
}

/**
 * A usage mistake (UsageError, src/cli/errors.ts) is one line and exit 2; anything else is a bug and keeps
 * its stack. By name: its class is TypeScript, which this file does not load. A YError is yargs's own
 * (an unknown flag, a value outside a flag's choices, a missing positional).
 * @param {string} message
 * @param {Error | undefined} error
 */
function usageMistake(message, error) {
  if (error && error.name !== 'UsageError' && error.name !== 'YError') throw error;
  const said = withoutCamelCase(operands.text(error?.message ?? message));
  process.stderr.write(`avalake: ${positionalMissing(said) ?? said}\nRun "avalake --help" for usage.\n`);
  process.exit(EXIT.usage);
}

/**
 * yargs's "Not enough non-option arguments: got 0, need at least 1" for `avalake sql` with no query,
 * said as --help shows the command: `the sql command needs its <query> argument: avalake sql <query>`.
 * @param {string} message
 */
function positionalMissing(message) {
  if (!message.startsWith('Not enough non-option arguments')) return undefined;
  const names = new Map(COMMANDS.map((c) => [String(c.command).split(' ')[0], String(c.command)]));
  const usage = hideBin(process.argv)
    .map((word) => names.get(word))
    .find((found) => found !== undefined);
  const needed = usage?.match(/<[a-z][a-z0-9-]*>/g);
  if (!usage || !needed) return undefined;
  const name = usage.split(' ')[0];
  return `the ${name} command needs its ${needed.join(' ')} argument: avalake ${usage}; see avalake ${name} --help`;
}

/**
 * yargs names an unknown flag twice, as written and camel-cased ("Unknown arguments: log-format,
 * logFormat"): the camel-cased copy, which nobody typed, is left out.
 * @param {string} message
 */
function withoutCamelCase(message) {
  const list = /^Unknown arguments?: (.*)$/.exec(message)?.[1];
  if (list === undefined) return message;
  const names = list.split(', ');
  const typed = names.filter((name) => !/[A-Z]/.test(name) || !names.includes(kebab(name)));
  return `Unknown argument${typed.length > 1 ? 's' : ''}: ${typed.join(', ')}`;
}

/** @param {string} name */
function kebab(name) {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
