import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce, workersWorkspace } from '../helpers/extract.ts';
import { expectLakeAsReference } from '../helpers/lake.ts';
import { runCli } from '../helpers/output.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';

let emulator: Emulator;
let server: Awaited<ReturnType<typeof startPostgres>>;
beforeAll(async () => {
  // Every answer takes 150 ms, so a worker is still mid-partition when the test kills it.
  [emulator, server] = await Promise.all([startEmulator({ faults: 'slow=1:150' }), startPostgres()]);
}, 60_000);
afterAll(async () => {
  await emulator?.close();
  await server?.stop();
});

/** One `avalake extract` process on the shared catalog; resolves with its exit code. */
function worker(pipelinePath: string, dataDir: string, catalog: string) {
  const child = spawn(
    process.execPath,
    ['bin/avalake.js', 'extract', pipelinePath, '--data-dir', dataDir, '--catalog', catalog, '--quiet'],
    // A short lease, so a killed worker's partitions are taken over within the test.
    {
      env: { ...process.env, AVALAKE_LEASE_SECONDS: '2', NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const exit = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exit };
}

async function untilTrue(check: () => Promise<boolean>, what: string, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('three workers split a pipeline, one is SIGKILLed mid-run, a fourth finishes: the lake equals one process’s, each partition one chain', async () => {
  const w = workersWorkspace(emulator);
  const reference = join(w.dir, 'reference');
  expect((await extractOnce(w.pipelinePath, reference)).status).toBe('ok');

  const catalog = await freshDatabase(server.url);
  const db = new pg.Client({ connectionString: catalog });
  const workers: { child: ChildProcess; exit: ReturnType<typeof worker>['exit'] }[] = [];
  try {
    for (let i = 0; i < 3; i++) workers.push(worker(w.pipelinePath, w.dataDir, catalog));
    const victim = workers[0] as (typeof workers)[number];
    await db.connect();
    await untilTrue(async () => {
      // The victim has committed, and holds a partition it has not finished.
      const { rows } = await db
        .query<{ commits: string; open: string }>(
          `select (select count(*) from avalake.commits c where c.record->>'runId' = r.run_id) as commits,
                  (select count(*) from avalake.leases l where l.run_id = r.run_id and l.done_at is null) as open
           from avalake.runs r where r.pid = $1`,
          [victim.child.pid],
        )
        .catch(() => ({ rows: [] as { commits: string; open: string }[] }));
      return rows.some((r) => Number(r.commits) > 0 && Number(r.open) > 0);
    }, 'the first worker to be mid-partition');
    const held = await db.query<{ run_id: string; stream: string; partition_id: string }>(
      `select l.run_id, l.stream, l.partition_id from avalake.leases l join avalake.runs r using (run_id)
       where r.pid = $1 and l.done_at is null`,
      [victim.child.pid],
    );
    victim.child.kill('SIGKILL');
    expect((await victim.exit).signal).toBe('SIGKILL');
    for (const other of workers.slice(1)) {
      const out = await other.exit;
      expect(out.code, out.stderr).toBe(0);
    }
    const fourth = await worker(w.pipelinePath, w.dataDir, catalog).exit;
    expect(fourth.code, fourth.stderr).toBe(0);

    // The same rows as one process took, none twice.
    await expectLakeAsReference(w.dataDir, reference, catalog);

    // Each partition's commits: one unbroken chain, whichever worker made each link.
    const { rows } = await db.query<{
      stream: string;
      partition_id: string;
      seq: string;
      parent: string | null;
      run: string;
    }>(
      `select stream, partition_id, seq, record->>'parent' as parent, record->>'runId' as run
       from avalake.commits where partition_id is not null order by commit_id`,
    );
    const last = new Map<string, { seq: string; run: string }>();
    for (const row of rows) {
      const key = `${row.stream} ${row.partition_id}`;
      expect(row.parent ?? null, key).toBe(last.get(key)?.seq ?? null);
      last.set(key, { seq: row.seq, run: row.run });
    }
    // What the victim held when it died was carried on by another worker.
    expect(held.rows.length).toBeGreaterThan(0);
    for (const lease of held.rows)
      expect(last.get(`${lease.stream} ${lease.partition_id}`)?.run).not.toBe(lease.run_id);
  } finally {
    for (const { child } of workers) child.kill('SIGKILL');
    await db.end().catch(() => undefined);
  }
}, 240_000);

it('a catalog that is not a PostgreSQL URL is exit 2; one that does not answer is exit 1, its password masked, nothing written', async () => {
  const w = coreWorkspace(emulator);
  // A port that refuses connections: bound, then released.
  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  const down = `postgres://avalake:s3cret-pw@127.0.0.1:${closed}/avalake`;
  const [notPostgres, extract, status] = await Promise.all([
    runCli(['extract', w.pipelinePath, '--data-dir', w.dataDir, '--catalog', 'mysql://db/avalake']),
    runCli(['extract', w.pipelinePath, '--data-dir', w.dataDir, '--catalog', down]),
    runCli(['status', '--data-dir', w.dataDir, '--catalog', down]),
  ]);
  expect(notPostgres.code).toBe(2);
  expect(notPostgres.stderr).toContain('--catalog: expected a PostgreSQL URL such as postgres://');
  for (const out of [extract, status]) {
    expect(out.code, out.stderr).toBe(1);
    expect(out.stderr).toContain(
      `the catalog postgres://avalake:***@127.0.0.1:${closed}/avalake is not reachable`,
    );
    expect(out.stderr).not.toContain('s3cret-pw');
    expect(out.stderr).not.toMatch(/^\s+at\s/m);
  }
  expect(existsSync(join(w.dataDir, 'lake'))).toBe(false);
}, 60_000);
