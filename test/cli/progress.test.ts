import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLiveDisplay, renderProgress } from '../../src/cli/progress-display.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { PipelineSchema } from '../../src/extract/pipeline.ts';
import { applyProgress, createProgressState, type ProgressEvent } from '../../src/extract/progress.ts';
import type { StreamDefinition } from '../../src/extract/stream.ts';
import { STREAMS } from '../../src/extract/streams/index.ts';
import { openLake } from '../../src/load/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace } from '../helpers/extract.ts';

const T0 = 1_700_000_000_000;

/** The lines a display shows after these events, at this time. */
function linesOf(events: ProgressEvent[], now: number, columns = 200): string[] {
  const state = createProgressState();
  for (const e of events) applyProgress(state, e);
  return renderProgress(state, now, columns);
}

const page = (
  stream: string,
  partition: string,
  at: number,
  fields: { pages: number; rows: number; retries?: number; total?: number },
): ProgressEvent => ({
  kind: 'page',
  at,
  stream,
  partition,
  rejects: 0,
  retries: 0,
  ...fields,
});

describe('the progress renderer', () => {
  it('shows per stream pages, rows, rate and retries; an estimate only where the total is known', () => {
    const events: ProgressEvent[] = [
      { kind: 'plan', at: T0, partitions: { rewards: 2, p_chain_blocks: 1, utxos: 1 } },
      { kind: 'start', at: T0, stream: 'rewards', partition: 'a' },
      { kind: 'start', at: T0, stream: 'p_chain_blocks', partition: 'fuji' },
      page('rewards', 'a', T0 + 1000, { pages: 3, rows: 300 }),
      { kind: 'retry', at: T0 + 1500, stream: 'rewards', partition: 'a', retries: 1 },
      { kind: 'start', at: T0 + 1500, stream: 'rewards', partition: 'b' },
      page('rewards', 'b', T0 + 1800, { pages: 1, rows: 100, retries: 0 }),
      // A height walk: the tip request and 100 heights, 26 made after 2 s.
      page('p_chain_blocks', 'fuji', T0 + 2000, { pages: 26, rows: 25, total: 101 }),
    ];
    const lines = linesOf(events, T0 + 2000);
    expect(lines).toHaveLength(4);
    const [rewards, blocks, utxos, total] = lines as [string, string, string, string];
    expect(rewards).toMatch(/^rewards\s+0\/2\s+4 pages\s+400 rows\s+200 rows\/s\s+1 retries\s+running$/);
    // 26 of 101 requests in 2 s: 75 left at 13 a second, about 6 s.
    expect(blocks).toMatch(/^p_chain_blocks\s+0\/1\s+26 pages\s+25 rows\s+13 rows\/s\s+25%\s+~6s left$/);
    expect(utxos).toMatch(/^utxos\s+0\/1\s+0 pages\s+0 rows\s+waiting$/);
    expect(total).toBe('extract  0/4 partitions  425 rows  2s');
    // Rewards never shows an estimate: a page-through listing does not know its length.
    expect(rewards).not.toMatch(/left|%/);
  });

  it('marks finished streams done or failed, with the rate over their own time', () => {
    const events: ProgressEvent[] = [
      { kind: 'plan', at: T0, partitions: { rewards: 1, utxos: 2 } },
      { kind: 'start', at: T0, stream: 'rewards', partition: 'a' },
      page('rewards', 'a', T0 + 500, { pages: 2, rows: 1000 }),
      {
        kind: 'end',
        at: T0 + 1000,
        stream: 'rewards',
        partition: 'a',
        status: 'done',
        pages: 2,
        rows: 1000,
        rejects: 0,
        retries: 0,
      },
      { kind: 'start', at: T0, stream: 'utxos', partition: 'x' },
      { kind: 'start', at: T0, stream: 'utxos', partition: 'y' },
      {
        kind: 'end',
        at: T0 + 100,
        stream: 'utxos',
        partition: 'x',
        status: 'done',
        pages: 1,
        rows: 5,
        rejects: 0,
        retries: 0,
      },
      {
        kind: 'end',
        at: T0 + 200,
        stream: 'utxos',
        partition: 'y',
        status: 'failed',
        pages: 9,
        rows: 0,
        rejects: 0,
        retries: 8,
      },
    ];
    // Long after: a finished stream's rate is over its own span, not up to now.
    const [rewards, utxos, total] = linesOf(events, T0 + 60_000) as [string, string, string];
    expect(rewards).toMatch(/^rewards\s+1\/1\s+2 pages\s+1,000 rows\s+1,000 rows\/s\s+done$/);
    expect(utxos).toMatch(/^utxos\s+2\/2\s+10 pages\s+5 rows\s+8 retries\s+1 failed$/);
    expect(total).toBe('extract  3/3 partitions  1,005 rows  1m 0s');
  });

  it('never wraps a line, so the redraw in place stays aligned', () => {
    const lines = linesOf(
      [{ kind: 'start', at: T0, stream: 'a_stream_with_a_rather_long_name', partition: 'p' }],
      T0 + 1000,
      30,
    );
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(30);
  });

  it('keeps below the terminal height: running streams shown, the rest folded into one line', () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const events: ProgressEvent[] = [
      { kind: 'plan', at: T0, partitions: Object.fromEntries(names.map((n) => [n, 1])) },
      { kind: 'start', at: T0, stream: 'e', partition: 'p' },
      { kind: 'start', at: T0, stream: 'a', partition: 'p' },
      {
        kind: 'end',
        at: T0,
        stream: 'a',
        partition: 'p',
        status: 'done',
        pages: 1,
        rows: 1,
        rejects: 0,
        retries: 0,
      },
    ];
    const state = createProgressState();
    for (const e of events) applyProgress(state, e);
    const lines = renderProgress(state, T0 + 1000, 100, 4);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^a\s.*done$/);
    expect(lines[1]).toMatch(/^e\s.*running$/);
    expect(lines[2]).toBe('… 4 more streams: 0 running, 0 done, 4 waiting');
    expect(lines[3]).toMatch(/^extract {2}1\/6 partitions/);
  });

  it('redraws in place at most every interval, and keeps log lines above the display', async () => {
    const writes: string[] = [];
    const display = createLiveDisplay({ write: (t) => writes.push(t), intervalMs: 50, columns: () => 100 });
    display.update({ kind: 'plan', at: performance.now(), partitions: { rewards: 1 } });
    for (let i = 1; i <= 20; i++)
      display.update(page('rewards', 'a', performance.now(), { pages: i, rows: i * 10 }));
    await new Promise((r) => setTimeout(r, 120));
    // Twenty events, one draw.
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/rewards\s+0\/1\s+20 pages\s+200 rows/);
    display.log('warn  retrying status=503');
    // The two drawn lines are erased (cursor up 2, clear), the log line written, the display redrawn below.
    expect(writes[1]).toBe('\x1b[2F\x1b[Jwarn  retrying status=503\n');
    await new Promise((r) => setTimeout(r, 80));
    expect(writes[2]).toMatch(/^rewards/);
    display.stop();
    expect(writes.at(-1)?.startsWith('\x1b[2F\x1b[Jrewards')).toBe(true);
  });
});

describe('off a terminal', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ keys: 'secret-key-0a1b2c3d4e:pro' });
  });
  afterAll(() => emulator.close());

  /** Spawns the CLI with stderr a pipe (not a terminal) and returns what it wrote. */
  function spawnCli(args: string[]) {
    const child = spawn(process.execPath, ['bin/avalake.js', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, AVALAKE_API_KEY: 'secret-key-0a1b2c3d4e' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.on('exit', (code) => resolve({ code, stdout, stderr })),
    );
  }

  it('writes one JSON line per event, pages with --verbose, and never the API key', async () => {
    const w = coreWorkspace(emulator, (p) => {
      p.streams = ['rewards', 'p_chain_blocks'];
    });
    // A walk of the whole P-Chain is a thousand requests: start this one 40 heights below the tip.
    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(w.pipelinePath, 'utf8')));
    const blocks = STREAMS.find((s) => s.name === 'p_chain_blocks') as StreamDefinition;
    const tip = emulator.truth.primary('fuji').blockCount(Math.floor(emulator.clock.now()));
    const lake = await openLake({ dataDir: w.dataDir });
    for (const partition of blocks.partitions(pipeline)) {
      const flush = lake.begin({ stream: blocks.name, partition, schema: blocks.schema });
      await flush.append([]);
      await flush.commit({ next: tip - 40 });
    }
    await lake.close();
    const verbose = await spawnCli(['run', w.pipelinePath, '--data-dir', w.dataDir, '--json', '--verbose']);
    expect(verbose.code, verbose.stderr).toBe(0);
    const events = verbose.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const e of events) {
      expect(typeof e.time).toBe('string');
      expect(['debug', 'info', 'warn', 'error']).toContain(e.level);
    }
    const pages = events.filter((e) => e.msg === 'page');
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.find((e) => e.stream === 'p_chain_blocks')).toHaveProperty('total');
    expect(pages[0]).toMatchObject({ level: 'debug', pages: expect.any(Number), rows: expect.any(Number) });
    expect(events.filter((e) => e.msg === 'partition done').length).toBeGreaterThan(0);
    expect(events.map((e) => e.msg)).toEqual(expect.arrayContaining(['plan', 'built', 'tested']));
    expect(verbose.stdout + verbose.stderr).not.toContain('secret-key-0a1b2c3d4e');

    // Without --verbose: no page lines; with --quiet: nothing at all on a clean run.
    const plain = await spawnCli(['run', w.pipelinePath, '--data-dir', w.dataDir, '--log-format', 'pretty']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toMatch(/ page /);
    expect(plain.stderr).toMatch(/^info {2}partition done stream=\w+/m);
    const quiet = await spawnCli(['run', w.pipelinePath, '--data-dir', w.dataDir, '--json', '--quiet']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');
    const pretty = await spawnCli(['run', w.pipelinePath, '--data-dir', w.dataDir, '--log-format', 'pretty']);
    expect(pretty.code, pretty.stderr).toBe(0);
    expect(pretty.stderr).toMatch(/^info {2}partition done stream=\w+/m);
    expect(pretty.stdout).toMatch(/^run [0-9a-f-]+: ok, exit 0$/m);
  }, 60_000);
});
