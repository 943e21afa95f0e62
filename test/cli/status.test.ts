import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ageText, checkpointText, type LakeStatus, readStatus, status } from '../../src/cli/status.ts';
import type { demoPipelineOf } from '../../src/emulator/demo-pipeline.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import type { RunSummary } from '../../src/extract/run.ts';
import { durationText } from '../../src/warehouse/duration.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce } from '../helpers/extract.ts';
import { captureOutput, runCli } from '../helpers/output.ts';

/** Runs `status` in-process, capturing its output. */
const runStatus = (args: { dataDir?: string; json?: boolean }, now?: number) =>
  captureOutput(() => status(args, {}, now));

const keyOf = (stream: string, partition: Record<string, string>) =>
  `${stream} ${JSON.stringify(Object.entries(partition).sort())}`;

/** Rows and rejects per partition, summed over runs. */
function totalsOf(...summaries: RunSummary[]) {
  const totals = new Map<string, { rows: number; rejects: number }>();
  for (const s of summaries)
    for (const p of s.partitions) {
      const t = totals.get(keyOf(p.stream, p.partition)) ?? { rows: 0, rejects: 0 };
      totals.set(keyOf(p.stream, p.partition), { rows: t.rows + p.rows, rejects: t.rejects + p.rejects });
    }
  return totals;
}

/**
 * Commit `seq` of a stream as the data directory holds it: its record file, or, once the log folded it
 * (a run's checks are written into the state as the lake closes), its partition's entry in the state.
 */
function committedOnDisk(dataDir: string, stream: string, seq: number) {
  const dir = join(dataDir, 'lake', '_commits', stream);
  const recordFile = join(dir, `${String(seq).padStart(10, '0')}.json`);
  if (existsSync(recordFile)) return JSON.parse(readFileSync(recordFile, 'utf8'));
  const newestState = readdirSync(dir)
    .filter((name) => name.startsWith('state-'))
    .sort()
    .at(-1);
  const state = JSON.parse(readFileSync(join(dir, newestState ?? 'no state file'), 'utf8'));
  return (state.partitions as { seq: number }[]).find((p) => p.seq === seq);
}

describe('avalake status', () => {
  let emulator: Emulator;
  let workspace: ReturnType<typeof coreWorkspace>;

  beforeAll(async () => {
    emulator = await startEmulator();
    // One partition or two of every strategy: cursor, newest-first, snapshot.
    workspace = coreWorkspace(emulator, (raw) => {
      const p = raw as ReturnType<typeof demoPipelineOf> & Record<string, unknown>;
      p.primary.addresses = p.primary.addresses.slice(0, 1);
      p.primary.nodeIds = p.primary.nodeIds.slice(0, 1);
      p.primary.subnets = p.primary.subnets.slice(0, 1);
      p.evm = { chains: p.evm.chains.slice(0, 1), addresses: p.evm.addresses.slice(0, 1), collections: [] };
      p.icm.addresses = p.icm.addresses.slice(0, 1);
      raw.metrics = {
        chains: p.metrics.chains.slice(0, 1),
        metrics: ['txCount', 'avgTps'],
        intervals: ['day'],
      };
    });
  });
  afterAll(() => emulator.close());

  it('says nothing was extracted yet for a missing data directory, and exits 0', async () => {
    const dataDir = join(workspace.dir, 'never');
    const table = await runStatus({ dataDir });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/nothing extracted yet into .*never: no commits\. Run "avalake extract/);
    const json = await runStatus({ dataDir, json: true });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      dataDir,
      extracted: false,
      lockedBy: null,
      buildingBy: null,
      partitions: [],
      damaged: [],
    });
  });

  it('refuses a data directory that is a file: exit 2', async () => {
    const out = await runStatus({ dataDir: workspace.pipelinePath });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/pipeline\.json is not a directory/);
  });

  it('reads the commit log while an extract holds the lock and writes', async () => {
    const dataDir = join(workspace.dir, 'concurrent');
    const run = extractOnce(workspace.pipelinePath, dataDir);
    let finished = false;
    void run.finally(() => {
      finished = true;
    });
    const seen: number[] = [];
    while (!finished) {
      const s = await readStatus(dataDir);
      seen.push(s.partitions.length);
      await new Promise((r) => setTimeout(r, 20));
    }
    const summary = await run;
    expect(summary.status).toBe('ok');
    // Partitions only ever appear, never flicker, and status never failed on a half-written record.
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect((await readStatus(dataDir)).partitions).toHaveLength(summary.partitions.length);
  });

  it('reports every partition of a real extract: commits, rows, rejects, checkpoint, freshness', async () => {
    const started = Date.now();
    const first = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(first.status).toBe('ok');
    emulator.advance(86_400);
    const second = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(second.status).toBe('ok');

    const now = Date.now() + 300_000;
    const out = await runStatus({ dataDir: workspace.dataDir, json: true }, now);
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout) as LakeStatus;
    expect(report.extracted).toBe(true);
    expect(report.lockedBy).toBeNull();

    const expected = totalsOf(first, second);
    expect(new Set(report.partitions.map((p) => keyOf(p.stream, p.partition)))).toEqual(
      new Set(expected.keys()),
    );
    expect(new Set(report.partitions.map((p) => p.stream))).toEqual(
      new Set([
        'rewards',
        'delegators',
        'staking_transactions',
        'utxos',
        'erc20_transfers',
        'icm_messages',
        'metrics',
        'validators',
        'validator_delegators',
      ]),
    );
    for (const p of report.partitions) {
      const want = expected.get(keyOf(p.stream, p.partition));
      expect({ rows: p.rows, rejects: p.rejects }, keyOf(p.stream, p.partition)).toEqual(want);
      // The partition's newest commit on disk is its checkpoint.
      const record = committedOnDisk(workspace.dataDir, p.stream, p.lastSeq);
      expect(record.partition).toEqual(p.partition);
      expect(p.checkpoint).toEqual(record.checkpoint);
      expect(p.lastCommitAt).toBe(record.committedAt);
      expect(p.commits).toBeGreaterThanOrEqual(1);
      // Five minutes after the second run, plus however long the runs took (a slow machine's minutes).
      expect(p.ageSeconds).toBeGreaterThanOrEqual(300);
      expect(p.ageSeconds).toBeLessThanOrEqual(Math.ceil((now - started) / 1000));
    }
    const total = report.partitions.reduce((n, p) => n + p.rows, 0);
    expect(total).toBe([...expected.values()].reduce((n, t) => n + t.rows, 0));
    expect(total).toBeGreaterThan(0);

    const table = await runStatus({ dataDir: workspace.dataDir }, now);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^stream\s+partition\s+commits\s+last\s+committed\s+age\s+rows\s+rejects\s+checkpoint$/,
    );
    expect(lines).toHaveLength(report.partitions.length + 2);
    const validatorsAge = report.partitions.find((p) => p.stream === 'validators')?.ageSeconds ?? -1;
    expect(table.stdout).toMatch(
      new RegExp(
        `^validators\\s+subnet=primary\\s.*\\s${durationText(validatorsAge)}\\s.*snapshotAt=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\dZ$`,
        'm',
      ),
    );
    expect(table.stdout).toMatch(/^staking_transactions\s.*cursor=\d{4}-\d\d-\d\dT\d\d:\d\dZ$/m);
    expect(table.stdout).toMatch(/^metrics\s+chain=\S+ metric=avgTps interval=day\s.*head=/m);
    // The run's commits span however long it took: the ages are the newest and oldest of the report's.
    const ages = report.partitions.map((p) => p.ageSeconds);
    expect(lines.at(-1)).toBe(
      `9 streams, ${report.partitions.length} partitions, ${total} rows, 0 rejects; newest commit ${durationText(Math.min(...ages))} ago, oldest partition last committed ${durationText(Math.max(...ages))} ago`,
    );
    expect(report.partitions.every((p) => p.aheadSeconds === undefined)).toBe(true);
    expect(table.stdout).not.toContain('warning');

    // Read on a host whose clock is an hour behind the one that committed: every commit is dated ahead
    // of it. The ages say so (negative), and one line warns that freshness cannot be trusted.
    const behind = Math.max(...report.partitions.map((p) => Date.parse(p.lastCommitAt))) - 3_600_000;
    const skewed = JSON.parse((await runStatus({ dataDir: workspace.dataDir, json: true }, behind)).stdout);
    for (const p of skewed.partitions as LakeStatus['partitions']) {
      expect(p.ageSeconds).toBe(0);
      expect(p.aheadSeconds).toBe(Math.round((Date.parse(p.lastCommitAt) - behind) / 1000));
    }
    // Exactly half a second past a whole one: the lead rounds as itself, not as a negated age.
    const anyPartition = report.partitions[0] as LakeStatus['partitions'][number];
    const halfway = Date.parse(anyPartition.lastCommitAt) - 3_598_500;
    const rounded = JSON.parse((await runStatus({ dataDir: workspace.dataDir, json: true }, halfway)).stdout);
    expect(rounded.partitions[0].aheadSeconds).toBe(3599);
    const warned = (await runStatus({ dataDir: workspace.dataDir }, behind)).stdout.trimEnd().split('\n');
    expect(warned.at(-1)).toMatch(
      new RegExp(
        `^warning: ${report.partitions.length} partitions' last commit is dated up to 1h 0m after this host's clock \\(age shown negative\\): the clocks of the hosts that run avalake disagree`,
      ),
    );
    expect(warned.filter((l) => /^validators\s/.test(l))[0]).toMatch(/\s-(1h 0m|59m \d+s)\s/);
  });

  /** The data directory's and the warehouse's lock files, written as these holders wrote them. */
  function writeLocks(run: object, build: object) {
    const lockFile = join(workspace.dataDir, 'avalake.lock');
    const buildLockFile = join(workspace.dataDir, 'warehouse.duckdb.lock');
    mkdirSync(workspace.dataDir, { recursive: true });
    writeFileSync(lockFile, JSON.stringify(run));
    writeFileSync(buildLockFile, JSON.stringify(build));
    return { lockFile, buildLockFile };
  }

  /** An ISO time `ms` after this process started (a lock taken before its holder started names a pid given again). */
  const afterStart = (ms: number) => new Date(Date.now() - process.uptime() * 1000 + ms).toISOString();

  it('shows a run and a build in progress from their lock files, without taking or touching them', async () => {
    const holder = {
      pid: process.pid,
      hostname: hostname(),
      since: afterStart(100),
      command: 'x',
      token: 't',
    };
    const builder = { ...holder, since: afterStart(200), command: 'avalake build', token: 'b' };
    const { lockFile, buildLockFile } = writeLocks(holder, builder);
    try {
      const out = await runStatus({ dataDir: workspace.dataDir });
      expect(out.code).toBe(0);
      expect(out.stdout).toContain(
        `a run holds the data directory: pid ${process.pid} on ${hostname()} since ${holder.since}`,
      );
      expect(out.stdout).toContain(
        `a build holds the warehouse: pid ${process.pid} on ${hostname()} since ${builder.since}`,
      );
      const json = JSON.parse(
        (await runStatus({ dataDir: workspace.dataDir, json: true })).stdout,
      ) as LakeStatus;
      expect({ lockedBy: json.lockedBy, buildingBy: json.buildingBy }).toEqual({
        lockedBy: { ...holder, live: true },
        buildingBy: { ...builder, live: true },
      });
      expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toEqual(holder);
      expect(JSON.parse(readFileSync(buildLockFile, 'utf8'))).toEqual(builder);
    } finally {
      rmSync(buildLockFile);
    }
  });

  it('tells a stale lock from a live one: its process gone, or its pid given to a later process', async () => {
    // A run killed with kill -9: its pid names no process now.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid as number;
    const dead = {
      pid: gone,
      hostname: hostname(),
      since: new Date().toISOString(),
      command: 'x',
      token: 't',
    };
    // A build killed an hour before this very process started, which has since been given its pid.
    const reused = { ...dead, pid: process.pid, since: afterStart(-3_600_000) };
    const { lockFile, buildLockFile } = writeLocks(dead, reused);
    try {
      const out = await runStatus({ dataDir: workspace.dataDir });
      expect(out.code).toBe(0);
      expect(out.stdout).toContain(
        `a stale lock: pid ${gone} on ${hostname()}, since ${dead.since}, is no longer running; the next run takes the lock over`,
      );
      expect(out.stdout).toContain(
        `a stale lock: pid ${process.pid} on ${hostname()}, since ${reused.since}, is no longer running; the next build takes the lock over`,
      );
      const json = JSON.parse(
        (await runStatus({ dataDir: workspace.dataDir, json: true })).stdout,
      ) as LakeStatus;
      expect([json.lockedBy?.live, json.buildingBy?.live]).toEqual([false, false]);
    } finally {
      rmSync(lockFile);
      rmSync(buildLockFile);
    }
  });

  it('runs as a process: exit 0 and JSON on stdout', async () => {
    const result = await runCli(['status', '--data-dir', workspace.dataDir, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as LakeStatus).partitions.length).toBeGreaterThan(10);
  }, 20_000);
});

describe('status formatting', () => {
  it('writes ages a person reads at a glance', () => {
    expect([0, 59, 60, 3599, 3600, 3 * 3600 + 5 * 60, 86_400, 2 * 86_400 + 4 * 3600].map(ageText)).toEqual([
      '0s',
      '59s',
      '1m 0s',
      '59m 59s',
      '1h 0m',
      '3h 5m',
      '1d 0h',
      '2d 4h',
    ]);
  });

  it('shortens checkpoints: times readable, bookkeeping counted, a walk in progress named', () => {
    expect(checkpointText(null)).toBe('-');
    expect(checkpointText({ cursor: 1_793_577_600, boundary: ['a', 'b'] })).toBe('cursor=2026-11-02T00:00Z');
    expect(checkpointText({ cursor: 4_123_456, boundary: [], window: { pageToken: 'x' } })).toBe(
      'cursor=4123456 paging',
    );
    expect(checkpointText({ snapshotAt: 1_793_577_600_000 })).toBe('snapshotAt=2026-11-02T00:00Z');
    expect(
      checkpointText({
        head: '["0xabcdef0123456789abcdef",3]',
        belowHead: ['["0x12",0]', '["0x34",1]'],
        since: 1_793_577_600,
        open: { a: '1', b: '2' },
      }),
    ).toBe('head=0xabcdef…abcdef/3 since=2026-11-02T00:00Z open=2');
    expect(checkpointText({ window: { pageToken: 'x' }, head: 'opaque-token-0123456789' })).toBe(
      'paging head=opaque-t…456789',
    );
  });
});
