import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  truncateSync,
  unlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { type LiveFile, readLakeState } from '../../src/load/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { extractedTwoDays, extractOnce } from '../helpers/extract.ts';
import { dataFiles, expectLakeAsReference } from '../helpers/lake.ts';
import { expectExtractStopped, runCli } from '../helpers/output.ts';

/**
 * What a lake's own directory can do to a run, short of the device filling up (device-full.test.ts): a
 * lake file deleted or cut short by hand, a folder whose permissions changed, a device with no room even
 * for a lock file. Each is named in one line, with the exit code DESIGN.md gives, and never loses a row.
 */

const DAY = 86_400;

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
}, 60_000);
afterAll(() => emulator?.close());

describe('a lake file deleted or cut short by hand', () => {
  it('status and compact name it; compact leaves its stream as it was, compacts the others, and exits 1', async () => {
    const w = await extractedTwoDays(emulator);
    // Two streams with files to merge: one loses a file, the other has one cut short.
    const streams: string[] = [];
    for (const stream of (await readLakeState(w.dataDir)).keys())
      if ((await dataFiles(w.dataDir, stream)).length >= 2) streams.push(stream);
    expect(streams.length).toBeGreaterThanOrEqual(3);
    const [missingIn, cutIn] = streams as [string, string];
    const [missing] = await dataFiles(w.dataDir, missingIn);
    const [cut] = await dataFiles(w.dataDir, cutIn);
    if (!missing || !cut) throw new Error('no files');
    unlinkSync(join(w.dataDir, 'lake', missing.path));
    truncateSync(join(w.dataDir, 'lake', cut.path), 1000);
    const before = {
      [missingIn]: await dataFiles(w.dataDir, missingIn),
      [cutIn]: await dataFiles(w.dataDir, cutIn),
    };

    // status finds both (exit 1), naming each with what the commit log records.
    const standing = await runCli(['status', '--data-dir', w.dataDir, '--json']);
    expect(standing.code, standing.stderr).toBe(1);
    expect((JSON.parse(standing.stdout) as { damaged: unknown[] }).damaged).toEqual(
      expect.arrayContaining([
        { stream: missingIn, path: missing.path, bytes: missing.bytes, foundBytes: null },
        { stream: cutIn, path: cut.path, bytes: cut.bytes, foundBytes: 1000 },
      ]),
    );
    expect((await runCli(['status', '--data-dir', w.dataDir])).stdout).toContain(
      `damaged: lake file ${missing.path} of stream ${missingIn} is missing, where the commit log records ${missing.bytes}: restore it from a backup`,
    );

    // A committed file still in staging (a catalog's writer has not moved it in yet) is not damage.
    const [waiting] = (await dataFiles(w.dataDir, streams[2] as string)) as [LiveFile];
    const staged = join(w.dataDir, 'lake', '_staging', streams[2] as string, basename(waiting.path));
    mkdirSync(dirname(staged), { recursive: true });
    renameSync(join(w.dataDir, 'lake', waiting.path), staged);
    const withStaged = JSON.parse((await runCli(['status', '--data-dir', w.dataDir, '--json'])).stdout) as {
      damaged: { path: string }[];
    };
    expect(withStaged.damaged.map((d) => d.path).sort()).toEqual([missing.path, cut.path].sort());
    renameSync(staged, join(w.dataDir, 'lake', waiting.path));

    const result = await runCli(['compact', '--data-dir', w.dataDir, '--json']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toMatch(/^\s+at\s/m);
    expect(result.stderr).toContain(
      `avalake: lake file ${missing.path} of stream ${missingIn} is missing, where the commit log records ${missing.bytes} bytes (sha256 ${missing.sha256}): restore it from a backup`,
    );
    expect(result.stderr).toContain(
      `avalake: lake file ${cut.path} of stream ${cutIn} has 1000 bytes, where the commit log records ${cut.bytes} bytes`,
    );
    const report = JSON.parse(result.stdout) as {
      streams: { stream: string; merged: number; damaged?: string }[];
    };
    const damaged = report.streams.filter((s) => s.damaged).map((s) => s.stream);
    expect(damaged.sort()).toEqual([missingIn, cutIn].sort());
    // The others were compacted all the same, and the damaged streams' files are as they were.
    const compacted = report.streams.filter((s) => !s.damaged);
    expect(compacted.length).toBeGreaterThan(0);
    expect(compacted.every((s) => s.merged >= 2)).toBe(true);
    for (const stream of [missingIn, cutIn])
      expect(await dataFiles(w.dataDir, stream)).toEqual(before[stream]);
  }, 120_000);
});

it('a device with no room even for a lock: build and compact exit 1 with one line each, and leave no lock file behind', async () => {
  const w = await extractedTwoDays(emulator);
  const build = await runCli(['build', '--data-dir', w.dataDir], {}, { fileSizeKiB: 0 });
  expect(build.code).toBe(1);
  expect(build.stderr).toBe(
    `avalake: writing the warehouse in ${w.dataDir} failed: a file outgrew the size this process may write (see ulimit -f) (EFBIG); the warehouse is unchanged, and the next build starts again once the device has room\n`,
  );
  const compact = await runCli(['compact', '--data-dir', w.dataDir], {}, { fileSizeKiB: 0 });
  expect(compact.code).toBe(1);
  expect(compact.stderr).toBe(
    `avalake: compacting the lake in ${w.dataDir} failed: a file outgrew the size this process may write (see ulimit -f) (EFBIG); the lake is whole (a stream's compaction commits all of it or nothing), and the next compaction continues once the device has room\n`,
  );
  const extract = await runCli(
    ['extract', w.pipelinePath, '--data-dir', w.dataDir, '--quiet'],
    {},
    { fileSizeKiB: 0 },
  );
  expect(extract.code).toBe(1);
  // A cron run every 15 minutes on a full disk would leave one of these each time.
  expect(readdirSync(w.dataDir).filter((name) => name.includes('.lock.'))).toEqual([]);
}, 120_000);

// Root's writes are refused by nothing but the file system: the CLI runs as nobody then.
const canDropRoot = process.getuid?.() !== 0 || spawnSync('setpriv', ['--version']).status === 0;

it.skipIf(!canDropRoot)(
  'a lake folder it may not write in, mid-run: exit 1 naming the folder, what committed reported; with the permission back, the lake is whole',
  async () => {
    // The same extracts into a directory of its own, uninterrupted.
    const reference = join(mkdtempSync(join(tmpdir(), 'avalake-reference-')), 'data');
    const w = await extractedTwoDays(emulator, reference);
    const utxos = join(w.dataDir, 'lake', '_commits', 'utxos');
    if (process.getuid?.() === 0) spawnSync('chown', ['-R', 'nobody:nogroup', w.dir]);
    chmodSync(utxos, 0o555);
    emulator.advance(DAY);
    const args = ['run', w.pipelinePath, '--data-dir', w.dataDir, '--json', '--quiet'];
    const env = { TMPDIR: w.dir, HOME: w.dir };

    const refused = await runCli(args, env, { asNobody: true });
    const report = await expectExtractStopped(refused, w.dataDir);
    const said = `writing in ${utxos} failed: permission denied (EACCES); what was committed to the lake in ${w.dataDir} stays`;
    expect(report.extract.reason).toContain(said);
    expect(refused.stderr).toContain(`avalake: ${said}`);

    chmodSync(utxos, 0o755);
    const next = await runCli(args, env, { asNobody: true });
    expect(next.code, next.stderr).toBe(0);
    expect((await extractOnce(w.pipelinePath, reference)).status).toBe('ok');
    await expectLakeAsReference(w.dataDir, reference);
  },
  180_000,
);
