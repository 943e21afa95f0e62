import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { DEFAULT_MODELS_DIR, DEFAULT_TESTS_DIR } from '../../src/warehouse/paths.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace } from '../helpers/extract.ts';
import { runCli, runReportOf } from '../helpers/output.ts';

/**
 * An installed avalake runs from any directory: a cron line without a `cd`, a global install. Without
 * sql/models in the working directory, build and test use the models and SQL tests avalake ships. The
 * launcher runs the built CLI where it is current (in CI: `npm ci` builds it), whose modules sit in
 * another folder than the sources'.
 */

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator?.close());

const sqlNames = (dir: string) => readdirSync(dir).map((f) => f.replace(/\.sql$/, ''));
const shippedModels = readdirSync(DEFAULT_MODELS_DIR).flatMap((layer) =>
  sqlNames(join(DEFAULT_MODELS_DIR, layer)),
);

it('run builds and tests with the shipped models from a directory without sql/', async () => {
  const w = coreWorkspace(emulator);
  const elsewhere = mkdtempSync(join(tmpdir(), 'avalake-elsewhere-'));
  const result = await runCli(
    ['run', w.pipelinePath, '--data-dir', w.dataDir, '--json', '--quiet'],
    {},
    { cwd: elsewhere },
  );
  expect(result.code, result.stderr).toBe(0);
  const report = runReportOf(result.stdout);
  expect(report.build.status).toBe('ok');
  // Every shipped model is built or skipped (its stream not in this pipeline): none is unknown.
  const considered = [...report.build.built, ...report.build.skipped].map((m) => m.name);
  expect(considered.sort()).toEqual([...shippedModels].sort());
  expect(report.build.built.map((m) => m.name)).toContain('delegations');
  // The shipped SQL tests ran beside the models' checks.
  expect(report.test.status).toBe('ok');
  const sqlTests = sqlNames(DEFAULT_TESTS_DIR);
  expect(report.test.passed.filter((name) => sqlTests.some((t) => name.includes(t))).length).toBeGreaterThan(
    0,
  );
  expect(readdirSync(elsewhere)).toEqual([]);
});
