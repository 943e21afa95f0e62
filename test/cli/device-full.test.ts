import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce } from '../helpers/extract.ts';
import { expectLakeAsReference } from '../helpers/lake.ts';
import { expectExtractStopped, runCli } from '../helpers/output.ts';

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
}, 60_000);
afterAll(() => emulator?.close());

it('run --json on a device that takes no more: exit 1, one line saying so, what committed before it reported; the next run completes the lake; a build stopped so leaves the warehouse as it was', async () => {
  const w = coreWorkspace(emulator);
  const reference = join(w.dir, 'reference');
  try {
    expect((await extractOnce(w.pipelinePath, reference)).status).toBe('ok');
    const args = ['run', w.pipelinePath, '--data-dir', w.dataDir, '--json', '--quiet'];

    // Every file the run writes limited to 24 KiB: small files fit, the first larger one does not.
    const cut = await runCli(args, {}, { fileSizeKiB: 24 });
    const report = await expectExtractStopped(cut, w.dataDir);
    const said = `writing the lake in ${w.dataDir} failed: a file outgrew the size this process may write`;
    expect(report.extract.reason).toContain(said);
    expect(report.extract.reason).toContain('what was committed stays');
    expect(cut.stderr).toContain(`avalake: ${said}`);

    // With room again, the next run picks up where the lake stands and ends as one uninterrupted run.
    const next = await runCli(args);
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ status: 'ok', build: { status: 'ok' } });
    await expectLakeAsReference(w.dataDir, reference);

    // The warehouse's build on a device that takes no more: one line saying so, the warehouse as it was.
    const warehouse = join(w.dataDir, 'warehouse.duckdb');
    const before = sha256(warehouse);
    const build = await runCli(['build', '--data-dir', w.dataDir, '--json'], {}, { fileSizeKiB: 256 });
    expect(build.code, build.stderr).toBe(1);
    expect(build.stdout).toBe('');
    expect(build.stderr).toBe(
      `avalake: writing the warehouse in ${w.dataDir} failed: a file outgrew the size this process may write (see ulimit -f) (EFBIG); the warehouse is unchanged, and the next build starts again once the device has room\n`,
    );
    expect(sha256(warehouse)).toBe(before);
    expect(readdirSync(w.dataDir).filter((f) => f.includes('.building-'))).toEqual([]);
    const runBuild = await runCli(args, {}, { fileSizeKiB: 256 });
    expect(runBuild.code).toBe(1);
    expect(JSON.parse(runBuild.stdout).build).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining(`writing the warehouse in ${w.dataDir} failed: a file outgrew`),
    });
    expect(sha256(warehouse)).toBe(before);
  } finally {
    await rm(w.dir, { recursive: true, force: true });
  }
}, 240_000);
