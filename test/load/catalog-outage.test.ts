import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type HeartbeatReport, openCatalog } from '../../src/load/catalog.ts';
import { openLake } from '../../src/load/lake.ts';
import { CatalogUnavailableError } from '../../src/load/records.ts';
import { lake } from '../../src/schemas/lake.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';
import { query } from './duck.ts';

/**
 * The catalog's server goes away while a flush commits (stopped, restarted, its backends terminated):
 * the commit fails naming the catalog, the process lives on, the lake closes, and the next open
 * cleans up and commits. The outage is the test database's backends terminated at a chosen instant.
 */

const schema = z.object({ id: lake.int64(), address: z.string() });
const STREAM = 'transfers';
const partition = { network: 'fuji', chain: '43113', address: '0xabc' };
const rows = [0, 1, 2].map((id) => ({ id, address: '0xabc' }));

let server: Awaited<ReturnType<typeof startPostgres>>;
let catalog: string;
/** The same catalog with a password in its URL (the test server trusts anyone): messages must mask it. */
let withPassword: string;
let dataDir: string;
let admin: pg.Client;

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());
beforeEach(async () => {
  catalog = await freshDatabase(server.url);
  const url = new URL(catalog);
  url.password = 'hunter2';
  withPassword = url.toString();
  dataDir = await mkdtemp(join(tmpdir(), 'avalake-outage-'));
  admin = new pg.Client({ connectionString: catalog });
  await admin.connect();
});
afterEach(async () => {
  await admin.end();
  await rm(dataDir, { recursive: true, force: true });
});

/** Waits until `sql` (run as admin) returns a row. */
async function until(sql: string) {
  for (let waited = 0; (await admin.query(sql)).rowCount === 0; waited += 20) {
    if (waited > 10_000) throw new Error(`timed out waiting for: ${sql}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Terminates the lake's connections to the catalog (all but admin's), and waits until they are gone. */
async function terminateBackends(which = 'true') {
  await admin.query(
    `select pg_terminate_backend(pid) from pg_stat_activity
     where datname = current_database() and pid <> pg_backend_pid() and ${which}`,
  );
  await until(
    `select 1 where not exists (select 1 from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and ${which})`,
  );
  // Their clients hear of it: the FATAL message and the closed socket.
  await new Promise((r) => setTimeout(r, 200));
}

function expectCatalogLost(error: unknown) {
  expect(error).toBeInstanceOf(CatalogUnavailableError);
  const { message } = error as Error;
  expect(message).toContain(`postgres:***@127.0.0.1:${new URL(catalog).port}`);
  expect(message).not.toContain('hunter2');
}

it('a commit whose locked connection is lost mid-commit fails naming the catalog; the process lives, the next open cleans up', async () => {
  const first = await openLake({ dataDir, catalog: withPassword, runId: 'run-a' });
  const flush = first.begin({ stream: STREAM, partition, schema });
  await flush.append(rows);
  // The commit holds its stream's lock on a checked-out connection while it moves files (slow S3
  // copies): the server goes away right then. That connection's 'error' event used to end the process.
  const sync = first.storage.sync.bind(first.storage);
  vi.spyOn(first.storage, 'sync').mockImplementationOnce(async (path) => {
    await terminateBackends();
    return sync(path);
  });
  const failed = await flush.commit({ next: 3 }).catch((error: unknown) => error);
  expectCatalogLost(failed);
  // The flush is over: the lake closes (the run is removed from the catalog; its staged file stays).
  await first.close();
  expect(await readdir(join(dataDir, 'lake', '_staging', STREAM))).toHaveLength(1);

  // The next writer discards what was staged (never committed) and commits as if nothing happened.
  const next = await openLake({ dataDir, catalog, runId: 'run-b' });
  try {
    expect(next.recovery.discarded).toHaveLength(1);
    expect(next.readCheckpoint(STREAM, partition)).toBeUndefined();
    const again = next.begin({ stream: STREAM, partition, schema });
    await again.append(rows);
    await again.commit({ next: 3 });
    const ids = await query(
      `select id::integer as id from read_parquet('${dataDir}/lake/${STREAM}/**/*.parquet') order by id`,
    );
    expect(ids.map((r) => r.id)).toEqual([0, 1, 2]);
  } finally {
    await next.close();
  }
});

it('a flush that cannot get its number (the catalog gone) is over: the lake closes after the failure', async () => {
  const writer = await openLake({ dataDir, catalog: withPassword, runId: 'run-a' });
  try {
    const flush = writer.begin({ stream: STREAM, partition, schema });
    await flush.append(rows);
    // Numbers come from avalake.seqs: held by another session (not admin's, whose view of
    // pg_stat_activity a transaction would freeze), the commit waits for its number until its
    // connection is terminated.
    const holder = new pg.Client({ connectionString: catalog });
    await holder.connect();
    await holder.query('begin');
    await holder.query('lock table avalake.seqs in access exclusive mode');
    const committing = flush.commit({ next: 3 }).catch((error: unknown) => error);
    const waiting = "wait_event_type = 'Lock' and query like 'insert into avalake.seqs%'";
    await until(`select 1 from pg_stat_activity where datname = current_database() and ${waiting}`);
    await terminateBackends(waiting);
    await holder.end();
    expectCatalogLost(await committing);
  } finally {
    // Used to refuse: "1 flush(es) still open; commit or abort them before close".
    await writer.close();
  }
  expect(await readdir(join(dataDir, 'lake', '_staging', STREAM)).catch(() => [])).toEqual([]);
});

it('a catalog server that accepts and never answers fails the open in its time, naming it, not a hang', async () => {
  const silent = createServer(() => {}); // accepts, never speaks
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as AddressInfo;
  const started = Date.now();
  try {
    const error = await openCatalog(`postgres://avalake:hunter2@127.0.0.1:${port}/lake`, {
      connectTimeoutMs: 500,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogUnavailableError);
    expect((error as Error).message).toContain(`postgres://avalake:***@127.0.0.1:${port}/lake`);
    expect((error as Error).message).not.toContain('hunter2');
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    silent.close();
  }
});

it("says when the catalog misses the run's heartbeats, once, and when it takes them again", async () => {
  // A lease of one second: a heartbeat every third of it.
  vi.stubEnv('AVALAKE_LEASE_SECONDS', '1');
  const reports: HeartbeatReport[] = [];
  const lake = await openLake({ dataDir, catalog, onHeartbeat: (report) => reports.push(report) });
  try {
    // The heartbeat's table out of reach: each heartbeat fails, as with the catalog's server away.
    await admin.query('alter table avalake.runs rename to runs_away');
    await vi.waitUntil(() => reports.length > 0, { timeout: 5_000 });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(reports).toHaveLength(1);
    await admin.query('alter table avalake.runs_away rename to runs');
    await vi.waitUntil(() => reports.length > 1, { timeout: 5_000 });
    expect(reports).toEqual([
      {
        state: 'missed',
        leaseSeconds: 1,
        error: expect.objectContaining({ message: expect.stringContaining('avalake.runs') }),
      },
      { state: 'restored', missed: expect.any(Number) },
    ]);
    expect((reports[1] as { missed: number }).missed).toBeGreaterThanOrEqual(3);
  } finally {
    vi.unstubAllEnvs();
    await lake.close();
  }
});
