import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { openLake } from '../../src/load/lake.ts';
import { lake as lakeTypes } from '../../src/schemas/lake.ts';
import { runCli } from '../helpers/output.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

const schema = z.object({ id: lakeTypes.int64() });
const PIPELINE = join(import.meta.dirname, '..', '..', 'pipelines', 'demo.json');

let server: TestPostgres;
let dataDir: string;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-log-kind-'));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

/** One commit of one row, through the file commit log or the catalog. */
async function commitOne(catalog?: string) {
  const lake = await openLake({ dataDir, ...(catalog ? { catalog } : {}) });
  const flush = lake.begin({ stream: 'rewards', partition: { network: 'fuji', subject: 'node-1' }, schema });
  await flush.append([{ id: 1 }]);
  await flush.commit({ next: 2 });
  await lake.close();
}

/** The commands that open a lake, each given `extra` flags. */
const commands = (extra: string[]) => [
  ['status', '--data-dir', dataDir, ...extra],
  ['compact', '--data-dir', dataDir, ...extra],
  ['build', '--data-dir', dataDir, ...extra],
  ['extract', PIPELINE, '--data-dir', dataDir, ...extra],
];

it('a lake that keeps its own commit log is refused with a catalog (exit 2), before anything is written', async () => {
  await commitOne();
  const before = await readdir(join(dataDir, 'lake'));
  // The refusal comes before the catalog is reached: no server listens there.
  for (const args of commands(['--catalog', 'postgres://avalake@127.0.0.1:9/nowhere'])) {
    const { code, stderr } = await runCli(args);
    expect({ args: args[0], code }).toEqual({ args: args[0], code: 2 });
    expect(stderr).toContain(`its lake keeps its own commit log (${join(dataDir, 'lake', '_commits')})`);
    expect(stderr).toContain('run without --catalog');
    expect(stderr).toContain('avalake catalog-import');
    expect(stderr).not.toMatch(/\n\s+at /); // one line, no stack
  }
  expect(await readdir(join(dataDir, 'lake'))).toEqual(before);
  expect(existsSync(join(dataDir, 'warehouse.duckdb'))).toBe(false);
  // Without the catalog it opens as ever.
  expect((await runCli(['status', '--data-dir', dataDir])).code).toBe(0);
});

it('a lake kept by a catalog is marked, and refused without it (exit 2)', async () => {
  await commitOne(server.url);
  expect(existsSync(join(dataDir, 'lake', '_catalog'))).toBe(true);
  for (const args of commands([])) {
    const { code, stderr } = await runCli(args);
    expect({ args: args[0], code }).toEqual({ args: args[0], code: 2 });
    expect(stderr).toContain('its lake keeps its commit log in a PostgreSQL catalog');
    expect(stderr).toContain('give it with --catalog');
  }
  expect(existsSync(join(dataDir, 'warehouse.duckdb'))).toBe(false);
  expect(existsSync(join(dataDir, 'lake', '_commits'))).toBe(false);
  const status = await runCli(['status', '--data-dir', dataDir, '--catalog', server.url]);
  expect(status.code, status.stderr).toBe(0);
  expect(status.stdout).toContain('rewards');
});
