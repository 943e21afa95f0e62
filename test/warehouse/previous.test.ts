import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, linkSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, expect, it } from 'vitest';
import { type BuildResult, buildWarehouse } from '../../src/warehouse/build.ts';
import { loadModels } from '../../src/warehouse/models.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { expectSameWarehouse, queryWarehouse } from '../helpers/warehouse.ts';

/**
 * Each build brings the warehouse's previous generation up to date and swaps it in, instead of copying
 * the warehouse: the file at the path alternates between two, and the tables are those of a build from
 * scratch. Where that generation is in use (a reader holds it, or it is the warehouse itself) or
 * behind a compaction, or for --select, the build copies.
 */

/** Incremental staging models beside ones built whole (utxos), and the marts over them that apply. */
const STREAMS = 'rewards,utxos,metrics,delegators';
const HOUR = 3600;

const emulator = useEmulator();

const INCREMENTAL = new Set(
  loadModels('sql/models')
    .filter((m) => m.incremental)
    .map((m) => m.name),
);

/** Workspaces of the test that ran, removed after it. */
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A demo workspace with its first extract; `more()` moves the world an hour and extracts again. */
async function extracted() {
  const w = demoWorkspace(emulator);
  made.push(w.dir);
  const more = async () => {
    expect((await extractOnce(w.pipelinePath, w.dataDir, { streams: STREAMS })).status).toBe('ok');
  };
  await more();
  return {
    ...w,
    warehouse: join(w.dataDir, 'warehouse.duckdb'),
    previous: join(w.dataDir, 'warehouse.duckdb.previous'),
    build: (select?: string) => buildWarehouse({ dataDir: w.dataDir, ...(select ? { select } : {}) }),
    more: async () => {
      emulator.advance(HOUR);
      await more();
    },
  };
}

const inode = (path: string) => statSync(path).ino;
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const fullyRebuilt = (result: BuildResult) =>
  result.built.filter((b) => INCREMENTAL.has(b.name) && b.mode === 'full').map((b) => b.name);

/**
 * A reader in another process, as a notebook is, holding a warehouse file open read-only (DuckDB's lock
 * with it): `rows()` counts the lake files its models hold, on that open file.
 */
async function readerOf(path: string) {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { DuckDBInstance } from '@duckdb/node-api';
       import { createInterface } from 'node:readline';
       const instance = await DuckDBInstance.create(process.env.WAREHOUSE, {
         access_mode: 'READ_ONLY', autoload_known_extensions: 'false', autoinstall_known_extensions: 'false',
       });
       const db = await instance.connect();
       const rows = async () =>
         (await db.runAndReadAll('select count(*)::varchar as n from _lake.model_files')).getRowObjectsJson()[0].n;
       console.log(await rows());
       for await (const _ of createInterface({ input: process.stdin })) console.log(await rows());`,
    ],
    { env: { ...process.env, WAREHOUSE: path }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => String((await lines.next()).value);
  const opened = await next();
  return {
    opened,
    rows: async () => {
      child.stdin.write('\n');
      return next();
    },
    close: () =>
      new Promise<void>((resolve) => {
        child.on('close', () => resolve());
        child.stdin.end();
      }),
  };
}

it('each build starts from the generation before the last, written in place, not copied; the tables equal a build from scratch', async () => {
  const w = await extracted();
  expect((await w.build()).startedFrom).toBe('scratch');
  const first = inode(w.warehouse);
  expect(readdirSync(w.dataDir).sort()).toEqual(['lake', 'warehouse.duckdb']);

  await w.more();
  expect((await w.build()).startedFrom).toBe('copy');
  const second = inode(w.warehouse);
  expect(second).not.toBe(first);
  expect(inode(w.previous)).toBe(first);

  // The first build's file catches up on two extracts and is the warehouse again.
  await w.more();
  const third = await w.build();
  expect(third.startedFrom).toBe('previous');
  expect(inode(w.warehouse)).toBe(first);
  expect(inode(w.previous)).toBe(second);
  expect(fullyRebuilt(third)).toEqual([]);
  expect(
    third.built.filter((b) => INCREMENTAL.has(b.name) && b.mode === 'incremental').length,
  ).toBeGreaterThan(0);

  const scratch = join(w.dir, 'scratch');
  cpSync(join(w.dataDir, 'lake'), join(scratch, 'lake'), { recursive: true });
  await buildWarehouse({ dataDir: scratch });
  const names = await expectSameWarehouse(w.warehouse, join(scratch, 'warehouse.duckdb'));
  expect(names.length).toBeGreaterThan(4);
}, 120_000);

it('a reader still holding the previous generation makes the build copy instead; the reader reads on, undisturbed', async () => {
  const w = await extracted();
  await w.build();
  // A notebook opens the warehouse, and keeps it open across the next two builds.
  const reader = await readerOf(w.warehouse);
  const held = inode(w.warehouse);
  try {
    await w.more();
    await w.build();
    expect(inode(w.previous)).toBe(held);
    await w.more();
    const copied = await w.build();
    expect(copied.startedFrom).toBe('copy');
    expect(inode(w.warehouse)).not.toBe(held);
    expect(await reader.rows()).toBe(reader.opened);
    const [now] = await queryWarehouse(w.dataDir, 'select count(*)::varchar as n from _lake.model_files');
    expect(Number(now?.n)).toBeGreaterThan(Number(reader.opened));
  } finally {
    await reader.close();
  }
  // Once nobody holds it, the previous generation is used again.
  await w.more();
  expect((await w.build()).startedFrom).toBe('previous');
}, 120_000);

it('never writes the warehouse in place: the same file under both names (a build killed before its swap) is copied', async () => {
  const w = await extracted();
  await w.build();
  // What a build killed between keeping the previous generation and its swap leaves.
  linkSync(w.warehouse, w.previous);
  const before = { inode: inode(w.warehouse), sha256: sha256(w.warehouse) };
  await w.more();
  const result = await w.build();
  expect(result.startedFrom).toBe('copy');
  expect(inode(w.warehouse)).not.toBe(before.inode);
  // The old warehouse, kept as the previous generation, is as it was.
  expect({ inode: inode(w.previous), sha256: sha256(w.previous) }).toEqual(before);
}, 120_000);

it('--select starts from a copy of the last build; a deleted warehouse is built from scratch and its previous generation dropped', async () => {
  const w = await extracted();
  await w.build();
  await w.more();
  await w.build();
  await w.more();
  const selected = await w.build('stg_metrics+');
  expect(selected.startedFrom).toBe('copy');
  expect(selected.kept.length).toBeGreaterThan(0);

  rmSync(w.warehouse);
  const scratch = await w.build();
  expect(scratch.startedFrom).toBe('scratch');
  expect(scratch.built.every((b) => b.mode === 'full')).toBe(true);
  expect(readdirSync(w.dataDir).sort()).toEqual(['lake', 'warehouse.duckdb']);
}, 120_000);
