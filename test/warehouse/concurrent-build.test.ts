import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { type BuildResult, type BuiltModel, buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, quoteIdent, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { loadModels } from '../../src/warehouse/models.ts';
import { runScheduled, type Task } from '../../src/warehouse/schedule.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { CORE_STREAMS } from '../helpers/truth.ts';

/**
 * Models built at once: the schedule (a model starts once what it depends on is built; independent ones
 * run side by side, never more than asked), and the build on top of it (each model on its own
 * connection): the same warehouse whatever the concurrency, the changed rows of an incremental model
 * seen by the model built on it from another connection, a failure named while others run. Nothing here
 * depends on how long anything takes: the order of events is what is checked.
 */

/** Lets every pending promise callback run (the schedule reacts to a task's end in callbacks). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('runScheduled', () => {
  /** Tasks that start when the schedule says and end when the test says; what happened, in order. */
  function controlled() {
    const events: string[] = [];
    const finish = new Map<string, (error?: Error) => void>();
    const aborted: string[] = [];
    const run = (task: Task, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        events.push(`start ${task.name}`);
        const onAbort = () => aborted.push(task.name);
        signal.addEventListener('abort', onAbort);
        finish.set(task.name, (error) => {
          signal.removeEventListener('abort', onAbort);
          events.push(`${error ? 'fail' : 'end'} ${task.name}`);
          if (error) reject(error);
          else resolve();
        });
      });
    const end = async (name: string, error?: Error) => {
      const done = finish.get(name);
      if (!done) throw new Error(`${name} has not started`);
      done(error);
      await settle();
    };
    return { events, aborted, run, end };
  }

  it('starts a task only once everything it depends on has finished, up to the limit at once', async () => {
    const tasks: Task[] = [
      { name: 'a', dependsOn: [] },
      { name: 'b', dependsOn: [] },
      { name: 'c', dependsOn: ['a', 'b'] },
      { name: 'd', dependsOn: ['a'] },
      // Built by an earlier build (not listed): ready at once.
      { name: 'e', dependsOn: ['kept'] },
    ];
    const { events, run, end } = controlled();
    let settled = false;
    const done = runScheduled({ tasks, limit: 2, run }).then(() => (settled = true));
    await settle();
    // Two independent tasks run at once; the limit holds the third back.
    expect(events).toEqual(['start a', 'start b']);
    await end('b');
    // c and d wait for a; e was waiting for a free slot only.
    expect(events).toEqual(['start a', 'start b', 'end b', 'start e']);
    await end('a');
    expect(events.slice(4)).toEqual(['end a', 'start c']);
    await end('e');
    expect(events.slice(6)).toEqual(['end e', 'start d']);
    await end('d');
    expect(settled).toBe(false);
    await end('c');
    await done;
    expect(settled).toBe(true);
  });

  it('runs the ready task of highest priority first, ties in the order given', async () => {
    const tasks: Task[] = ['small', 'large', 'middle', 'tied'].map((name) => ({ name, dependsOn: [] }));
    const priority = { small: 1, large: 3, middle: 2, tied: 1 } as Record<string, number>;
    const { events, run, end } = controlled();
    const done = runScheduled({ tasks, limit: 1, run, priority: (t) => priority[t.name] ?? 0 });
    for (const name of ['large', 'middle', 'small', 'tied']) {
      await settle();
      expect(events.at(-1)).toBe(`start ${name}`);
      await end(name);
    }
    await done;
  });

  it('stops at the first failure: nothing more starts, the running are aborted, that failure is thrown once they settle', async () => {
    const tasks: Task[] = [
      { name: 'x', dependsOn: [] },
      { name: 'y', dependsOn: [] },
      { name: 'after_x', dependsOn: ['x'] },
      { name: 'z', dependsOn: [] },
    ];
    const { events, aborted, run, end } = controlled();
    let outcome: unknown;
    const done = runScheduled({ tasks, limit: 2, run }).catch((error: unknown) => (outcome = error));
    await settle();
    await end('x', new Error('x broke'));
    expect(aborted).toEqual(['y']);
    // y still runs: the failure waits for it, and what y throws once stopped is not the failure.
    expect(outcome).toBeUndefined();
    await end('y', new Error('y interrupted'));
    await done;
    expect((outcome as Error).message).toBe('x broke');
    expect(events).toEqual(['start x', 'start y', 'fail x', 'fail y']);
  });
});

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
// The staging models and marts of the test's own (so it does not move with the real marts): two
// independent marts over different staging models, one over both of them, and one incremental_by.
const MODELS = join(tmp('avalake-models-'), 'models');
cpSync('sql/models/staging', join(MODELS, 'staging'), { recursive: true });
mkdirSync(join(MODELS, 'marts'));
const MARTS: Record<string, string> = {
  metric_points: `-- description: Points per chain and metric.
-- unique: chain_id, metric, time_interval
select chain_id, metric, time_interval, count(*) as count_points, max(period_start) as last_period_start
from stg_metrics
group by all
`,
  reward_days: `-- description: Rewards per day.
-- unique: reward_day
select cast(ended_at as date) as reward_day, count(*) as count_rewards
from stg_rewards
group by all
`,
  points_and_rewards: `-- description: A mart over two marts.
select (select sum(count_points) from metric_points) as count_points,
       (select sum(count_rewards) from reward_days) as count_rewards
`,
  metric_days: `-- description: Metric values per day, recomputed only for the days new points touch.
-- unique: network, chain_id, metric, metric_day
-- incremental_by: metric_day = cast(period_start as date) from stg_metrics
select network, chain_id, metric, cast(period_start as date) as metric_day, count(*) as count_points, sum("value") as sum_value
from stg_metrics
group by all
`,
};
for (const [name, sql] of Object.entries(MARTS)) writeFileSync(join(MODELS, 'marts', `${name}.sql`), sql);
const models = loadModels(MODELS);

let emulator: Emulator;
let workspace: ReturnType<typeof demoWorkspace>;

beforeAll(async () => {
  emulator = await startEmulator();
  workspace = demoWorkspace(emulator);
  const extract = await extractOnce(workspace.pipelinePath, workspace.dataDir, {
    streams: CORE_STREAMS.join(','),
  });
  expect(extract.status).toBe('ok');
});
afterAll(() => emulator.close());

/** A data directory with a copy of the workspace's lake, and the warehouse if there is one. */
function copyOf(dataDir: string): string {
  const dir = join(tmp('avalake-copy-'), 'data');
  cpSync(dataDir, dir, { recursive: true });
  return dir;
}

/**
 * Every table and view of two warehouses, every schema: the same columns in order, the same rows. But
 * `_lake.model_unique`: which keys a build has seen hold depends on the builds before it, not on the rows.
 */
async function expectSameWarehouse(a: string, b: string) {
  await withDuckDB(':memory:', async (db) => {
    await db.run(`attach '${a}' as a (read_only)`);
    await db.run(`attach '${b}' as b (read_only)`);
    const columns = (catalog: string) =>
      queryRows(
        db,
        `select table_schema, table_name, ordinal_position, column_name, data_type from information_schema.columns
         where table_catalog = '${catalog}' and table_name <> 'model_unique' order by all`,
      );
    const described = await columns('a');
    expect(described).toEqual(await columns('b'));
    const tables = [
      ...new Set(
        described.map((c) => `${quoteIdent(String(c.table_schema))}.${quoteIdent(String(c.table_name))}`),
      ),
    ];
    expect(tables.length).toBeGreaterThan(CORE_STREAMS.length);
    for (const t of tables) {
      const [diff] = await queryRows(
        db,
        `select (select count(*) from (select * from a.${t} except all select * from b.${t})) as only_a,
                (select count(*) from (select * from b.${t} except all select * from a.${t})) as only_b`,
      );
      expect({ table: t, ...diff }).toEqual({ table: t, only_a: '0', only_b: '0' });
    }
  });
}

const byName = (result: BuildResult) => new Map(result.built.map((b) => [b.name, b]));

describe('a build with models at once', () => {
  it('starts each model after everything it depends on is built, and builds independent ones side by side', async () => {
    const dataDir = copyOf(workspace.dataDir);
    const result = await buildWarehouse({ dataDir, modelsDir: MODELS, concurrency: 2 });
    const built = byName(result);
    expect([...built.keys()]).toEqual(expect.arrayContaining(Object.keys(MARTS)));
    let dependencies = 0;
    for (const model of models) {
      const b = built.get(model.name);
      if (!b) continue;
      for (const d of model.dependsOn) {
        const dependency = built.get(d) as BuiltModel;
        expect({ model: model.name, after: d, ended: dependency.endedAt <= b.startedAt }).toEqual({
          model: model.name,
          after: d,
          ended: true,
        });
        dependencies++;
      }
    }
    expect(dependencies).toBeGreaterThanOrEqual(5);
    // Side by side: two models whose times overlap (so neither depends on the other), never three.
    const all = [...built.values()];
    const overlapping = (a: BuiltModel, b: BuiltModel) => a.startedAt < b.endedAt && b.startedAt < a.endedAt;
    const pairs = all.flatMap((a, i) =>
      all
        .slice(i + 1)
        .filter((b) => overlapping(a, b))
        .map((b) => [a, b]),
    );
    expect(pairs.length).toBeGreaterThan(0);
    for (const b of all)
      expect(
        all.filter((o) => o.startedAt <= b.startedAt && b.startedAt < o.endedAt).length,
      ).toBeLessThanOrEqual(2);
    // The result lists the models in build order, whatever order they ended in.
    const listed = result.built.map((b) => b.name);
    for (const model of models)
      for (const d of model.dependsOn)
        if (built.has(model.name)) expect(listed.indexOf(d)).toBeLessThan(listed.indexOf(model.name));
  });

  it('gives the same warehouse one model at a time and four at once, from scratch and incrementally', async () => {
    const one = copyOf(workspace.dataDir);
    const four = copyOf(workspace.dataDir);
    await buildWarehouse({ dataDir: one, modelsDir: MODELS, concurrency: 1 });
    await buildWarehouse({ dataDir: four, modelsDir: MODELS, concurrency: 4 });
    await expectSameWarehouse(join(one, 'warehouse.duckdb'), join(four, 'warehouse.duckdb'));

    // New metric points: stg_metrics reads only the new files, and metric_days (built on another
    // connection) recomputes the days its changed rows touch.
    emulator.advance(2 * 86_400);
    expect((await extractOnce(workspace.pipelinePath, four, { streams: 'metrics' })).status).toBe('ok');
    const again = byName(await buildWarehouse({ dataDir: four, modelsDir: MODELS, concurrency: 4 }));
    expect(again.get('stg_metrics')?.mode).toBe('incremental');
    expect(again.get('metric_days')?.mode).toBe('incremental');
    const scratch = copyOf(four);
    await buildWarehouse({ dataDir: scratch, modelsDir: MODELS, concurrency: 1, fromScratch: true });
    await expectSameWarehouse(join(four, 'warehouse.duckdb'), join(scratch, 'warehouse.duckdb'));
  });

  it('a model failing while others are built is named, and the previous warehouse is left as it was', async () => {
    const dataDir = copyOf(workspace.dataDir);
    await buildWarehouse({ dataDir, modelsDir: MODELS, concurrency: 4 });
    const path = join(dataDir, 'warehouse.duckdb');
    const sha256 = () => createHash('sha256').update(readFileSync(path)).digest('hex');
    const before = sha256();
    const broken = join(tmp('avalake-models-'), 'models');
    cpSync(MODELS, broken, { recursive: true });
    writeFileSync(join(broken, 'marts', 'broken_model.sql'), 'select no_such_column from range(3)\n');
    await expect(buildWarehouse({ dataDir, modelsDir: broken, concurrency: 4 })).rejects.toThrow(
      /^model broken_model \(.*broken_model\.sql\) failed: Binder Error/,
    );
    expect(sha256()).toBe(before);
    expect(readdirSync(dataDir).sort()).toEqual(['lake', 'warehouse.duckdb']);
  });
});
