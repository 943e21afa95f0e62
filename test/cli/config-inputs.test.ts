import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compact } from '../../src/cli/compact.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { PRIMARY_CHAINS } from '../../src/emulator/world/networks.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { extractCaptured, pipelineWorkspace, smallPipeline } from '../helpers/extract.ts';
import { captureOutput, runCli } from '../helpers/output.ts';
import { exampleMessageFrom } from '../helpers/warp.ts';

/**
 * Configuration mistakes that used to be misreported (the wrong input named, NaN shown, help printed
 * with exit 0) or let through (an API key no header can carry, a start before Avalanche existed, a
 * query in a base URL): each is exit 2 with one line naming the input as given, and nothing written.
 */

/** The secret part of every key below: it must never be printed. */
const KEY_BODY = 'secret-4a7f9c2e1b';
const STACK = /^\s+at\s.+(:\d+:\d+\)?|<anonymous>)$/m;

let emulator: Emulator;

const basePipeline = () => ({
  ...smallPipeline(emulator),
  metrics: { chains: ['43113'], metrics: ['txCount'] },
});
const workspace = (pipeline: unknown = basePipeline()) => pipelineWorkspace(pipeline, 'avalake-config-');
const runExtract = extractCaptured;

function expectClean(out: { stdout: string; stderr: string }) {
  expect(out.stderr).not.toMatch(STACK);
  expect(out.stdout + out.stderr).not.toContain(KEY_BODY);
}

beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator.close());

interface Case {
  name: string;
  pipeline?: (p: Record<string, unknown>) => unknown;
  args?: Record<string, unknown>;
  env?: Record<string, string>;
  message: RegExp;
  /** What the message must not say (the input it used to blame). */
  not?: RegExp;
}

const CASES: Case[] = [
  {
    name: '--base-url not a URL names the flag, not the pipeline file',
    args: { baseUrl: 'notaurl' },
    message: /^avalake: --base-url: got "notaurl"; expected an http\(s\) URL such as/,
    not: /is not a valid pipeline/,
  },
  {
    name: 'AVALAKE_BASE_URL not a URL names the variable',
    env: { AVALAKE_BASE_URL: 'notaurl' },
    message: /^avalake: AVALAKE_BASE_URL: got "notaurl"; expected an http\(s\) URL/,
    not: /is not a valid pipeline/,
  },
  {
    name: 'AVALAKE_NODE_URL with a query names the variable',
    env: { AVALAKE_NODE_URL: 'http://127.0.0.1:8417/fuji?x=1' },
    message: /^avalake: AVALAKE_NODE_URL: got ".*\?x=1"; expected an http\(s\) URL without a query/,
  },
  {
    name: 'a query in the file’s urls.node',
    pipeline: (p) => ({ ...p, urls: { node: 'http://127.0.0.1:8417/fuji?x=1' } }),
    message:
      /urls\.node: got "http:\/\/127\.0\.0\.1:8417\/fuji\?x=1"; expected an http\(s\) URL without a query \(\?…\) or fragment/,
  },
  {
    name: 'a fragment in --metrics-url',
    args: { metricsUrl: 'http://127.0.0.1:8417/#metrics' },
    message: /^avalake: --metrics-url: got ".*#metrics"; expected an http\(s\) URL without a query/,
  },
  {
    name: 'AVALAKE_CATALOG not a URL names the variable',
    env: { AVALAKE_CATALOG: 'notaurl' },
    message: /^avalake: AVALAKE_CATALOG: expected a PostgreSQL URL .*, got "notaurl"/,
  },
  {
    name: 'a --catalog whose port is no number is a usage mistake, not a catalog down; its password masked',
    args: { catalog: `postgres://postgres:${KEY_BODY}@127.0.0.1:notaport/db` },
    message:
      /^avalake: --catalog: "postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:notaport\/db" does not parse as a URL; expected postgres:\/\/user@host:5432\/database with a numeric port/,
    not: /not reachable|Invalid URL/,
  },
  {
    name: 'an AVALAKE_CATALOG password with an unencoded "/" is masked up to the last "@"',
    env: { AVALAKE_CATALOG: `postgres://postgres:Sec/${KEY_BODY}@127.0.0.1/x` },
    message:
      /^avalake: AVALAKE_CATALOG: "postgres:\/\/postgres:\*\*\*@127\.0\.0\.1\/x" does not parse as a URL/,
  },
  {
    name: 'a --catalog of another scheme is shown with its whole password masked',
    args: { catalog: `postgress://postgres:Sec/${KEY_BODY}@127.0.0.1/x` },
    message:
      /^avalake: --catalog: expected a PostgreSQL URL .*, got "postgress:\/\/postgres:\*\*\*@127\.0\.0\.1\/x"/,
  },
  {
    name: 'a --catalog password with a ":" in it is masked whole',
    args: { catalog: `pg://postgres:Sec:${KEY_BODY}@127.0.0.1/x` },
    message:
      /^avalake: --catalog: expected a PostgreSQL URL .*, got "pg:\/\/postgres:\*\*\*@127\.0\.0\.1\/x"/,
  },
  {
    name: 'a password query parameter of a catalog that is not PostgreSQL is masked',
    args: { catalog: `mysql://db/avalake?password=${KEY_BODY}` },
    message:
      /^avalake: --catalog: expected a PostgreSQL URL .*, got "mysql:\/\/db\/avalake\?password=\*\*\*"/,
  },
  {
    name: 'the pipeline’s "catalog" that does not parse names the pipeline',
    pipeline: (p) => ({ ...p, catalog: `postgres://postgres:${KEY_BODY}@127.0.0.1:notaport/db` }),
    message:
      /^avalake: the pipeline's "catalog": "postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:notaport\/db" does not parse/,
  },
  {
    name: 'the pipeline’s "catalog" its schema refuses is shown with its password masked',
    pipeline: (p) => ({ ...p, catalog: `pg://postgres:Sec:${KEY_BODY}@127.0.0.1/x` }),
    message: /catalog: got "pg:\/\/postgres:\*\*\*@127\.0\.0\.1\/x"/,
  },
  {
    name: 'AVALAKE_DATA_DIR empty names the variable',
    args: { dataDir: undefined },
    env: { AVALAKE_DATA_DIR: '' },
    message: /^avalake: AVALAKE_DATA_DIR is empty: name a directory/,
  },
  {
    name: 'AVALAKE_RETRIES negative is out of range, not "not a number"',
    env: { AVALAKE_RETRIES: '-3' },
    message: /^avalake: AVALAKE_RETRIES="-3" is out of range: give a whole number from 0 to 100/,
  },
  {
    name: '--retries abc is shown as typed',
    args: { retries: 'abc' },
    message: /^avalake: --retries "abc" is not a number: give a whole number from 0 to 100/,
    not: /NaN/,
  },
  {
    name: '--retries "" is refused, not the default',
    args: { retries: '' },
    message: /^avalake: --retries "" is not a number/,
  },
  {
    name: '--retries 2.5 is not whole',
    args: { retries: '2.5' },
    message: /^avalake: --retries "2\.5" is not whole/,
  },
  {
    name: '"streams": [] in the file names the file’s key',
    pipeline: (p) => ({ ...p, streams: [] }),
    message: /pipeline\.json: "streams" is empty; name at least one stream, e\.g\. "streams": \["\w+"\]/,
    not: /--streams/,
  },
  {
    name: 'AVALAKE_STREAMS with an empty name names the variable',
    env: { AVALAKE_STREAMS: 'rewards,,utxos' },
    message: /^avalake: AVALAKE_STREAMS="rewards,,utxos" has an empty stream name/,
  },
  {
    name: 'an unknown stream in the file names the file’s key',
    pipeline: (p) => ({ ...p, streams: ['utxo'] }),
    message: /pipeline\.json: "streams": unknown stream "utxo"/,
  },
  {
    name: 'a start of 99999999 days back',
    pipeline: (p) => ({ ...p, start: '99999999d' }),
    message:
      /start: got "99999999d"; expected a date from 2020-09-01 on \(Avalanche's launch: there is no older history\), or at most \d+ days back/,
  },
  {
    name: 'a start date before Avalanche’s launch',
    pipeline: (p) => ({ ...p, start: '2019-06-01' }),
    message: /start: got "2019-06-01"; expected a date from 2020-09-01 on/,
  },
  {
    name: 'an API key with a carriage return at the end (CRLF file)',
    env: { AVALAKE_API_KEY: `${KEY_BODY}\r` },
    message:
      /^avalake: AVALAKE_API_KEY has a carriage return at the end \(the file it came from may have Windows line endings\); .* The key itself is not shown\./,
  },
  {
    name: 'an API key with CRLF at the end',
    env: { AVALAKE_API_KEY: `${KEY_BODY}\r\n` },
    message: /^avalake: AVALAKE_API_KEY has a carriage return at the end/,
  },
  {
    name: 'an API key flag with a line break inside',
    args: { apiKey: `${KEY_BODY}\nmore` },
    message: new RegExp(`^avalake: --api-key has a line break at character ${KEY_BODY.length + 1} of`),
  },
  {
    name: 'an API key with a non-ASCII character',
    args: { apiKey: `${KEY_BODY}\u201d` },
    message: /^avalake: --api-key has a non-ASCII character \(U\+201D\) at the end/,
  },
  {
    name: 'an API key with a byte-order mark',
    env: { AVALAKE_API_KEY: `\uFEFF${KEY_BODY}` },
    message: /^avalake: AVALAKE_API_KEY has a byte-order mark \(U\+FEFF\) at the start/,
  },
];

describe('configuration mistakes name their input: exit 2, nothing written', () => {
  it.each(CASES)('$name', async (c) => {
    const w = workspace(c.pipeline ? c.pipeline(basePipeline()) : basePipeline());
    const out = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir, ...c.args }, c.env);
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toMatch(c.message);
    if (c.not) expect(out.stderr).not.toMatch(c.not);
    expect(out.stdout).toBe('');
    expectClean(out);
    expect(existsSync(w.dataDir)).toBe(false);
    rmSync(w.dir, { recursive: true, force: true });
  });
});

describe('a clock before Avalanche existed', () => {
  it('is named as what to fix, not the start', async () => {
    const w = workspace({ ...basePipeline(), start: '30d' });
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('1970-01-02T00:00:00Z') });
    try {
      const out = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir });
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toMatch(
        /start: got "30d"; expected a date from 2020-09-01 on, but this machine's clock reads 1970-01-02, before Avalanche's launch: set the clock right/,
      );
      expect(out.stderr).not.toMatch(/-\d+ days/);
      expectClean(out);
      expect(existsSync(w.dataDir)).toBe(false);
    } finally {
      vi.useRealTimers();
      rmSync(w.dir, { recursive: true, force: true });
    }
  });

  // An RTC reset to 2001 before NTP syncs: the pipeline's start date is fine, the clock is not.
  it('is named as what to fix for a start date too', async () => {
    const out = await extractAt('2001-01-01T00:00:00Z', '2026-01-01');
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toMatch(
      /start: got "2026-01-01"; expected a date not after today, but this machine's clock reads 2001-01-01, before Avalanche's launch: set the clock right/,
    );
  });
});

describe('a start date that is today east of UTC, and tomorrow in UTC', () => {
  // 20:15 UTC on 1 January is 2 January, 10:00 in Chatham (UTC+13:45): its user writes their today.
  it('is refused naming the UTC date, the day start is in', async () => {
    const out = await extractAt('2028-01-01T20:15:00Z', '2028-01-02');
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toMatch(
      /start: got "2028-01-02"; expected a date not after today in UTC \(2028-01-01 UTC; start is a UTC date\)/,
    );
  });
});

/** An extract of the base pipeline with `start`, the clock at `now`: what it prints, nothing written. */
async function extractAt(now: string, start: string) {
  const w = workspace({ ...basePipeline(), start });
  vi.useFakeTimers({ toFake: ['Date'], now: Date.parse(now) });
  try {
    const out = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir });
    expectClean(out);
    expect(existsSync(w.dataDir)).toBe(false);
    return out;
  } finally {
    vi.useRealTimers();
    rmSync(w.dir, { recursive: true, force: true });
  }
}

/** A reverse proxy that serves the emulator under path prefixes, as a gateway in front of the services. */
async function prefixProxy(prefixes: readonly string[]) {
  const seen: string[] = [];
  const target = new URL(emulator.url);
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    seen.push(url);
    const prefix = prefixes.find((p) => url.startsWith(`${p}/`));
    if (!prefix) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"no such prefix"}');
      return;
    }
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: url.slice(prefix.length),
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('base URLs with a path', () => {
  it('a path prefix on the data, metrics and node URLs is kept on every request', async () => {
    const proxy = await prefixProxy(['/data-api', '/metrics-api', '/node']);
    try {
      const w = workspace();
      const out = await runExtract({
        pipeline: w.pipelinePath,
        dataDir: w.dataDir,
        baseUrl: `${proxy.url}/data-api`,
        metricsUrl: `${proxy.url}/metrics-api/`,
        nodeUrl: `${proxy.url}/node/fuji`,
      });
      expect(out.code, out.stdout + out.stderr).toBe(0);
      expect(proxy.seen.some((u) => u.startsWith('/data-api/v1/'))).toBe(true);
      expect(proxy.seen.some((u) => u.startsWith('/metrics-api/v2/chains/43113/metrics/'))).toBe(true);
      expect(proxy.seen).toContain('/node/fuji/ext/bc/P');
      // Every request kept its prefix (the proxy answers 404 to any other path).
      expect(proxy.seen.filter((u) => !/^\/(data-api\/v1|metrics-api\/v[12]|node\/fuji)\//.test(u))).toEqual(
        [],
      );
      rmSync(w.dir, { recursive: true, force: true });
    } finally {
      await proxy.close();
    }
  });
});

describe('pipeline lists', () => {
  it('a value listed twice, in any spelling, or an address or metrics series of the other network is exit 2 naming it; nothing written', async () => {
    const base: Record<string, unknown> = basePipeline();
    const primary = base.primary as { addresses: string[] };
    const [address] = primary.addresses;
    const wallet = '0x607bc8b29fe1660aa3c779e832fc04a4520a4739';
    const cases: [unknown, string][] = [
      [
        { ...base, metrics: { chains: ['43113', '43113'], metrics: ['txCount'] } },
        'metrics.chains.1: got "43113"; expected each value once (item 0 names it already)',
      ],
      [
        { ...base, primary: { ...primary, addresses: [address, `P-${address}`] } },
        `primary.addresses.1: got "P-${address}"; expected each value once (item 0 names it already, as ${address})`,
      ],
      [
        {
          ...base,
          evm: { chains: ['43113'], addresses: [wallet, wallet.toUpperCase().replace('0X', '0x')] },
        },
        `evm.addresses.1: got "${wallet.toUpperCase().replace('0X', '0x')}"; expected each value once (item 0 names it already, as ${wallet})`,
      ],
      [
        { ...base, network: 'mainnet' },
        `primary.addresses.0: got "${address}"; expected an address of mainnet, the pipeline's network, starting "avax1" (this one is of fuji)`,
      ],
      [
        { ...base, metrics: { chains: ['43113', 'mainnet'], metrics: ['txCount'] } },
        `metrics.chains.1: got "mainnet"; expected an EVM chain id, total, or testnet (the pipeline's network is fuji; its rows would be labelled so)`,
      ],
    ];
    for (const [pipeline, says] of cases) {
      const w = workspace(pipeline);
      const out = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir });
      expect([out.code, out.stderr]).toEqual([2, expect.stringContaining(says)]);
      expectClean(out);
      expect(existsSync(w.dataDir)).toBe(false);
      rmSync(w.dir, { recursive: true, force: true });
    }
  });
});

describe('compact --streams', () => {
  it('an empty stream name is refused, as extract refuses it, not taken for every stream', async () => {
    const w = workspace({ ...basePipeline(), streams: ['rewards'] });
    const extracted = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir });
    expect(extracted.code, extracted.stdout + extracted.stderr).toBe(0);
    for (const streams of [',,', '', 'rewards,']) {
      const out = await captureOutput(() => compact({ dataDir: w.dataDir, streams }));
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toBe(
        `avalake: --streams "${streams}" has an empty stream name; give comma-separated names such as --streams rewards,utxos\n`,
      );
      expect(out.stdout).toBe('');
    }
    rmSync(w.dir, { recursive: true, force: true });
  });
});

describe('AVALAKE_DATA_DIR', () => {
  it('names the data directory for build, test, compact, status and sql as for extract', async () => {
    const w = workspace({ ...basePipeline(), streams: ['rewards'] });
    const extracted = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir });
    expect(extracted.code, extracted.stdout + extracted.stderr).toBe(0);
    const env = { AVALAKE_DATA_DIR: w.dataDir };
    const built = await runCli(['build', '--select', 'stg_rewards'], env);
    expect(built.code, built.stderr).toBe(0);
    expect(existsSync(join(w.dataDir, 'warehouse.duckdb'))).toBe(true);
    const counted = await runCli(['sql', 'select count(*) as n from stg_rewards', '--format', 'json'], env);
    expect(counted.code, counted.stderr).toBe(0);
    expect(Number(JSON.parse(counted.stdout)[0].n)).toBeGreaterThan(0);
    const tested = await runCli(['test', '--select', 'stg_rewards', '--json'], env);
    expect(tested.stdout, tested.stderr).toContain('"passed"');
    for (const command of [['compact'], ['status']]) {
      const out = await runCli(command, env);
      expect(out.code, `${command}: ${out.stderr}`).toBe(0);
    }
    // A flag still wins: the variable's directory is not where this one looks.
    const flagged = await runCli(['status', '--data-dir', join(w.dir, 'other')], env);
    expect(flagged.stdout + flagged.stderr).toContain(join(w.dir, 'other'));
    rmSync(w.dir, { recursive: true, force: true });
  });
});

describe('the pipeline file', () => {
  it('a UTF-8 byte-order mark (as some editors write) is accepted', async () => {
    const w = workspace(`\uFEFF${JSON.stringify({ ...basePipeline(), streams: ['rewards'] })}`);
    const out = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir });
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stderr).not.toMatch(/Unexpected token/);
    rmSync(w.dir, { recursive: true, force: true });
  });
});

describe('flags as a process', () => {
  it('negative durations are taken as the flag’s value and refused, never help and exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'avalake-config-'));
    const dataDir = join(dir, 'data');
    const results = await Promise.all([
      runCli(['run', '--max-age', '-1h', '--data-dir', dataDir]),
      runCli(['test', '--max-age', '-1h', '--data-dir', dataDir]),
      runCli(['run', '--max-age', '24h', '--max-age', 'metrics=-2d', '--data-dir', dataDir]),
      runCli(['run', '--build-wait', '-5m', '--data-dir', dataDir]),
    ]);
    const [runAge, testAge, streamAge, buildWait] = results;
    for (const r of results) {
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stdout).not.toMatch(/Options:/);
      expect(r.stderr).not.toMatch(STACK);
    }
    expect(runAge?.stderr).toMatch(
      /^avalake: --max-age -1h: a duration cannot be negative; write how long, e\.g\. 24h/,
    );
    expect(testAge?.stderr).toMatch(/^avalake: --max-age -1h: a duration cannot be negative/);
    expect(streamAge?.stderr).toMatch(/^avalake: --max-age metrics=-2d: a duration cannot be negative/);
    expect(buildWait?.stderr).toMatch(
      /^avalake: --build-wait -5m: a duration cannot be negative; .*30m or 0s/,
    );
    expect(existsSync(dataDir)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('a catalog URL that does not parse is exit 2 for every command; a password in its query is masked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'avalake-config-'));
    const dataDir = join(dir, 'data');
    const notaport = `postgres://postgres:${KEY_BODY}@127.0.0.1:notaport/db`;
    // A port that refuses connections: bound, then released.
    const closed = await new Promise<number>((resolve) => {
      const s = createNetServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const results = await Promise.all([
      runCli(['status', '--catalog', notaport, '--data-dir', dataDir]),
      runCli(['build', '--catalog', notaport, '--data-dir', dataDir]),
      runCli(['catalog-import', '--catalog', notaport, '--data-dir', dataDir]),
      runCli(['status', '--data-dir', dataDir], { AVALAKE_CATALOG: notaport }),
      runCli([
        'status',
        '--data-dir',
        dataDir,
        '--catalog',
        `postgres://postgres@127.0.0.1:${closed}/db?password=${KEY_BODY}`,
      ]),
    ]);
    for (const r of results) expectClean(r);
    const unreachable = results.pop();
    for (const r of results) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(
        /^avalake: (--catalog|AVALAKE_CATALOG): "postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:notaport\/db" does not parse as a URL; expected postgres:\/\/user@host:5432\/database with a numeric port/,
      );
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(unreachable?.code, unreachable?.stderr).toBe(1);
    expect(unreachable?.stderr).toContain(
      `avalake: the catalog postgres://postgres@127.0.0.1:${closed}/db?password=*** is not reachable`,
    );
    expect(existsSync(dataDir)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('flags without their value, --quiet with --verbose, and aggregate’s numbers and key', async () => {
    const w = workspace();
    const extract = ['extract', w.pipelinePath, '--data-dir', w.dataDir];
    const message = exampleMessageFrom(PRIMARY_CHAINS.fuji.c).toString('hex');
    const aggregate = ['aggregate', '--network', 'fuji', '--message', message, '--base-url', emulator.url];
    const [noRetries, retriesAbc, quietVerbose, quorum, height, keyFlag, keyEnv] = await Promise.all([
      runCli([...extract, '--retries']),
      runCli([...extract, '--retries', 'abc']),
      runCli([...extract, '--quiet', '--verbose']),
      runCli([...aggregate, '--quorum', 'abc']),
      runCli([...aggregate, '--p-chain-height', '-1']),
      runCli([...aggregate, '--api-key', `${KEY_BODY}\r`]),
      runCli(aggregate, { AVALAKE_API_KEY: `${KEY_BODY}\n` }),
    ]);
    const all = [noRetries, retriesAbc, quietVerbose, quorum, height, keyFlag, keyEnv];
    expect(all.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2, 2]);
    for (const r of all) expectClean(r);
    expect(noRetries.stderr).toMatch(/^avalake: --retries needs a value; see avalake extract --help/);
    expect(retriesAbc.stderr).toMatch(/^avalake: --retries "abc" is not a number/);
    expect(quietVerbose.stderr).toMatch(/^avalake: --quiet and --verbose contradict each other/);
    expect(quorum.stderr).toMatch(/^avalake: --quorum: expected an integer from 0 to 100, got "abc"/);
    expect(height.stderr).toMatch(/^avalake: --p-chain-height: expected a non-negative integer, got "-1"/);
    expect(keyFlag.stderr).toMatch(
      /^avalake: --api-key has a carriage return at the end \(the file it came from may have Windows line endings\)/,
    );
    expect(keyEnv.stderr).toMatch(/^avalake: AVALAKE_API_KEY has a line break at the end/);
    expect(existsSync(w.dataDir)).toBe(false);
    rmSync(w.dir, { recursive: true, force: true });
  }, 30_000);
});
