import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractWith } from '../../src/cli/extract.ts';
import { run } from '../../src/cli/run.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { resolveExtractConfig } from '../../src/extract/config.ts';
import type { StreamDefinition } from '../../src/extract/stream.ts';
import { STREAMS } from '../../src/extract/streams/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { extractCaptured, pipelineWorkspace, smallPipeline } from '../helpers/extract.ts';
import { captureOutput, runCli } from '../helpers/output.ts';

/**
 * Bad inputs through the real `extract` command: each gets the exit code of DESIGN.md, one clear message
 * that names the input, no stack trace, no API key in the output, and nothing written (config mistakes do
 * not even create the data directory; a failed partition's checkpoint does not move).
 */

const GOOD_KEY = 'good-key-5f1c9a2e7d';
const LIMITED_KEY = 'limited-key-8b3e6c1a4f';
const WRONG_KEY = 'wrong-key-0d9e8f7a6b';
const KEYS = [GOOD_KEY, LIMITED_KEY, WRONG_KEY];
const STACK = /^\s+at\s.+(:\d+:\d+\)?|<anonymous>)$/m;

let emulator: Emulator;
let closedPort: number;

const basePipeline = () => smallPipeline(emulator);

type Workspace = ReturnType<typeof pipelineWorkspace>;
const workspace = (pipeline: unknown = basePipeline()): Workspace =>
  pipelineWorkspace(pipeline, 'avalake-bad-');
const runExtract = extractCaptured;

/** Every file under a directory, relative to it (empty when the directory does not exist). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** The commit records of a data directory, by path, as text: equal before and after means no checkpoint moved. */
function commitLog(dataDir: string, stream?: string): Record<string, string> {
  const root = join(dataDir, 'lake', '_commits', ...(stream ? [stream] : []));
  return Object.fromEntries(filesUnder(root).map((f) => [f, readFileSync(join(root, f), 'utf8')]));
}

/** Parquet files as readers see them: `lake/<stream>/…` (a stream's folders sit in one of its generations). */
const parquetFiles = (dataDir: string) =>
  filesUnder(dataDir)
    .filter((f) => f.endsWith('.parquet'))
    .map((f) => f.replace(/^lake\/_generations\/([^/]+)\/g\d+\//, 'lake/$1/'));

function expectClean(output: { stdout: string; stderr: string }) {
  expect(output.stderr).not.toMatch(STACK);
  for (const key of KEYS) {
    expect(output.stdout).not.toContain(key);
    expect(output.stderr).not.toContain(key);
  }
}

interface ConfigCase {
  name: string;
  /** The pipeline file's content (an object is written as JSON); default the base pipeline. */
  pipeline?: (base: Record<string, unknown>) => unknown;
  args?: (w: Workspace) => Record<string, unknown>;
  env?: Record<string, string>;
  /** What the message must say: the input, what was expected, how to fix it. */
  message: RegExp[];
}

/** The base pipeline, as a test case edits it. */
type Editable = Record<string, unknown> & { primary: { addresses: string[]; nodeIds: string[] } };

const edit =
  (change: (p: Editable) => void) =>
  (p: Record<string, unknown>): unknown => {
    change(p as Editable);
    return p;
  };

/** Mistakes caught while resolving the configuration: exit 2, and the data directory is never created. */
const CONFIG_CASES: ConfigCase[] = [
  {
    name: 'unknown stream',
    args: () => ({ streams: 'rewards,rewardz' }),
    message: [/unknown stream "rewardz"/, /known streams: [a-z0-9_, ]*delegators[a-z0-9_, ]*rewards/],
  },
  {
    name: 'unknown stream in the pipeline file',
    pipeline: edit((p) => {
      p.streams = ['utxo'];
    }),
    message: [/unknown stream "utxo"/, /known streams:.*utxos/],
  },
  {
    name: 'unknown stream in the pipeline file, --streams naming others',
    pipeline: edit((p) => {
      p.streams = ['rewardz'];
    }),
    args: () => ({ streams: 'rewards' }),
    message: [/pipeline\.json: "streams": unknown stream "rewardz"/],
  },
  {
    name: 'bad network',
    pipeline: edit((p) => {
      p.network = 'mainet';
    }),
    message: [/network: got "mainet"; expected one of "mainnet", "fuji", "testnet"/],
  },
  {
    name: 'malformed P-Chain address',
    pipeline: edit((p) => {
      p.primary.addresses = ['P-fuji1notbech32'];
    }),
    message: [/primary\.addresses\.0: got "P-fuji1notbech32"; expected a P-\/X-Chain address/],
  },
  {
    name: 'malformed EVM address',
    pipeline: edit((p) => {
      p.evm = { chains: ['43113'], addresses: ['0x12345'] };
    }),
    message: [/evm\.addresses\.0: got "0x12345"; expected an EVM address: 0x followed by 40 hex digits/],
  },
  {
    name: 'malformed node id',
    pipeline: edit((p) => {
      p.primary.nodeIds = ['Node-123'];
    }),
    message: [/primary\.nodeIds\.0: got "Node-123"; expected a node id like "NodeID-/],
  },
  {
    name: 'pipeline file missing',
    args: (w) => ({ pipeline: join(w.dir, 'no-such.json') }),
    message: [/pipeline .*no-such\.json does not exist; name a file such as pipelines\/demo\.json/],
  },
  {
    name: 'pipeline not JSON',
    pipeline: () => '{ network: fuji,',
    message: [/pipeline .*pipeline\.json is not JSON: /],
  },
  {
    name: 'pipeline a JSON array, not an object',
    pipeline: () => '[]',
    message: [/pipeline .*pipeline\.json must hold a JSON object with at least "network"/],
  },
  {
    name: 'string where an array is expected',
    pipeline: edit((p) => {
      (p.primary as Record<string, unknown>).addresses = p.primary.addresses[0];
    }),
    message: [/primary\.addresses: got "P?-?fuji1[^"]*"; expected array/],
  },
  {
    name: 'unknown top-level key',
    pipeline: edit((p) => {
      p.adresses = [];
    }),
    message: [/unknown key "adresses"; known keys: .*primary/],
  },
  {
    name: 'bad URL scheme',
    args: () => ({ baseUrl: 'ftp://127.0.0.1:21' }),
    message: [/--base-url: got "ftp:\/\/127\.0\.0\.1:21"; expected an http\(s\) URL/],
  },
  {
    name: 'data directory under a regular file',
    args: (w) => ({ dataDir: join(w.pipelinePath, 'data') }),
    message: [
      /data directory .*pipeline\.json\/data cannot be created: .*is a file, not a directory/,
      /--data-dir/,
    ],
  },
  {
    name: 'data directory that is a link to nothing (a disk not mounted)',
    args: (w) => {
      const linked = join(w.dir, 'linked');
      symlinkSync(join(w.dir, 'unmounted', 'lake-disk'), linked);
      return { dataDir: linked };
    },
    message: [
      /data directory .*linked cannot be used: .*linked is a link to .*unmounted\/lake-disk, which does not exist/,
    ],
  },
  {
    // /proc passes the permission check (as root) and takes no folders: the lake's mkdir used to loop.
    name: 'data directory in a folder that takes no new folders',
    args: () => ({ dataDir: `/proc/avalake-${process.pid}/data` }),
    message: [
      /data directory \/proc\/avalake-\d+\/data cannot be created: \/proc takes no new folders/,
      /--data-dir/,
    ],
  },
  {
    name: 'a stream with nothing to read',
    args: () => ({ streams: 'erc20_transfers' }),
    message: [
      /stream erc20_transfers has nothing to read: list evm\.chains and evm\.addresses in the pipeline/,
    ],
  },
  {
    name: '--streams with an empty name',
    args: () => ({ streams: 'rewards,,utxos' }),
    message: [/--streams "rewards,,utxos" has an empty stream name/],
  },
  {
    name: '--streams empty',
    args: () => ({ streams: '' }),
    message: [/--streams "" has an empty stream name/],
  },
  {
    name: 'negative concurrency',
    pipeline: edit((p) => {
      p.concurrency = -2;
    }),
    message: [/concurrency: got -2; expected number to be >=1/],
  },
  {
    name: 'pageSize over the maximum',
    pipeline: edit((p) => {
      p.pageSize = { rewards: 500 };
    }),
    message: [/pageSize\.rewards is 500, over the maximum of 100/, /use at most 100/],
  },
  {
    name: 'pageSize of an unknown stream',
    pipeline: edit((p) => {
      p.pageSize = { reward: 50 };
    }),
    message: [/pageSize names unknown stream "reward"/],
  },
  {
    name: 'invalid start date',
    pipeline: edit((p) => {
      p.start = '2026-02-30';
    }),
    message: [/start: got "2026-02-30"; expected a date such as "2026-01-31"/],
  },
  {
    name: 'day-only metric asked at another interval',
    pipeline: edit((p) => {
      p.metrics = { chains: ['43113'], metrics: ['txCount', 'avgTps'], intervals: ['week'] };
    }),
    message: [/metric avgTps exists only at interval "day"/, /add "day" to metrics\.intervals/],
  },
  {
    name: 'unknown metric name',
    pipeline: edit((p) => {
      p.metrics = { chains: ['43113'], metrics: ['tps'] };
    }),
    message: [/metrics\.metrics\.0: got "tps"; expected one of "activeAddresses"/],
  },
  {
    name: 'retry count not a number',
    env: { AVALAKE_RETRIES: 'many' },
    message: [/AVALAKE_RETRIES="many" is not a number/],
  },
];

beforeAll(async () => {
  emulator = await startEmulator({
    keys: `${GOOD_KEY}:pro,${LIMITED_KEY}:pro:deny=/v1/networks/fuji/rewards`,
  });
  // A port that refuses connections: bound, then released.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedPort = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
});
afterAll(() => emulator.close());

describe('extract: bad configuration exits 2 and writes nothing', () => {
  it.each(CONFIG_CASES)('$name', async (c) => {
    const base = basePipeline();
    const w = workspace(c.pipeline ? c.pipeline(base) : base);
    const out = await runExtract(
      { pipeline: w.pipelinePath, dataDir: w.dataDir, apiKey: GOOD_KEY, ...c.args?.(w) },
      c.env,
    );
    expect(out.code, out.stderr).toBe(2);
    for (const m of c.message) expect(out.stderr).toMatch(m);
    expect(out.stderr.startsWith('avalake: ')).toBe(true);
    expect(out.stdout).toBe('');
    expectClean(out);
    expect(existsSync(w.dataDir)).toBe(false);
    rmSync(w.dir, { recursive: true, force: true });
  });
});

/** A process that stays alive while a test needs a live lock holder. */
function liveProcess(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
}

/** Writes a lock file as acquireLock would, naming a live process on this host. */
function holdLock(dataDir: string, pid: number) {
  mkdirSync(dataDir, { recursive: true });
  const holder = {
    pid,
    hostname: hostname(),
    since: new Date().toISOString(),
    command: 'avalake extract (test)',
    token: 'test',
  };
  writeFileSync(join(dataDir, 'avalake.lock'), `${JSON.stringify(holder)}\n`);
}

describe('extract: failures at run time', () => {
  it('an unreachable host fails after its retries: exit 1, nothing committed', async () => {
    const w = workspace();
    const closed = `http://127.0.0.1:${closedPort}`;
    const out = await runExtract(
      { pipeline: w.pipelinePath, dataDir: w.dataDir, baseUrl: closed, nodeUrl: closed, retries: 1 },
      { AVALAKE_API_KEY: GOOD_KEY },
    );
    expect(out.code, out.stdout + out.stderr).toBe(1);
    expect(out.stdout).toMatch(
      /connection to http:\/\/127.0.0.1:\d+ failed \(.*ECONNREFUSED.*\): is the service up/,
    );
    expect(out.stdout).toContain(`127.0.0.1:${closedPort}`);
    expectClean(out);
    expect(commitLog(w.dataDir)).toEqual({});
    expect(parquetFiles(w.dataDir)).toEqual([]);
  });

  it('a rejected API key fails the run (exit 1, not a partial 3) without moving the Data API checkpoints', async () => {
    const w = workspace();
    const first = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir, apiKey: GOOD_KEY });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const before = commitLog(w.dataDir);
    const dataFilesBefore = parquetFiles(w.dataDir);
    emulator.advance(86_400);

    const out = await runExtract(
      { pipeline: w.pipelinePath, dataDir: w.dataDir },
      { AVALAKE_API_KEY: WRONG_KEY },
    );
    // The node RPC takes no key, so its snapshot streams still commit; but a refused key is no partial
    // run, which a scheduler may take for success (the README's unit file does).
    expect(out.code, out.stdout + out.stderr).toBe(1);
    expect(out.stdout).toMatch(/the API key was not accepted: check --api-key or AVALAKE_API_KEY/);
    expect(out.stderr).toMatch(/^avalake: the API key was not accepted: check --api-key or AVALAKE_API_KEY/m);
    expectClean(out);
    for (const stream of ['rewards', 'delegators', 'staking_transactions', 'utxos']) {
      const records = Object.entries(before).filter(([f]) => f.startsWith(`${stream}/`));
      expect(records.length, stream).toBeGreaterThan(0);
      expect(commitLog(w.dataDir, stream)).toEqual(
        Object.fromEntries(records.map(([f, text]) => [f.slice(stream.length + 1), text])),
      );
    }
    // Only streams read over the node RPC, which takes no key, may have committed anything new.
    const overRpc = new Set(STREAMS.filter((s) => isRpc(s)).map((s) => s.name));
    const added = parquetFiles(w.dataDir).filter((f) => !dataFilesBefore.includes(f));
    expect(added.length).toBeGreaterThan(0);
    expect(
      added.every((f) => overRpc.has(f.split('/')[1] ?? '')),
      added.join(),
    ).toBe(true);
  });

  it('an unexpected fault of avalake is exit 1, its stack on stderr, and the run still summed up', async () => {
    const w = workspace({ ...basePipeline(), metrics: { chains: ['43113'], metrics: ['txCount'] } });
    const config = await resolveExtractConfig(
      { pipeline: w.pipelinePath, dataDir: w.dataDir, apiKey: GOOD_KEY },
      {},
    );
    // Two partitions of one checkpoint, as a pipeline listing a chain twice made before its check
    // refused it (7c81201): a fault the run cannot absorb.
    const pipeline = {
      ...config.pipeline,
      metrics: { ...config.pipeline.metrics, chains: ['43113', '43113'] },
    };
    const silent = { log: () => {}, progress: () => {}, close: () => {} };
    let result: Awaited<ReturnType<typeof extractWith>> | undefined;
    const out = await captureOutput(async () => {
      result = await extractWith({ ...config, pipeline }, silent, new AbortController().signal);
      return result.code;
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(
      /^avalake: unexpected error, a fault of avalake's \(please report it\): a flush of /,
    );
    expect(result?.summary?.status).toBe('failed');
    expect(result?.summary?.error).toMatch(/a flush of /);
    // A stack, this once (a fault to report, not a mistake of the user's), and never the key.
    expect(out.stderr).toMatch(STACK);
    for (const key of KEYS) expect(out.stdout + out.stderr).not.toContain(key);
  });

  it('run with a rejected API key: exit 1, the extract failed, what the keyless streams committed built', async () => {
    const w = workspace();
    const out = await captureOutput(() =>
      run(
        { pipeline: w.pipelinePath, dataDir: w.dataDir, json: true, quiet: true, logFormat: 'json' },
        { AVALAKE_API_KEY: WRONG_KEY },
      ),
    );
    expect(out.code, out.stderr).toBe(1);
    const report = JSON.parse(out.stdout);
    expect(report).toMatchObject({ status: 'failed', exitCode: 1, failedStep: 'extract' });
    expect(report.build.status).toBe('ok');
    expect(report.build.built.length).toBeGreaterThan(0);
    expectClean(out);
  });

  it('a key that may not use a route (403) fails that stream only: exit 3', async () => {
    const w = workspace();
    const out = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir, apiKey: LIMITED_KEY });
    expect(out.code, out.stdout + out.stderr).toBe(3);
    expect(out.stdout).toMatch(
      /rewards.*the API key may not use this endpoint: use a key whose plan includes it/,
    );
    expect(out.stdout).toMatch(/GET \/v1\/networks\/\{network\}\/rewards|\/v1\/networks\/fuji\/rewards/);
    expectClean(out);
    expect(commitLog(w.dataDir, 'rewards')).toEqual({});
    expect(Object.keys(commitLog(w.dataDir, 'delegators')).length).toBeGreaterThan(0);
  });

  it('a lock held by another live process: exit 75 naming the holder, nothing written', async () => {
    const w = workspace();
    const holder = liveProcess();
    try {
      holdLock(w.dataDir, holder.pid as number);
      const out = await runExtract({ pipeline: w.pipelinePath, dataDir: w.dataDir, apiKey: GOOD_KEY });
      expect(out.code).toBe(75);
      expect(out.stderr).toMatch(new RegExp(`holds .*avalake\\.lock: pid ${holder.pid} on `));
      expect(out.stderr).toMatch(/--wait/);
      expectClean(out);
      expect(filesUnder(w.dataDir)).toEqual(['avalake.lock']);
      // With --json, stdout still holds one object saying why: a script reading it does not find nothing.
      const json = await runExtract({
        pipeline: w.pipelinePath,
        dataDir: w.dataDir,
        apiKey: GOOD_KEY,
        json: true,
      });
      expect(json.code).toBe(75);
      expect(JSON.parse(json.stdout)).toMatchObject({
        status: 'locked',
        partitions: [],
        error: expect.stringMatching(new RegExp(`pid ${holder.pid} on `)),
      });
      expectClean(json);
    } finally {
      holder.kill();
    }
  });

  it('extract --wait queues behind the holder and succeeds once the lock is released', async () => {
    const w = workspace();
    const holder = liveProcess();
    try {
      holdLock(w.dataDir, holder.pid as number);
      let done = false;
      const run = runExtract({
        pipeline: w.pipelinePath,
        dataDir: w.dataDir,
        apiKey: GOOD_KEY,
        wait: true,
      }).finally(() => {
        done = true;
      });
      await new Promise((r) => setTimeout(r, 1200));
      expect(done).toBe(false);
      expect(commitLog(w.dataDir)).toEqual({});
      rmSync(join(w.dataDir, 'avalake.lock'));
      const out = await run;
      expect(out.code, out.stdout + out.stderr).toBe(0);
      expectClean(out);
      expect(Object.keys(commitLog(w.dataDir)).length).toBeGreaterThan(0);
    } finally {
      holder.kill();
    }
  });
});

describe('extract as a process', () => {
  it('exits with the codes of DESIGN.md, one message each, no stack trace, no key', async () => {
    const bad = workspace('{"network": "fuji",');
    const good = workspace();
    const locked = workspace();
    const holder = liveProcess();
    holdLock(locked.dataDir, holder.pid as number);
    const closed = `http://127.0.0.1:${closedPort}`;
    try {
      const [notJson, unknownStream, underFile, lock, unreachable] = await Promise.all([
        runCli(['extract', bad.pipelinePath, '--data-dir', bad.dataDir], { AVALAKE_API_KEY: GOOD_KEY }),
        runCli(['extract', good.pipelinePath, '--data-dir', good.dataDir, '--streams', 'nope']),
        runCli(['extract', good.pipelinePath, '--data-dir', join(good.pipelinePath, 'x')]),
        runCli(['extract', locked.pipelinePath, '--data-dir', locked.dataDir, '--api-key', GOOD_KEY]),
        runCli([
          'extract',
          good.pipelinePath,
          '--data-dir',
          good.dataDir,
          '--streams',
          'rewards',
          '--base-url',
          closed,
          '--retries',
          '0',
          '--api-key',
          GOOD_KEY,
        ]),
      ]);
      expect([notJson.code, unknownStream.code, underFile.code, lock.code, unreachable.code]).toEqual([
        2, 2, 2, 75, 1,
      ]);
      expect(notJson.stderr).toMatch(/is not JSON/);
      expect(unknownStream.stderr).toMatch(/unknown stream "nope"/);
      expect(underFile.stderr).toMatch(/is a file, not a directory/);
      expect(lock.stderr).toMatch(new RegExp(`pid ${holder.pid}`));
      expect(unreachable.stdout).toMatch(/ECONNREFUSED/);
      for (const out of [notJson, unknownStream, underFile, lock, unreachable]) expectClean(out);
      expect(existsSync(bad.dataDir)).toBe(false);
      expect(parquetFiles(good.dataDir)).toEqual([]);
    } finally {
      holder.kill();
    }
  }, 30_000);
});

/** A stream whose requests go to the node's JSON-RPC rather than the Data or Metrics API. */
function isRpc(stream: StreamDefinition): boolean {
  const probe = { network: 'fuji' };
  try {
    const request =
      stream.strategy === 'height-walk'
        ? stream.tip({} as never, probe)
        : stream.strategy === 'snapshot'
          ? stream.request({} as never, probe)
          : undefined;
    return request?.kind === 'rpc';
  } catch {
    return false;
  }
}
