import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { LockLostError } from '../../src/load/lock.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

/**
 * A build paused past its lock's heartbeats (a stopped container) may wake after another build took the
 * warehouse's lock over and swapped a newer warehouse in: it must not land its own over that one.
 */

const emulator = useEmulator();
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

it('does not swap its warehouse in once another build took its lock over', async () => {
  const w = demoWorkspace(emulator);
  made.push(w.dir);
  expect((await extractOnce(w.pipelinePath, w.dataDir, { streams: 'rewards,utxos,metrics' })).status).toBe(
    'ok',
  );
  await buildWarehouse({ dataDir: w.dataDir });
  const warehouse = join(w.dataDir, 'warehouse.duckdb');
  const before = sha256(warehouse);
  emulator.advance(3600);
  expect((await extractOnce(w.pipelinePath, w.dataDir, { streams: 'metrics' })).status).toBe('ok');

  process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS = '0.02';
  try {
    const building = buildWarehouse({ dataDir: w.dataDir }).catch((error: unknown) => error);
    // Taken over while the models build: the other build's lock, as its file would read.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const other = {
      pid: process.pid,
      hostname: hostname(),
      since: new Date().toISOString(),
      command: 'another build',
      token: 'another-build',
    };
    writeFileSync(`${warehouse}.lock`, `${JSON.stringify(other)}\n`);
    const error = await building;
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as Error).message).toContain(`this run no longer holds ${warehouse}.lock`);
    // The warehouse is the first build's, and the other build's lock is left as it is.
    expect(sha256(warehouse)).toBe(before);
    expect(JSON.parse(readFileSync(`${warehouse}.lock`, 'utf8')).token).toBe('another-build');
  } finally {
    delete process.env.AVALAKE_LOCK_HEARTBEAT_SECONDS;
  }
}, 120_000);
