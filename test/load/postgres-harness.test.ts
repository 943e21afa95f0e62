import pg from 'pg';
import { expect, it } from 'vitest';
import { startPostgres } from '../helpers/postgres.ts';

it('starts a throwaway PostgreSQL server on loopback with fsync off, and stop() ends it', async () => {
  const server = await startPostgres();
  let stopped = false;
  try {
    expect(server.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/avalake$/);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      expect((await client.query('select 1 + 1 as n')).rows[0].n).toBe(2);
      expect((await client.query('show fsync')).rows[0].fsync).toBe('off');
      expect((await client.query('select current_database() as db')).rows[0].db).toBe('avalake');
    } finally {
      await client.end();
    }
    await server.stop();
    stopped = true;
    const after = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5_000 });
    await expect(after.connect()).rejects.toThrow();
    await after.end().catch(() => undefined);
  } finally {
    if (!stopped) await server.stop();
  }
}, 60_000);
