import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { appendFile, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/**
 * A throwaway PostgreSQL server for tests: Debian's binaries, a cluster in a temp directory, loopback
 * only, fsync off (a test's data need not survive the machine). As root it runs as the `postgres` user
 * (the server refuses root), through `runuser`. `.ci/run` installs the package on a fresh machine.
 */
export interface TestPostgres {
  /** The `avalake` database of the cluster, as its superuser `postgres`. */
  url: string;
  /** Stops the server at once (`pg_ctl stop -m immediate`) and removes its directory. */
  stop(): Promise<void>;
}

const INSTALL_HINT = 'install Debian\'s PostgreSQL: apt-get install postgresql (".ci/run" does this)';

/**
 * The directory of initdb and pg_ctl: initdb on PATH (symlinks resolved, so Debian's real bin directory),
 * else the newest of /usr/lib/postgresql/<version>/bin; undefined when there is none.
 */
function findBinDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const initdb = dir && join(dir, 'initdb');
    if (initdb && existsSync(initdb)) return dirname(realpathSync(initdb));
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const [newest] = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  return newest === undefined ? undefined : join(root, newest, 'bin');
}

/** True when a PostgreSQL server can be started here (initdb is on PATH or under /usr/lib/postgresql). */
export function postgresAvailable(): boolean {
  return findBinDir() !== undefined;
}

function binary(bin: string, name: string): string {
  const path = join(bin, name);
  if (!existsSync(path))
    throw new Error(`PostgreSQL's ${name} is missing (looked for ${path}): ${INSTALL_HINT}`);
  return path;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** runuser (util-linux) from PATH, else /usr/sbin or /sbin: a PATH without the sbin directories is common. */
function findRunuser(): string {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/sbin', '/sbin'];
  const found = dirs.map((dir) => join(dir, 'runuser')).find((path) => existsSync(path));
  if (!found)
    throw new Error(
      'running as root needs runuser to start PostgreSQL as postgres: apt-get install util-linux',
    );
  return found;
}

/** The uid and gid of the `postgres` OS user (Debian's package creates it). */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  try {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    return { uid, gid };
  } catch {
    throw new Error(
      `running as root, but there is no 'postgres' OS user to run the server as: ${INSTALL_HINT}`,
    );
  }
}

/** A failed command's message with what it printed. */
function failure(what: string, error: unknown): Error {
  const e = error as { message?: string; stdout?: string; stderr?: string };
  const output = [e.stderr, e.stdout]
    .filter((s) => s?.trim())
    .join('\n')
    .trim();
  return new Error(`${what} failed: ${output || e.message || String(error)}`);
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = findBinDir();
  if (!bin)
    throw new Error(
      `PostgreSQL's initdb is not on PATH nor under /usr/lib/postgresql/*/bin: ${INSTALL_HINT}`,
    );
  const initdb = binary(bin, 'initdb');
  const pgCtl = binary(bin, 'pg_ctl');
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? await postgresUser() : undefined;
  const runuser = asRoot ? findRunuser() : 'runuser';

  const dir = await mkdtemp(join(tmpdir(), 'avalake-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  // Run as the postgres user when root; from the temp dir, which that user can always enter.
  const as = (command: string, args: string[]) =>
    user
      ? run(runuser, ['-u', 'postgres', '--', command, ...args], { cwd: dir })
      : run(command, args, { cwd: dir });
  const stop = async () => {
    await as(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    if (user) await chown(dir, user.uid, user.gid);
    await as(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']).catch((e) => {
      throw failure('initdb', e);
    });
    const port = await freePort();
    // Settings go in the config file (not pg_ctl -o, which pg_ctl hands to a shell). Root may append to
    // the postgres user's file; it stays that user's.
    const settings = {
      listen_addresses: '127.0.0.1',
      port: String(port),
      unix_socket_directories: dir,
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
    };
    await appendFile(
      join(data, 'postgresql.conf'),
      `\n# avalake test server\n${Object.entries(settings)
        .map(([k, v]) => `${k} = '${v.replaceAll("'", "''")}'\n`)
        .join('')}`,
    );
    await as(pgCtl, ['-D', data, '-l', log, '-w', '-t', '60', 'start']).catch(async (e) => {
      const serverLog = await readFile(log, 'utf8').catch(() => '');
      throw new Error(`${failure('pg_ctl start', e).message}\nserver log:\n${serverLog}`);
    });
    const server = `postgres://postgres@127.0.0.1:${port}`;
    const client = new pg.Client({ connectionString: `${server}/postgres` });
    await client.connect();
    try {
      await client.query('create database avalake');
    } finally {
      await client.end();
    }
    return { url: `${server}/avalake`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A new, empty database on the server: each test's catalog starts from nothing. */
export async function freshDatabase(serverUrl: string): Promise<string> {
  const name = `avalake_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
