import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce, fewMetrics } from '../helpers/extract.ts';
import { type CliResult, runCli } from '../helpers/output.ts';

/**
 * Mistakes in how the warehouse commands (build, compact, export, report, docs, test, sql) and the
 * emulator are called: one line that names the input, what was expected and how to fix it; exit 2 (1
 * for a damaged warehouse); no stack trace; nothing created or half-written.
 */

const STACK = /^\s+at\s.+(:\d+:\d+\)?|<anonymous>)$/m;

let dir: string;
/** A data directory with a lake (core streams) and its built warehouse. */
let built: string;
/** A regular file, to name where a folder is expected. */
let file: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'avalake-mistakes-'));
  file = join(dir, 'a-file');
  writeFileSync(file, 'not a folder\n');
  const emulator = await startEmulator();
  try {
    const w = coreWorkspace(emulator, fewMetrics);
    built = join(dir, 'built');
    await extractOnce(w.pipelinePath, built);
    rmSync(w.dir, { recursive: true, force: true });
  } finally {
    await emulator.close();
  }
  const build = await runCli(['build', '--data-dir', built]);
  expect(build.code, build.stderr).toBe(0);
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the built lake (its links to the current generation stay relative, so point into the copy). */
const copyLake = (to: string) =>
  cpSync(join(built, 'lake'), join(to, 'lake'), { recursive: true, verbatimSymlinks: true });

/** One line on stderr matching every pattern, the exit code wanted, and no stack trace. */
function expectRefused(result: CliResult, code: number, ...patterns: RegExp[]) {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stderr).not.toMatch(STACK);
  for (const pattern of patterns) expect(result.stderr).toMatch(pattern);
}

describe('a data directory with no lake, or not a directory: build and compact refuse it, creating nothing', () => {
  it('a mistyped --data-dir is not created', async () => {
    const missing = join(dir, 'nonexistent3');
    const [build, compact] = await Promise.all([
      runCli(['build', '--data-dir', missing]),
      runCli(['compact', '--data-dir', missing]),
    ]);
    for (const result of [build, compact])
      expectRefused(result, 2, /nothing extracted yet into .*nonexistent3: no lake there/, /avalake extract/);
    expect(existsSync(missing)).toBe(false);
  });

  it('an empty directory stays empty', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    expectRefused(await runCli(['build', '--data-dir', empty]), 2, /nothing extracted yet/);
    expect(readdirSync(empty)).toEqual([]);
  });

  it('a regular file as --data-dir: no ENOTDIR stack', async () => {
    const [build, compact] = await Promise.all([
      runCli(['build', '--data-dir', file]),
      runCli(['compact', '--data-dir', file]),
    ]);
    for (const result of [build, compact])
      expectRefused(result, 2, /a-file is not a directory; name the data directory with --data-dir/);
  });

  it('a lake without a warehouse still builds', async () => {
    const lakeOnly = join(dir, 'lake-only');
    copyLake(lakeOnly);
    const build = await runCli(['build', '--data-dir', lakeOnly]);
    expect(build.code, build.stderr).toBe(0);
    expect(existsSync(join(lakeOnly, 'warehouse.duckdb'))).toBe(true);
  });
});

describe('the emulator: a port in use, an unknown host, text for a number', () => {
  let busy: Server;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it('exit 2 naming the flag and what to do instead', async () => {
    const port = (busy.address() as { port: number }).port;
    const [inUse, host, text, seed] = await Promise.all([
      runCli(['emulator', '--port', String(port)]),
      runCli(['emulator', '--host', 'example.invalid']),
      runCli(['emulator', '--port', 'abc']),
      runCli(['emulator', '--seed=abc']),
    ]);
    expectRefused(inUse, 2, new RegExp(`--port ${port} is in use.*choose another or --port 0`));
    expectRefused(host, 2, /--host example\.invalid: no such host; use an address of this machine/);
    expectRefused(text, 2, /--port: expected 0\.\.65535.*got "abc"/);
    expectRefused(seed, 2, /--seed: expected a non-negative integer, got "abc"/);
    for (const result of [text, seed]) expect(result.stderr).not.toContain('NaN');
  });
});

describe('--out that cannot be written: exit 2 naming --out, never a temporary file', () => {
  const run = (command: string[], out: string) => runCli([...command, '--data-dir', built, '--out', out]);
  const EXPORT = ['export', 'stg_rewards'];
  const REPORT = ['report'];
  const DOCS = ['docs'];

  it('under a regular file', async () => {
    const results = await Promise.all([
      run(EXPORT, join(file, 'e.parquet')),
      run(REPORT, join(file, 'r.html')),
      run(DOCS, join(file, 'd.md')),
    ]);
    for (const result of results)
      expectRefused(result, 2, /--out .*a-file\/\S+: .*a-file is a file, not a folder; choose another --out/);
  });

  it('a folder, or empty', async () => {
    const results = await Promise.all([
      run(EXPORT, dir),
      run(REPORT, dir),
      run(DOCS, dir),
      run([...DOCS, '--check'], dir),
    ]);
    for (const result of results) expectRefused(result, 2, /--out .* is a folder; name a file/);
    // Checked against a file that is not there: it is not "out of date", it is missing.
    const missing = await run([...DOCS, '--check'], join(dir, 'no-dictionary.md'));
    expectRefused(
      missing,
      1,
      /no-dictionary\.md does not exist; run "avalake docs" to write it, and commit it/,
    );
    // An empty word is refused as a flag without its value, before the command reads it; blanks by the command.
    const empty = await Promise.all([run(EXPORT, ''), run(REPORT, '')]);
    for (const result of empty)
      expectRefused(result, 2, /--out needs a value; see avalake (export|report) --help/);
    const blank = await Promise.all([run(EXPORT, ' '), run(REPORT, ' ')]);
    for (const result of blank) expectRefused(result, 2, /--out is empty: name the file to write/);
  });

  it('in a folder that cannot be made: report ends at once (no endless mkdir)', async () => {
    const started = Date.now();
    const result = await run(REPORT, '/proc/avalake-nope/r.html');
    expectRefused(
      result,
      2,
      /--out \/proc\/avalake-nope\/r\.html: cannot create the folder \/proc\/avalake-nope/,
    );
    expect(result.stderr).not.toMatch(/\.tmp|exporting-/);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);

  it('export into a folder that does not exist says which, and nothing is left behind', async () => {
    const result = await run(EXPORT, join(dir, 'no-such', 'e.parquet'));
    expectRefused(result, 2, /the folder .*no-such does not exist; create it first or choose another --out/);
    expect(existsSync(join(dir, 'no-such'))).toBe(false);
  });
});

describe('a warehouse that is not a DuckDB file', () => {
  it('readers say so and how to rebuild it; build rebuilds it from the lake', async () => {
    const broken = join(dir, 'broken');
    copyLake(broken);
    writeFileSync(join(broken, 'warehouse.duckdb'), 'this is not a DuckDB database\n');
    const out = join(dir, 'from-broken');
    const readers = await Promise.all([
      runCli(['sql', 'select 1', '--data-dir', broken]),
      runCli(['export', 'stg_rewards', '--data-dir', broken, '--out', `${out}.parquet`]),
      runCli(['test', '--data-dir', broken]),
      runCli(['report', '--data-dir', broken, '--out', `${out}.html`]),
      runCli(['docs', '--data-dir', broken, '--out', `${out}.md`]),
    ]);
    for (const result of readers)
      expectRefused(
        result,
        1,
        /the warehouse .*broken\/warehouse\.duckdb is not a DuckDB database file/,
        /avalake build --data-dir .*broken/,
      );
    expect(readdirSync(dir).filter((f) => f.startsWith('from-broken'))).toEqual([]);

    const build = await runCli(['build', '--data-dir', broken]);
    expect(build.code, build.stderr).toBe(0);
    expect(build.stderr).toMatch(/was not a DuckDB database file: every model was built anew from the lake/);
    expect(build.stderr).not.toMatch(/building-/);
    const query = await runCli([
      'sql',
      'select count(*) > 0 as has_rows from stg_rewards',
      '--data-dir',
      broken,
    ]);
    expect(query.code, query.stderr).toBe(0);
    expect(query.stdout).toContain('true');
  }, 120_000);
});

describe('--models, --tests and --max-age that name nothing', () => {
  it('exit 2 naming the flag', async () => {
    const [test, build, docs, tests, testsFile, maxAge] = await Promise.all([
      runCli(['test', '--data-dir', built, '--models', '/nonexist']),
      runCli(['build', '--data-dir', built, '--models', '/nonexist']),
      runCli(['docs', '--data-dir', built, '--models', '/nonexist', '--out', join(dir, 'd.md')]),
      runCli(['test', '--data-dir', built, '--tests', '/nonexist']),
      runCli(['test', '--data-dir', built, '--tests', file]),
      runCli(['test', '--data-dir', built, '--max-age', 'rewardz=2d']),
    ]);
    for (const result of [test, build, docs])
      expectRefused(result, 2, /--models \/nonexist: no such folder; name the folder of the SQL models/);
    expectRefused(tests, 2, /--tests \/nonexist: no such folder; name the folder of the SQL tests/);
    expectRefused(testsFile, 2, /--tests .*a-file is a file; name the folder of the SQL tests/);
    expectRefused(maxAge, 2, /--max-age rewardz=2d: no stream is named "rewardz"; streams: .*rewards/);
    expect(existsSync(join(dir, 'd.md'))).toBe(false);
  }, 60_000);
});

describe('a flag given twice', () => {
  it('is exit 2 naming it, for every command; --max-age alone may repeat', async () => {
    const other = join(dir, 'other');
    const [status, build, extract, local, maxAge] = await Promise.all([
      runCli(['status', '--data-dir', built, '--data-dir', other]),
      runCli(['build', '--data-dir', built, '--select', 'stg_rewards', '--select', 'stg_utxos']),
      runCli(['extract', 'pipelines/demo.json', '--data-dir', other, '--data-dir', built, '--json']),
      runCli(['build', '--data-dir', 's3://b/p', '--local-dir', other, '--local-dir', built]),
      runCli(['test', '--data-dir', built, '--max-age', '100d', '--max-age', 'rewards=200d']),
    ]);
    expectRefused(status, 2, /^avalake: --data-dir given more than once; give each once$/m);
    expectRefused(build, 2, /^avalake: --select given more than once; give each once$/m);
    expectRefused(extract, 2, /^avalake: --data-dir given more than once; give each once$/m);
    expect(extract.stdout).toBe('');
    expectRefused(local, 2, /^avalake: --local-dir given more than once; give each once$/m);
    expect(maxAge.stderr).not.toMatch(/more than once/);
    expect(existsSync(other)).toBe(false);
  }, 60_000);
});

describe('a flag without its value, in a --no- form, or unknown', () => {
  it('is exit 2 naming the flag, before the command does anything', async () => {
    const other = join(dir, 'not-made');
    const [pipeline, dataDir, scale, rateLimit, negated, negatedSwitch, negative, dashValue, unknown] =
      await Promise.all([
        runCli(['extract', '--pipeline', '--data-dir', other]),
        runCli(['status', '--data-dir']),
        runCli(['emulator', '--port', '0', '--scale']),
        runCli(['emulator', '--rate-limit', '--port', '0']),
        runCli(['emulator', '--port', '0', '--no-rate-limit']),
        runCli(['extract', 'pipelines/demo.json', '--data-dir', other, '--no-full-refresh']),
        runCli(['status', '--no-data-dir']),
        runCli(['test', '--data-dir', built, '--max-age', '-1h']),
        runCli(['status', '--data-dir', built, '--log-format', 'json']),
      ]);
    // --help lists the pipeline under Positionals, as [pipeline]: so does the message (before, only
    // "--pipeline needs a value", a flag the help page does not show).
    expectRefused(
      pipeline,
      2,
      /^avalake: --pipeline needs a value: the pipeline is a positional, written after the command without a flag \(avalake extract \[pipeline\]\); see avalake extract --help$/m,
    );
    expectRefused(dataDir, 2, /^avalake: --data-dir needs a value; see avalake status --help$/m);
    // Before, the emulator served its defaults for both: it never exited.
    expectRefused(scale, 2, /^avalake: --scale needs a value; see avalake emulator --help$/m);
    expectRefused(rateLimit, 2, /^avalake: --rate-limit needs a value/m);
    expectRefused(
      negated,
      2,
      /^avalake: --no-rate-limit: avalake's flags have no --no- form; leave --rate-limit out/m,
    );
    expectRefused(negatedSwitch, 2, /^avalake: --no-full-refresh: avalake's flags have no --no- form/m);
    expectRefused(negative, 2, /^avalake: --no-data-dir: /m);
    // A value that starts with a dash, taken as the value, is the command's to judge.
    expectRefused(dashValue, 2, /--max-age -1h: a duration cannot be negative/);
    // Named as typed, once (yargs adds a camel-cased copy: "log-format, logFormat").
    expectRefused(unknown, 2, /^avalake: Unknown argument: log-format$/m);
    expect(existsSync(other)).toBe(false);
  }, 60_000);

  it('is the same for a flag of a few choices: nothing after it is not its default', async () => {
    // Before, yargs let a choice flag pass empty: `sql … --format` printed a table, `export --format` Parquet.
    const [format, exportFormat, logFormat] = await Promise.all([
      runCli(['sql', 'select 1', '--data-dir', built, '--format']),
      runCli(['export', 'stg_rewards', '--data-dir', built, '--out', join(dir, 'out'), '--format']),
      runCli(['extract', 'pipelines/demo.json', '--data-dir', join(dir, 'never'), '--log-format']),
    ]);
    expectRefused(format, 2, /^avalake: --format needs a value; see avalake sql --help$/m);
    expect(format.stdout).toBe('');
    expectRefused(exportFormat, 2, /^avalake: --format needs a value; see avalake export --help$/m);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    expectRefused(logFormat, 2, /^avalake: --log-format needs a value; see avalake extract --help$/m);
    expect(existsSync(join(dir, 'never'))).toBe(false);
  }, 60_000);

  it("names a command's missing argument as --help shows it", async () => {
    // Before: yargs's "Not enough non-option arguments: got 0, need at least 1".
    const [sql, exported, verify] = await Promise.all([
      runCli(['sql', '--data-dir', built]),
      runCli(['export', '--data-dir', built]),
      runCli(['verify-message', '--network', 'fuji']),
    ]);
    expectRefused(
      sql,
      2,
      /^avalake: the sql command needs its <query> argument: avalake sql <query>; see avalake sql --help$/m,
    );
    expectRefused(
      exported,
      2,
      /^avalake: the export command needs its <model> argument: avalake export <model>;/m,
    );
    expectRefused(
      verify,
      2,
      /^avalake: the verify-message command needs its <hex> argument: avalake verify-message <hex>;/m,
    );
  }, 60_000);

  it('written out empty, or camel-cased, is the same mistake, named once as --help lists it', async () => {
    const other = join(dir, 'not-made-either');
    const [equals, empty, camel, camelEquals, both, camelDash, dashRetries] = await Promise.all([
      runCli(['status', '--data-dir=']),
      runCli(['status', '--data-dir', '']),
      runCli(['extract', '--dataDir']),
      runCli(['extract', '--pipeline=', '--dataDir=']),
      runCli(['status', '--data-dir=', '--dataDir']),
      runCli(['test', '--dataDir', built, '--maxAge', '-1h']),
      runCli(['extract', 'pipelines/demo.json', '--dataDir', other, '--retries', '-1']),
    ]);
    // Before, status read the current folder ("nothing extracted yet into : …", exit 0).
    for (const status of [equals, empty, both])
      expectRefused(status, 2, /^avalake: --data-dir needs a value; see avalake status --help$/m);
    expectRefused(camel, 2, /^avalake: --data-dir needs a value; see avalake extract --help$/m);
    expectRefused(
      camelEquals,
      2,
      /^avalake: --pipeline, --data-dir need values: the pipeline is a positional, .* \(avalake extract \[pipeline\]\); see avalake extract --help$/m,
    );
    // Values that start with a dash are still the command's to judge, in either spelling.
    expectRefused(camelDash, 2, /--max-age -1h: a duration cannot be negative/);
    expectRefused(dashRetries, 2, /--retries "-1" is out of range/);
    expect(existsSync(other)).toBe(false);
  }, 60_000);
});

describe('a lone --', () => {
  it("ends the options: what follows is the command's positional as written, whatever it starts with", async () => {
    const other = join(dir, 'not-made-by-dash');
    const out = join(dir, 'after-dash.csv');
    const [exported, dashPipeline, extra, flagAfter, noPositional] = await Promise.all([
      runCli(['export', '--data-dir', built, '--format', 'csv', '--out', out, '--', 'stg_rewards']),
      runCli(['extract', '--data-dir', other, '--', '-p.json']),
      runCli(['extract', '--data-dir', other, '--', 'pipelines/demo.json', 'second.json']),
      runCli(['export', '--data-dir', built, '--', 'stg_rewards', '--out', out]),
      runCli(['status', '--data-dir', built, '--', 'x']),
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(existsSync(out)).toBe(true);
    // Before: export said "Not enough non-option arguments", extract "---- given more than once".
    expectRefused(dashPipeline, 2, /^avalake: pipeline -p\.json does not exist; name a file such as/m);
    expectRefused(extra, 2, /^avalake: Unknown argument: second\.json$/m);
    // --out after the -- is a word, not the flag.
    expectRefused(flagAfter, 2, /^avalake: Missing required argument: out$/m);
    expectRefused(noPositional, 2, /^avalake: Unknown argument: x$/m);
    expect(existsSync(other)).toBe(false);
  }, 60_000);
});
