import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { extractOnce, workersWorkspace } from '../helpers/extract.ts';
import { expectLakeAsReference } from '../helpers/lake.ts';
import { expectExtractStopped, runCli } from '../helpers/output.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';

let emulator: Emulator;
let server: Awaited<ReturnType<typeof startPostgres>>;
beforeAll(async () => {
  // Every answer takes 150 ms, so the run is still extracting when its catalog goes away.
  [emulator, server] = await Promise.all([startEmulator({ faults: 'slow=1:150' }), startPostgres()]);
}, 60_000);
afterAll(async () => {
  await emulator?.close();
  await server?.stop();
});

/** Commits in the catalog so far (0 while it cannot be read). */
async function commits(catalog: string): Promise<number> {
  const db = new pg.Client({ connectionString: catalog });
  try {
    await db.connect();
    const { rows } = await db.query<{ n: number }>('select count(*)::int as n from avalake.commits');
    return rows[0]?.n ?? 0;
  } catch {
    return 0;
  } finally {
    await db.end().catch(() => undefined);
  }
}

it('run --json whose catalog goes away mid-extract: one JSON object, exit 1, the catalog named with its password masked; the next run completes the lake', async () => {
  const w = workersWorkspace(emulator);
  const reference = join(w.dir, 'reference');
  expect((await extractOnce(w.pipelinePath, reference)).status).toBe('ok');

  const catalog = await freshDatabase(server.url);
  const url = new URL(catalog);
  url.password = 'hunter2';
  const database = url.pathname.slice(1);
  // The outage: the catalog's database refuses connections (as a server shutting down does) and
  // every connection to it is terminated; the rest of the server stays up for the test.
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  const outage = async (on: boolean) => {
    await admin.query(`alter database ${database} with allow_connections ${!on}`);
    if (on)
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [
        database,
      ]);
  };
  const args = ['run', w.pipelinePath, '--data-dir', w.dataDir, '--catalog', url.toString(), '--json'];
  // A short lease: the next run takes over what the cut-off one held at once.
  const env = { AVALAKE_LEASE_SECONDS: '2' };
  try {
    const first = runCli([...args, '--quiet'], env);
    for (let waited = 0; (await commits(catalog)) < 3; waited += 50) {
      if (waited > 60_000) throw new Error('timed out waiting for the first commits');
      await new Promise((r) => setTimeout(r, 50));
    }
    await outage(true);
    const cut = await first;
    await outage(false);

    const report = await expectExtractStopped(cut, w.dataDir, catalog);
    const named = `lost the catalog postgres://postgres:***@127.0.0.1:${url.port}/${database} during the run`;
    expect(report.extract.reason).toContain(named);
    expect(cut.stderr).toContain(`avalake: ${named}`);
    expect(cut.stdout + cut.stderr).not.toContain('hunter2');
    expect(cut.stderr).not.toMatch(/Unhandled|^\s+at\s/m);

    // Once the catalog is back, the next run picks up: what was staged is rolled forward or discarded,
    // and the lake ends with the same rows as one uninterrupted run took, none twice.
    const next = await runCli(args, env);
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ status: 'ok', build: { status: 'ok' } });
    await expectLakeAsReference(w.dataDir, reference, catalog);
  } finally {
    await outage(false).catch(() => undefined);
    await admin.end();
    await rm(w.dir, { recursive: true, force: true });
  }
}, 240_000);
