import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { localCommitLogKind } from '../../src/load/commit-log-kind.ts';
import { openLake } from '../../src/load/lake.ts';
import { lake } from '../../src/schemas/lake.ts';
import { freshDatabase, startPostgres } from '../helpers/postgres.ts';

let server: Awaited<ReturnType<typeof startPostgres>>;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

it("a local directory that is not the catalog's lake is refused and left unmarked, usable without the catalog", async () => {
  const catalog = await freshDatabase(server.url);
  const home = await mkdtemp(join(tmpdir(), 'avalake-mark-home-'));
  const other = await mkdtemp(join(tmpdir(), 'avalake-mark-other-'));
  try {
    const writer = await openLake({ dataDir: home, runId: 'run-home', catalog });
    const flush = writer.begin({
      stream: 'transfers',
      partition: { network: 'fuji', chain: '43113', address: '0xabc' },
      schema: z.object({ id: lake.int64() }),
    });
    await flush.append([{ id: 1 }, { id: 2 }]);
    await flush.commit({ next: 2 });
    await writer.close();
    expect(await localCommitLogKind(home)).toBe('catalog');

    // The same catalog over another directory (a mistyped --data-dir): the files its commits name are
    // not there.
    await expect(openLake({ dataDir: other, runId: 'run-other', catalog })).rejects.toThrow(
      /transfers.*is not the lake this commit log keeps \(a mistyped --data-dir, or the catalog of another lake\), name the right one/,
    );
    expect(existsSync(join(other, 'lake', '_catalog'))).toBe(false);
    expect(await localCommitLogKind(other)).toBe('none');
  } finally {
    await rm(home, { recursive: true, force: true });
    await rm(other, { recursive: true, force: true });
  }
});
