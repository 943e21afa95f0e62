import { existsSync, mkdtempSync, readFileSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { resolveExtractConfig } from '../../src/extract/config.ts';
import {
  CommitConflictError,
  type LiveFile,
  openLake,
  partitionId,
  readLakeState,
} from '../../src/load/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, fewMetrics } from '../helpers/extract.ts';
import { runCli } from '../helpers/output.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';
import {
  downloadPrefix,
  freshBucket,
  listKeys,
  parseS3Url,
  readObject,
  type S3TestServer,
  s3Client,
  startS3,
  writeObject,
} from '../helpers/s3.ts';
import { lakeTotals, sorted, truthOf } from '../helpers/truth.ts';
import { queryWarehouse } from '../helpers/warehouse.ts';
import { startWriter } from '../load/fixtures/writer-process.ts';

/**
 * `avalake repair` on a lake whose commit log is a PostgreSQL catalog: the damaged files are dropped,
 * each partition whose rows they may have held gets a `repair` commit as its new head (checkpoint back
 * to its start), the next run reads those partitions again, and a worker that read a partition before
 * the repair cannot commit over the rewind.
 */

const DAY = 86_400;
const CUT_BYTES = 1000;
/** The core streams whose totals a lake's files alone tell (the snapshots' need the commit log). */
const COUNTED = ['rewards', 'delegators', 'staking_transactions', 'utxos', 'erc20_transfers', 'icm_messages'];

let emulator: Emulator;
let postgres: Awaited<ReturnType<typeof startPostgres>>;
let s3: S3TestServer;
beforeAll(async () => {
  [emulator, postgres, s3] = await Promise.all([startEmulator(), startPostgres(), startS3()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([emulator?.close(), postgres?.stop(), s3?.stop()]);
});

const cli = (args: string[]) => runCli(args, s3.env);

type Committed = LiveFile & { stream: string };

async function committedFiles(dataDir: string, catalog: string): Promise<Committed[]> {
  const states = await readLakeState(dataDir, catalog);
  return [...states].flatMap(([stream, state]) =>
    state.files.filter((f) => f.table === 'data').map((f) => ({ ...f, stream })),
  );
}

interface Report {
  status: string;
  streams: {
    stream: string;
    dropped: { path: string; rows: number; bytes: number; foundBytes: number | null; movedTo?: string }[];
    rewound: { partition: Record<string, string>; by: string; checkpoint: unknown }[];
  }[];
}

/** Per stream, the partitions whose checkpoint is null (read from the start by the next run). */
async function atStart(dataDir: string, catalog: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [stream, state] of await readLakeState(dataDir, catalog)) {
    const ids = [...state.partitions.values()]
      .filter((p) => p.checkpoint === null)
      .map((p) => partitionId(p.partition));
    if (ids.length > 0) out[stream] = ids.sort();
  }
  return out;
}

it('a bucket lake: status names a deleted and a cut-short object, repair drops them and rewinds, the next run reads them again, the build works', async () => {
  const w = coreWorkspace(emulator, (p) => {
    p.flush = { rows: 200 };
    fewMetrics(p);
  });
  const dataDir = await freshBucket(s3, 'repair');
  const catalog = await freshDatabase(postgres.url);
  const lake = ['--data-dir', dataDir, '--catalog', catalog];
  const extract = async () => {
    const out = await cli(['extract', w.pipelinePath, ...lake, '--quiet']);
    expect(out.code, out.stderr).toBe(0);
  };
  // Day one compacted (merged files: known by their folder only), day two not even folded.
  await extract();
  expect((await cli(['compact', ...lake])).code).toBe(0);
  const dayOne = new Set((await committedFiles(dataDir, catalog)).map((f) => f.path));
  emulator.advance(DAY);
  await extract();
  const files = await committedFiles(dataDir, catalog);
  const merged = files.find((f) => f.stream === 'utxos' && f.replaces && dayOne.has(f.path));
  const recent = files.find((f) => f.stream === 'delegators' && !dayOne.has(f.path));
  if (!merged || !recent) throw new Error('no files to damage');
  const { bucket, prefix } = parseS3Url(dataDir);
  const client = s3Client(s3.endpoint);
  try {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}/lake/${merged.path}` }));
  } finally {
    client.destroy();
  }
  const whole = await readObject(s3, dataDir, `lake/${recent.path}`);
  await writeObject(s3, dataDir, `lake/${recent.path}`, whole.subarray(0, CUT_BYTES));

  const damaged = await cli(['status', ...lake, '--json']);
  expect(damaged.code, damaged.stderr).toBe(1);
  expect((JSON.parse(damaged.stdout) as { damaged: unknown[] }).damaged).toEqual(
    expect.arrayContaining([
      { stream: 'utxos', path: merged.path, bytes: merged.bytes, foundBytes: null },
      { stream: 'delegators', path: recent.path, bytes: recent.bytes, foundBytes: CUT_BYTES },
    ]),
  );
  const said = await cli(['status', ...lake]);
  expect(said.stdout).toContain('without one, run "avalake repair"');
  // The same refusal as before for a run: the unfolded commit's file stops the lake from opening.
  const stopped = await cli(['extract', w.pipelinePath, ...lake, '--quiet']);
  expect(stopped.code).toBe(1);
  expect(stopped.stderr).toContain('run "avalake repair"');

  // A dry run says what it would do and writes nothing.
  const keys = await listKeys(s3, dataDir);
  const heads = await atStart(dataDir, catalog);
  const dry = await cli(['repair', ...lake, '--dry-run']);
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.stdout).toContain(`utxos: would drop ${merged.path} (missing; it held ${merged.rows} rows)`);
  expect(dry.stdout).toContain(
    `delegators: would drop ${recent.path} (${CUT_BYTES} bytes where ${recent.bytes} were committed; to be moved to lake/_damaged/`,
  );
  expect(dry.stdout).toContain('nothing written (--dry-run): a repair would drop 2 files in 2 streams');
  expect(await listKeys(s3, dataDir)).toEqual(keys);
  expect(await atStart(dataDir, catalog)).toEqual(heads);

  const repaired = await cli(['repair', ...lake, '--json']);
  expect(repaired.code, repaired.stderr).toBe(0);
  const report = JSON.parse(repaired.stdout) as Report;
  expect(report.status).toBe('repaired');
  const byStream = Object.fromEntries(report.streams.map((s) => [s.stream, s]));
  expect(Object.keys(byStream).sort()).toEqual(['delegators', 'utxos']);
  expect(byStream.utxos?.dropped).toEqual([
    { path: merged.path, table: 'data', rows: merged.rows, bytes: merged.bytes, foundBytes: null },
  ]);
  expect(byStream.delegators?.dropped).toEqual([
    {
      path: recent.path,
      table: 'data',
      rows: recent.rows,
      bytes: recent.bytes,
      foundBytes: CUT_BYTES,
      movedTo: `_damaged/${recent.path}`,
    },
  ]);
  // A merged file is the folder's: every partition writing there; a flush's file its own partition.
  expect(byStream.utxos?.rewound.every((r) => r.by === 'folder')).toBe(true);
  expect(byStream.utxos?.rewound.length).toBeGreaterThan(0);
  expect(byStream.delegators?.rewound.map((r) => r.by)).toEqual(['file']);
  // The cut-short object is out of the stream's folders (no glob of them meets it), kept aside.
  const after = await listKeys(s3, dataDir);
  expect(after).not.toContain(`lake/${recent.path}`);
  expect(after).toContain(`lake/_damaged/${recent.path}`);
  // Exactly the rewound partitions start over; the files are out of the live set.
  const rewound = Object.fromEntries(
    report.streams.map((s) => [s.stream, s.rewound.map((r) => partitionId(r.partition)).sort()]),
  );
  expect(await atStart(dataDir, catalog)).toEqual(rewound);
  const live = new Set((await committedFiles(dataDir, catalog)).map((f) => f.path));
  expect(live.has(merged.path) || live.has(recent.path)).toBe(false);

  const clean = await cli(['status', ...lake, '--json']);
  expect(clean.code, clean.stderr).toBe(0);
  expect((JSON.parse(clean.stdout) as { damaged: unknown[] }).damaged).toEqual([]);
  const again = await cli(['repair', ...lake]);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toBe(`nothing to repair in ${dataDir}: every file the commit log names is in place\n`);

  // The next run reads the rewound partitions again: the lake holds what the source holds.
  emulator.advance(DAY);
  const run = await cli(['extract', w.pipelinePath, ...lake, '--json']);
  expect(run.code, run.stderr).toBe(0);
  const summary = JSON.parse(run.stdout) as {
    partitions: { stream: string; partition: Record<string, string>; rows: number }[];
  };
  for (const s of report.streams)
    for (const r of s.rewound) {
      const read = summary.partitions.find(
        (p) => p.stream === s.stream && partitionId(p.partition) === partitionId(r.partition),
      );
      expect(read?.rows, `${s.stream} ${partitionId(r.partition)}`).toBeGreaterThan(0);
    }
  expect(await atStart(dataDir, catalog)).toEqual({});
  const copy = mkdtempSync(join(tmpdir(), 'avalake-bucket-copy-'));
  await downloadPrefix(s3, dataDir, copy);
  const { pipeline } = await resolveExtractConfig({ pipeline: w.pipelinePath }, {});
  expect(sorted(await lakeTotals(copy, COUNTED))).toEqual(sorted(await truthOf(emulator, pipeline, COUNTED)));

  // A build from scratch, and compaction, go through every stream.
  const localDir = join(w.dir, 'local');
  const built = await cli(['build', ...lake, '--local-dir', localDir]);
  expect(built.code, built.stderr).toBe(0);
  const [delegators] = await queryWarehouse(localDir, 'select count(*)::integer as n from stg_delegators');
  expect(delegators?.n).toBeGreaterThan(0);
  const compacted = await cli(['compact', ...lake, '--json']);
  expect(compacted.code, compacted.stderr).toBe(0);
}, 300_000);

it('a local lake with a catalog: a worker holding a lease cannot commit over the rewind; one that claims after reads it', async () => {
  const w = coreWorkspace(emulator, (p) => {
    p.flush = { rows: 200 };
    fewMetrics(p);
  });
  const catalog = await freshDatabase(postgres.url);
  const lake = ['--data-dir', w.dataDir, '--catalog', catalog];
  const extracted = await cli(['extract', w.pipelinePath, ...lake, '--quiet']);
  expect(extracted.code, extracted.stderr).toBe(0);
  // A delegators partition and the file of its newest commit.
  const state = (await readLakeState(w.dataDir, catalog)).get('delegators');
  const target = [...(state?.partitions.values() ?? [])].find((p) =>
    state?.files.some((f) => f.table === 'data' && f.seq === p.seq),
  );
  const file = state?.files.find((f) => f.seq === target?.seq);
  if (!target || !file || target.checkpoint === null) throw new Error('no delegators file');
  const { partition } = target;
  // Two workers that opened the lake before its damage (a lifecycle rule expiring objects under a running
  // worker): one holds the partition's lease, one claims the partition after the repair.
  const holder = await openLake({ dataDir: w.dataDir, catalog });
  const later = await openLake({ dataDir: w.dataDir, catalog });
  try {
    expect(await holder.claim('delegators', partition)).toBe('claimed');
    expect(holder.readCheckpoint('delegators', partition)).toEqual(target.checkpoint);
    unlinkSync(join(w.dataDir, 'lake', file.path));
    const other = state?.files.find((f) => f.table === 'data' && f.seq !== target.seq && !f.replaces);
    if (other) truncateSync(join(w.dataDir, 'lake', other.path), CUT_BYTES);
    expect((await cli(['status', ...lake])).code).toBe(1);

    const repaired = await cli(['repair', ...lake]);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stdout).toContain(
      `delegators: dropped ${file.path} (missing; it held ${file.rows} rows)`,
    );
    expect(repaired.stdout).toMatch(/^repaired \d+ files? in \d+ streams?: the next "avalake run"/m);
    if (other) expect(existsSync(join(w.dataDir, 'lake', '_damaged', other.path))).toBe(true);
    const rewound = await atStart(w.dataDir, catalog);
    expect(rewound.delegators).toContain(partitionId(partition));

    // The holder's commits, made from the checkpoint it read before the repair, are refused: a flush
    // (its staged file dropped) and a check (which would have put the old checkpoint back).
    const flush = holder.writeRejects('delegators', partition, [{ raw: '{}', reason: 'test' }]);
    await expect(flush).rejects.toThrow(CommitConflictError);
    await expect(flush).rejects.toThrow('"avalake repair" rewound the partition to its start meanwhile');
    await expect(holder.check('delegators', partition)).rejects.toThrow(CommitConflictError);
    expect(await atStart(w.dataDir, catalog)).toEqual(rewound);
    // (A run gives a failed partition up as `done`, and the others of its wave leave it to the next run;
    // released here, so that the second worker may claim it in this one.)
    await holder.finish('delegators', partition, 'released');

    // A worker that claims the partition after the repair reads the rewind as it claims it.
    expect(later.readCheckpoint('delegators', partition)).toEqual(target.checkpoint);
    expect(await later.claim('delegators', partition)).toBe('claimed');
    expect(later.readCheckpoint('delegators', partition)).toBeUndefined();
    await later.check('delegators', partition);
    expect(await atStart(w.dataDir, catalog)).toEqual(rewound);
    await later.finish('delegators', partition, 'released');
  } finally {
    await holder.close();
    await later.close();
  }

  // No staged file of the refused flush is left, and the lake is whole: the next run reads the rewound
  // partitions again, and holds what the source holds.
  expect((await cli(['status', ...lake])).code).toBe(0);
  emulator.advance(DAY);
  const next = await cli(['extract', w.pipelinePath, ...lake, '--quiet']);
  expect(next.code, next.stderr).toBe(0);
  expect(await atStart(w.dataDir, catalog)).toEqual({});
  const { pipeline } = await resolveExtractConfig({ pipeline: w.pipelinePath }, {});
  expect(sorted(await lakeTotals(w.dataDir, COUNTED))).toEqual(
    sorted(await truthOf(emulator, pipeline, COUNTED)),
  );
  const built = await cli(['build', ...lake]);
  expect(built.code, built.stderr).toBe(0);
}, 300_000);

/** The catalog's `repair` records, and how many of them come after their stream's folded state. */
async function unfoldedRepairs(catalog: string): Promise<{ repairs: number; unfolded: number }> {
  const client = new pg.Client({ connectionString: catalog });
  await client.connect();
  try {
    const { rows } = await client.query<{ repairs: number; unfolded: number }>(
      `select count(*)::integer as repairs,
              count(*) filter (where c.commit_id > coalesce(s.through_commit, 0))::integer as unfolded
       from avalake.commits c left join avalake.states s using (stream)
       where c.record->>'kind' = 'repair'`,
    );
    return { repairs: rows[0]?.repairs ?? 0, unfolded: rows[0]?.unfolded ?? 0 };
  } finally {
    await client.end();
  }
}

/**
 * A real HTTP server in front of the emulator that holds the first request `holds` picks until released:
 * a worker caught mid-partition, its lease held, its checkpoint read.
 */
async function holdingFront(target: string, holds: (url: string) => boolean) {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reached = () => {};
  const held = new Promise<void>((resolve) => {
    reached = resolve;
  });
  let holding = true;
  const server = createServer(async (req, res) => {
    if (holding && holds(req.url ?? '')) {
      holding = false;
      reached();
      await released;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const { host: _host, connection: _connection, ...headers } = req.headers;
    const answer = await request(`${target}${req.url}`, {
      method: req.method as 'GET' | 'POST',
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    const text = await answer.body.text();
    const { 'transfer-encoding': _te, connection: _c, 'content-length': _l, ...back } = answer.headers;
    res.writeHead(answer.statusCode, back);
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url, held, release, close };
}

it('a running extract whose partition is rewound under it gives that partition up (exit 3, naming the repair), and the next run reads it', async () => {
  const w = coreWorkspace(emulator, (p) => {
    p.streams = ['delegators', 'rewards'];
  });
  const catalog = await freshDatabase(postgres.url);
  const lake = ['--data-dir', w.dataDir, '--catalog', catalog];
  const first = await cli(['extract', w.pipelinePath, ...lake, '--quiet']);
  expect(first.code, first.stderr).toBe(0);
  const state = (await readLakeState(w.dataDir, catalog)).get('delegators');
  const target = [...(state?.partitions.values() ?? [])].find((p) =>
    state?.files.some((f) => f.table === 'data' && f.seq === p.seq),
  );
  const file = state?.files.find((f) => f.seq === target?.seq);
  if (!target || !file) throw new Error('no delegators file');
  const subject = target.partition.subject as string;

  // The next run, through a front that holds its first request of that partition.
  const front = await holdingFront(
    emulator.url,
    (url) => url.includes('/delegators?') && url.includes(subject),
  );
  const pipeline = JSON.parse(readFileSync(w.pipelinePath, 'utf8')) as { urls: Record<string, string> };
  pipeline.urls.data = front.url;
  const throughFront = join(w.dir, 'through-front.json');
  writeFileSync(throughFront, JSON.stringify(pipeline));
  try {
    emulator.advance(DAY);
    const running = cli(['extract', throughFront, ...lake, '--json']);
    await front.held;
    // Damaged under the running worker, and repaired while it holds the partition's lease.
    unlinkSync(join(w.dataDir, 'lake', file.path));
    const repaired = await cli(['repair', ...lake, '--json']);
    expect(repaired.code, repaired.stderr).toBe(0);
    const report = JSON.parse(repaired.stdout) as Report;
    expect(report.streams.map((s) => [s.stream, s.rewound.map((r) => r.partition)])).toEqual([
      ['delegators', [target.partition]],
    ]);
    // Folded at once: a reader (an older avalake too) meets the repair in the stream's state.
    expect(await unfoldedRepairs(catalog)).toEqual({ repairs: 1, unfolded: 0 });
    front.release();
    const ran = await running;
    // The worker's commit from the checkpoint it read before the repair is refused: that partition failed
    // for this run, naming the repair; the others committed.
    expect(ran.code, ran.stderr).toBe(3);
    const summary = JSON.parse(ran.stdout) as {
      partitions: { stream: string; partition: Record<string, string>; status: string; error?: string }[];
    };
    const failed = summary.partitions.filter((p) => p.status === 'failed');
    expect(failed.map((p) => [p.stream, p.partition])).toEqual([['delegators', target.partition]]);
    expect(failed[0]?.error).toContain('"avalake repair" rewound the partition to its start meanwhile');
  } finally {
    front.release();
    await front.close();
  }
  // The rewind stands: the partition starts over at the next run, which makes the lake whole.
  expect(await atStart(w.dataDir, catalog)).toEqual({ delegators: [partitionId(target.partition)] });
  expect((await cli(['status', ...lake])).code).toBe(0);
  const next = await cli(['extract', w.pipelinePath, ...lake, '--quiet']);
  expect(next.code, next.stderr).toBe(0);
  expect(await atStart(w.dataDir, catalog)).toEqual({});
  const { pipeline: resolved } = await resolveExtractConfig({ pipeline: w.pipelinePath }, {});
  const streams = ['delegators', 'rewards'];
  const truth = await truthOf(emulator, resolved, streams);
  expect(sorted(await lakeTotals(w.dataDir, streams))).toEqual(
    sorted({ delegators: truth.delegators ?? {}, rewards: truth.rewards ?? {} }),
  );
}, 300_000);

it('a repair SIGKILLed at any step leaves the catalog as it was or repaired, and a repair run again finishes it', async () => {
  const w = coreWorkspace(emulator, (p) => {
    p.streams = ['delegators', 'rewards'];
  });
  const catalog = await freshDatabase(postgres.url);
  const lake = ['--data-dir', w.dataDir, '--catalog', catalog];
  const extracted = await cli(['extract', w.pipelinePath, ...lake, '--quiet']);
  expect(extracted.code, extracted.stderr).toBe(0);
  const [cut] = (await committedFiles(w.dataDir, catalog)).filter((f) => f.stream === 'delegators');
  if (!cut) throw new Error('no delegators file');
  truncateSync(join(w.dataDir, 'lake', cut.path), CUT_BYTES);
  const damagedPaths = async () =>
    (
      JSON.parse((await cli(['status', ...lake, '--json'])).stdout) as { damaged: { path: string }[] }
    ).damaged.map((d) => d.path);
  const fixture = fileURLToPath(new URL('../load/fixtures/repair-writer.ts', import.meta.url));
  const killedAt = async (step: string) => {
    const writer = startWriter(fixture, [w.dataDir, step, catalog]);
    await writer.ready;
    const deadline = Date.now() + 60_000;
    while (writer.step() !== step && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(writer.step()).toBe(step);
    await writer.kill();
  };
  // Killed before its transaction: the catalog as it was (the cut file, once aside, is missing).
  const before = await atStart(w.dataDir, catalog);
  for (const step of ['plan', 'aside', 'commit']) {
    await killedAt(step);
    expect(await damagedPaths()).toEqual([cut.path]);
    expect(await atStart(w.dataDir, catalog)).toEqual(before);
  }
  expect(existsSync(join(w.dataDir, 'lake', '_damaged', cut.path))).toBe(true);
  // Killed after it (its run and its stream lock gone with it): repaired.
  await killedAt('done');
  expect(await damagedPaths()).toEqual([]);
  expect((await atStart(w.dataDir, catalog)).delegators?.length).toBeGreaterThan(0);
  const again = await cli(['repair', ...lake]);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toContain('nothing to repair');
  const next = await cli(['extract', w.pipelinePath, ...lake, '--quiet']);
  expect(next.code, next.stderr).toBe(0);
  expect(await atStart(w.dataDir, catalog)).toEqual({});
}, 300_000);

it('an avalake that does not know a kind of record refuses the catalog, naming it, rather than misread it', async () => {
  const catalog = await freshDatabase(postgres.url);
  const client = new pg.Client({ connectionString: catalog });
  await client.connect();
  const w = coreWorkspace(emulator, (p) => {
    p.streams = ['rewards'];
  });
  try {
    const extracted = await cli([
      'extract',
      w.pipelinePath,
      '--data-dir',
      w.dataDir,
      '--catalog',
      catalog,
      '--quiet',
    ]);
    expect(extracted.code, extracted.stderr).toBe(0);
    await client.query(
      `insert into avalake.commits (stream, seq, partition_id, record) values ('rewards', 999999, null, $1)`,
      [JSON.stringify({ format: 1, kind: 'rebase', stream: 'rewards', seq: 999999 })],
    );
  } finally {
    await client.end();
  }
  const status = await cli(['status', '--data-dir', w.dataDir, '--catalog', catalog]);
  expect(status.code).not.toBe(0);
  expect(status.stderr).toContain(
    'catalog record rewards #999999 is of a kind this avalake does not know ("rebase")',
  );
  expect(status.stderr).toContain('upgrade avalake');
}, 120_000);
