import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { resolveExtractConfig } from '../../src/extract/config.ts';
import { acquireLock, lakePaths, readLakeState } from '../../src/load/index.ts';
import { queryRows, quoteIdent, quoteLiteral, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractedTwoDays, extractOnce } from '../helpers/extract.ts';
import { dataFiles, fileHashes } from '../helpers/lake.ts';
import { runCli } from '../helpers/output.ts';
import { lakeTotals, sorted, truthOf } from '../helpers/truth.ts';
import { startWriter } from '../load/fixtures/writer-process.ts';

/**
 * `avalake repair`: a lake file deleted or cut short by hand, with no backup to restore it from, is
 * dropped from the commit log and its partitions are read again by the next run, so that status,
 * compaction and a build from scratch work again and the lake holds what the source holds.
 */

const DAY = 86_400;
const SNAPSHOTS = ['validators', 'validator_delegators'];

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
}, 60_000);
afterAll(() => emulator?.close());

/** Streams of the lake with at least two data files, snapshots apart. */
async function streamsWithFiles(dataDir: string): Promise<string[]> {
  const streams: string[] = [];
  for (const stream of (await readLakeState(dataDir)).keys())
    if (!SNAPSHOTS.includes(stream) && (await dataFiles(dataDir, stream)).length >= 2) streams.push(stream);
  return streams;
}

interface Report {
  status: string;
  streams: {
    stream: string;
    dropped: { path: string; rows: number; foundBytes: number | null; movedTo?: string }[];
    rewound: { partition: Record<string, string>; by: string }[];
  }[];
}

/** Rows of a warehouse table that only one of two warehouses has, lineage columns (when read) aside. */
async function tableDifference(a: string, b: string, table: string): Promise<Record<string, unknown>> {
  return withDuckDB(':memory:', async (db) => {
    await db.run(`attach ${quoteLiteral(a)} as a (read_only)`);
    await db.run(`attach ${quoteLiteral(b)} as b (read_only)`);
    const columns = (
      await queryRows(
        db,
        `select column_name from information_schema.columns where table_catalog = 'a' and table_name = ${quoteLiteral(table)} order by ordinal_position`,
      )
    )
      .map((r) => r.column_name as string)
      .filter((c) => !/extracted_at|run_id/.test(c))
      .map(quoteIdent)
      .join(', ');
    const [diff] = await queryRows(
      db,
      `select (select count(*)::integer from a.${quoteIdent(table)}) as rows,
              (select count(*)::integer from (select ${columns} from a.${quoteIdent(table)} except all select ${columns} from b.${quoteIdent(table)})) as only_a,
              (select count(*)::integer from (select ${columns} from b.${quoteIdent(table)} except all select ${columns} from a.${quoteIdent(table)})) as only_b`,
    );
    return { ...diff };
  });
}

describe('avalake repair', () => {
  it('drops a deleted and a cut-short file, rewinds their partitions; status, compaction, the next run and a build from scratch are whole again', async () => {
    const reference = join(mkdtempSync(join(tmpdir(), 'avalake-reference-')), 'data');
    const w = await extractedTwoDays(emulator, reference);
    const [missingIn, cutIn] = (await streamsWithFiles(w.dataDir)) as [string, string];
    expect(cutIn).toBeDefined();
    const [missing] = await dataFiles(w.dataDir, missingIn);
    const [cut] = await dataFiles(w.dataDir, cutIn);
    // A snapshot's newest file holds its current answer: the next run finds the answer unchanged.
    const snapshot = (await dataFiles(w.dataDir, 'validators')).sort((a, b) => b.seq - a.seq)[0];
    if (!missing || !cut || !snapshot) throw new Error('no files');
    unlinkSync(join(w.dataDir, 'lake', missing.path));
    truncateSync(join(w.dataDir, 'lake', cut.path), 1000);
    unlinkSync(join(w.dataDir, 'lake', snapshot.path));
    expect((await runCli(['status', '--data-dir', w.dataDir])).code).toBe(1);

    // A dry run says what it would do and writes nothing.
    const before = fileHashes(w.dataDir);
    const dry = await runCli(['repair', '--data-dir', w.dataDir, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      `${missingIn}: would drop ${missing.path} (missing; it held ${missing.rows} rows)`,
    );
    expect(dry.stdout).toContain('nothing written (--dry-run): a repair would drop 3 files in 3 streams');
    expect(fileHashes(w.dataDir)).toEqual(before);

    const repaired = await runCli(['repair', '--data-dir', w.dataDir, '--json']);
    expect(repaired.code, repaired.stderr).toBe(0);
    const report = JSON.parse(repaired.stdout) as Report;
    expect(report.status).toBe('repaired');
    const byStream = Object.fromEntries(report.streams.map((s) => [s.stream, s]));
    expect(Object.keys(byStream).sort()).toEqual([missingIn, cutIn, 'validators'].sort());
    expect(byStream[missingIn]?.dropped).toEqual([
      { path: missing.path, table: 'data', rows: missing.rows, bytes: missing.bytes, foundBytes: null },
    ]);
    expect(byStream[cutIn]?.dropped).toEqual([
      {
        path: cut.path,
        table: 'data',
        rows: cut.rows,
        bytes: cut.bytes,
        foundBytes: 1000,
        movedTo: `_damaged/${cut.path}`,
      },
    ]);
    // The cut-short file is out of the stream's folders, kept aside.
    expect(existsSync(join(w.dataDir, 'lake', cut.path))).toBe(false);
    expect(existsSync(join(w.dataDir, 'lake', '_damaged', cut.path))).toBe(true);
    // Each rewound partition starts over; the others keep their checkpoints.
    const states = await readLakeState(w.dataDir);
    for (const s of report.streams) {
      expect(s.rewound.length, s.stream).toBeGreaterThan(0);
      const rewound = new Set(s.rewound.map((r) => JSON.stringify(r.partition)));
      for (const p of states.get(s.stream)?.partitions.values() ?? []) {
        expect(p.checkpoint === null, `${s.stream} ${JSON.stringify(p.partition)}`).toBe(
          rewound.has(JSON.stringify(p.partition)),
        );
        // Not caught up until its rows are read again: freshness says it is catching up, not fresh.
        expect(p.caughtUpAt === null, `${s.stream} ${JSON.stringify(p.partition)}`).toBe(
          rewound.has(JSON.stringify(p.partition)),
        );
      }
      expect(states.get(s.stream)?.files.map((f) => f.path)).not.toContain(s.dropped[0]?.path as string);
    }

    const standing = await runCli(['status', '--data-dir', w.dataDir, '--json']);
    expect(standing.code, standing.stderr).toBe(0);
    expect((JSON.parse(standing.stdout) as { damaged: unknown[] }).damaged).toEqual([]);
    const again = await runCli(['repair', '--data-dir', w.dataDir]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `nothing to repair in ${w.dataDir}: every file the commit log names is in place\n`,
    );

    // The next run reads the rewound partitions again: the lake holds what the source holds.
    emulator.advance(DAY);
    const next = await extractOnce(w.pipelinePath, w.dataDir);
    expect(next.status).toBe('ok');
    for (const s of report.streams)
      for (const r of s.rewound) {
        const read = next.partitions.find(
          (p) => p.stream === s.stream && JSON.stringify(p.partition) === JSON.stringify(r.partition),
        );
        expect(read?.rows, `${s.stream} ${JSON.stringify(r.partition)}`).toBeGreaterThan(0);
      }
    expect((await extractOnce(w.pipelinePath, reference)).status).toBe('ok');
    const { pipeline } = await resolveExtractConfig({ pipeline: w.pipelinePath }, {});
    expect(sorted(await lakeTotals(w.dataDir))).toEqual(sorted(await truthOf(emulator, pipeline)));

    // Compaction goes through every stream again.
    const compacted = await runCli(['compact', '--data-dir', w.dataDir, '--json']);
    expect(compacted.code, compacted.stderr).toBe(0);
    const merged = (JSON.parse(compacted.stdout) as { streams: { stream: string; damaged?: string }[] })
      .streams;
    expect(merged.filter((s) => s.damaged)).toEqual([]);
    expect(merged.map((s) => s.stream)).toEqual(expect.arrayContaining([missingIn, cutIn]));

    // A warehouse built from scratch has the rows of the undamaged lake's.
    for (const dir of [w.dataDir, reference]) {
      const built = await runCli(['build', '--data-dir', dir]);
      expect(built.code, built.stderr).toBe(0);
    }
    for (const stream of [missingIn, cutIn]) {
      const diff = await tableDifference(
        join(w.dataDir, 'warehouse.duckdb'),
        join(reference, 'warehouse.duckdb'),
        `stg_${stream}`,
      );
      expect(diff, stream).toEqual({ rows: expect.any(Number), only_a: 0, only_b: 0 });
      expect(diff.rows).toBeGreaterThan(0);
    }
  }, 240_000);

  it('lets a run go on when the damaged file is named by a commit not yet folded, which stops the lake from opening', async () => {
    const w = await extractedTwoDays(emulator);
    // The newest commit of a stream that has one after its state: each opening of the lake checks its files.
    let damaged: { stream: string; path: string } | undefined;
    for (const [stream, state] of await readLakeState(w.dataDir)) {
      const newest = state.files.filter((f) => f.table === 'data').sort((a, b) => b.seq - a.seq)[0];
      const names = readdirSync(join(w.dataDir, 'lake', '_commits', stream));
      if (newest && names.some((n) => /^\d+\.json$/.test(n) && Number(n.slice(0, -5)) === newest.seq)) {
        damaged = { stream, path: newest.path };
        break;
      }
    }
    if (!damaged) throw new Error('no stream with a commit after its state');
    unlinkSync(join(w.dataDir, 'lake', damaged.path));
    const stopped = await runCli(['extract', w.pipelinePath, '--data-dir', w.dataDir, '--quiet']);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain('avalake repair');

    const repaired = await runCli(['repair', '--data-dir', w.dataDir]);
    expect(repaired.code, repaired.stderr).toBe(0);
    // Its own commit names the partition: that one alone is read again.
    expect(repaired.stdout).toContain(
      `${damaged.stream}: the next run reads 1 partition again from the start:`,
    );
    const next = await runCli(['extract', w.pipelinePath, '--data-dir', w.dataDir, '--quiet']);
    expect(next.code, next.stderr).toBe(0);
    const { pipeline } = await resolveExtractConfig({ pipeline: w.pipelinePath }, {});
    expect(sorted(await lakeTotals(w.dataDir))).toEqual(sorted(await truthOf(emulator, pipeline)));
  }, 240_000);

  it('a repair SIGKILLed at any step leaves the lake as it was or repaired, and a repair run again finishes it', async () => {
    const w = await extractedTwoDays(emulator);
    const [stream] = (await streamsWithFiles(w.dataDir)) as [string];
    const [cut] = await dataFiles(w.dataDir, stream);
    if (!cut) throw new Error('no files');
    truncateSync(join(w.dataDir, 'lake', cut.path), 1000);
    const fixture = fileURLToPath(new URL('../load/fixtures/repair-writer.ts', import.meta.url));
    const damagedPaths = async () =>
      (
        JSON.parse((await runCli(['status', '--data-dir', w.dataDir, '--json'])).stdout) as {
          damaged: { path: string }[];
        }
      ).damaged.map((d) => d.path);
    const checkpoints = async () =>
      [...((await readLakeState(w.dataDir)).get(stream)?.partitions.values() ?? [])].map((p) => p.checkpoint);

    // Killed once the cut file is aside, before the new state: the log still names it, as missing.
    const before = await checkpoints();
    for (const step of ['plan', 'aside', 'commit']) {
      const writer = startWriter(fixture, [w.dataDir, step]);
      await writer.ready;
      const deadline = Date.now() + 30_000;
      while (writer.step() !== step && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(writer.step()).toBe(step);
      await writer.kill();
      expect(await damagedPaths()).toEqual([cut.path]);
      expect(await checkpoints()).toEqual(before);
    }
    expect(existsSync(join(w.dataDir, 'lake', '_damaged', cut.path))).toBe(true);

    // Killed once done (its lock left behind, taken over): repaired.
    const writer = startWriter(fixture, [w.dataDir, 'done']);
    await writer.ready;
    const deadline = Date.now() + 30_000;
    while (writer.step() !== 'done' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await writer.kill();
    expect(await damagedPaths()).toEqual([]);
    expect((await checkpoints()).some((c) => c === null)).toBe(true);
    const again = await runCli(['repair', '--data-dir', w.dataDir]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to repair');
    emulator.advance(DAY);
    const next = await runCli(['run', w.pipelinePath, '--data-dir', w.dataDir, '--quiet']);
    expect(next.code, next.stderr).toBe(0);
    const { pipeline } = await resolveExtractConfig({ pipeline: w.pipelinePath }, {});
    expect(sorted(await lakeTotals(w.dataDir))).toEqual(sorted(await truthOf(emulator, pipeline)));
  }, 240_000);

  it('refuses what it cannot do: an unknown stream, no lake, a catalog not there, another run holding the lock', async () => {
    const w = coreWorkspace(emulator, (p) => {
      p.streams = ['rewards'];
    });
    expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');

    const unknown = await runCli(['repair', '--data-dir', w.dataDir, '--streams', 'rewards,nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      `avalake: --streams: nope has nothing committed in ${w.dataDir}; streams there: rewards\n`,
    );
    const nowhere = await runCli(['repair', '--data-dir', join(w.dir, 'elsewhere')]);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('nothing extracted yet into');

    const held = await acquireLock(lakePaths(w.dataDir).lockFile);
    try {
      const locked = await runCli(['repair', '--data-dir', w.dataDir]);
      expect(locked.code).toBe(75);
      // A dry run only reads.
      expect((await runCli(['repair', '--data-dir', w.dataDir, '--dry-run'])).code).toBe(0);
    } finally {
      await held.release();
    }

    // A lake marked as a catalog's (its commit log in PostgreSQL), whose catalog is not there: repaired
    // only through its catalog (test/cli/catalog-repair.test.ts), never from what the directory holds.
    const marked = join(w.dir, 'catalog-lake');
    mkdirSync(join(marked, 'lake'), { recursive: true });
    writeFileSync(join(marked, 'lake', '_catalog'), 'a catalog keeps this lake\n');
    const catalog = await runCli([
      'repair',
      '--data-dir',
      marked,
      '--catalog',
      'postgres://avalake@127.0.0.1:1/avalake',
    ]);
    expect(catalog.code).toBe(1);
    expect(catalog.stderr).toContain('the catalog postgres://avalake@127.0.0.1:1/avalake is not reachable');
    expect(existsSync(join(marked, 'lake', '_damaged'))).toBe(false);
  }, 120_000);
});
