import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { type Pipeline, PipelineSchema } from '../../src/extract/pipeline.ts';
import { type HttpPageRequest, keyOf, pathOf } from '../../src/extract/stream.ts';
import { STREAM_NAMES, STREAMS } from '../../src/extract/streams/index.ts';
import { openLake } from '../../src/load/index.ts';
import { type BuildResult, buildWarehouse, DEFAULT_MODELS_DIR } from '../../src/warehouse/build.ts';
import { DICTIONARY_PATH, generateDictionary } from '../../src/warehouse/dictionary.ts';
import { loadModels, type Model } from '../../src/warehouse/models.ts';
import { runWarehouseTests, type TestReport } from '../../src/warehouse/test.ts';
import { fetchJson, startEmulator, TEST_EPOCH } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { queryWarehouse } from '../helpers/warehouse.ts';

/** Streams that read a whole chain newest first with no lower bound: seeded near the head. */
const WHOLE_CHAIN_NEWEST_FIRST = [
  'evm_blocks',
  'evm_transactions',
  'p_chain_latest_transactions',
  'x_chain_latest_transactions',
  'c_chain_latest_transactions',
  'x_chain_vertices',
];
/** Records of each whole-chain listing the run reads: one page below the seeded head. */
const DEPTH = 50;
/** Heights of the P-Chain walks the run reads. */
const HEIGHTS = 30;

/**
 * Note: the whole-chain listings and the height walks would read the world back to genesis (millions
 * of EVM blocks); like their stream tests, the lake starts from a checkpoint an earlier run would have
 * left a page below the head, so one run reads each of them briefly.
 */
async function seedNearHead(dataDir: string, emulator: Emulator, pipeline: Pipeline) {
  const lake = await openLake({ dataDir });
  try {
    for (const stream of STREAMS) {
      if (stream.strategy === 'height-walk') {
        const next = emulator.truth.primary(pipeline.network).blockCount(Math.floor(emulator.clock.now()));
        for (const partition of stream.partitions(pipeline)) {
          const flush = lake.begin({ stream: stream.name, partition, schema: stream.schema });
          await flush.append([]);
          await flush.commit({ next: next - HEIGHTS });
        }
      }
      if (!WHOLE_CHAIN_NEWEST_FIRST.includes(stream.name) || stream.strategy === 'height-walk') continue;
      for (const partition of stream.partitions(pipeline)) {
        const request = stream.request(pipeline, partition, undefined) as HttpPageRequest;
        const page = await fetchJson(`${emulator.url}${pathOf(request)}?pageSize=${DEPTH}`);
        const records = stream.records(page.body) as unknown[];
        // A listing shorter than a page is read whole.
        if (records.length < DEPTH) continue;
        const head = stream.schema.parse(records[records.length - 1]) as Record<string, unknown>;
        const flush = lake.begin({ stream: stream.name, partition, schema: stream.schema });
        await flush.append([head]);
        await flush.commit({ head: keyOf(stream.primaryKey, head), open: {} });
      }
    }
  } finally {
    await lake.close();
  }
}

describe('staging models of every stream', () => {
  let emulator: Emulator;
  let dataDir: string;
  let built: BuildResult;
  let report: TestReport;
  const models = new Map<string, Model>(loadModels(DEFAULT_MODELS_DIR).map((m) => [m.name, m]));

  beforeAll(async () => {
    emulator = await startEmulator();
    const workspace = demoWorkspace(emulator, (p) => {
      p.streams = [...STREAM_NAMES];
      const evm = p.evm as { chains: string[]; collections?: string[] };
      evm.collections = evm.chains.flatMap((chainId) => {
        const chain = emulator.truth.evm.chain(chainId);
        return (chain?.nfts.collections ?? []).map((i) => chain?.core.contracts[i]?.address as string);
      });
      const blocks = emulator.truth.primary('fuji').blocks(Math.floor(emulator.clock.now()));
      const primary = p.primary as Record<string, unknown>;
      primary.blockIds = [blocks[1]?.hash, blocks[blocks.length - 1]?.hash];
      primary.balancesAsOf = new Date((TEST_EPOCH - 86_400) * 1000).toISOString().slice(0, 10);
    });
    dataDir = workspace.dataDir;
    const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
    await seedNearHead(dataDir, emulator, pipeline);
    const summary = await extractOnce(workspace.pipelinePath, dataDir);
    expect(summary.status).toBe('ok');
    built = await buildWarehouse({ dataDir });
    report = await runWarehouseTests({ dataDir, maxAge: { defaultSeconds: 1000 * 86_400, byStream: {} } });
  }, 60_000);
  afterAll(() => emulator?.close());

  it('every stream has a staging model, and every staging model reads its stream', () => {
    for (const stream of STREAM_NAMES) expect(models.get(`stg_${stream}`)?.lakeStreams).toEqual([stream]);
    const staging = [...models.values()].filter((m) => m.layer === 'staging').map((m) => m.name);
    expect(staging.sort()).toEqual(STREAM_NAMES.map((s) => `stg_${s}`).sort());
  });

  it.each(STREAM_NAMES)(
    'stg_%s builds, has rows, and its key, not_null and accepted_values hold',
    async (s) => {
      const name = `stg_${s}`;
      const model = models.get(name) as Model;
      expect(built.skipped.filter((k) => k.name === name)).toEqual([]);
      expect(built.built.map((b) => b.name)).toContain(name);
      const [count] = await queryWarehouse(dataDir, `select count(*)::int as n from ${name}`);
      expect(count?.n).toBeGreaterThan(0);

      expect(model.unique.length, `${name} declares its key`).toBeGreaterThan(0);
      const outcomes = report.outcomes.filter((o) => o.subject === name);
      const expected = 1 + new Set([...model.unique, ...model.notNull]).size + model.acceptedValues.length;
      expect(outcomes).toHaveLength(expected);
      const failing = outcomes.filter((o) => o.status !== 'pass');
      expect(
        failing.map((o) => `${o.name}: ${o.status} ${o.message} ${JSON.stringify(o.sample?.rows)}`),
      ).toEqual([]);
    },
  );

  it.each(STREAM_NAMES)("stg_%s documents its columns in order with '-- column:'", async (s) => {
    const name = `stg_${s}`;
    const model = models.get(name) as Model;
    const columns = (await queryWarehouse(dataDir, `describe ${name}`)).map((r) => r.column_name as string);
    const documented = model.columns.map((c) => c.name);
    for (const c of model.columns) expect(c.description, `${name}.${c.name}`).not.toBe('');
    expect(documented).toEqual(columns);
  });

  it('keeps amounts exact and times zoned: DECIMAL(38,0) and TIMESTAMP WITH TIME ZONE', async () => {
    const names = STREAM_NAMES.map((s) => `'stg_${s}'`).join(', ');
    const rows = await queryWarehouse(
      dataDir,
      `select table_name, column_name, data_type from information_schema.columns where table_name in (${names})`,
    );
    const bad = rows.filter((r) => {
      const column = r.column_name as string;
      const type = r.data_type as string;
      if (/_(navax|wei)$/.test(column)) return type !== 'DECIMAL(38,0)';
      if (/(_at|_timestamp|_time)$/.test(column)) return type !== 'TIMESTAMP WITH TIME ZONE';
      return type === 'DOUBLE' && /(amount|balance|supply)/.test(column) && !/_(usd|tokens)$/.test(column);
    });
    expect(bad).toEqual([]);
  });

  it('no column of any model is HUGEINT: Parquet has no such type, and an export turns it into DOUBLE', async () => {
    const rows = await queryWarehouse(
      dataDir,
      "select table_name || '.' || column_name as c from information_schema.columns where data_type = 'HUGEINT' and table_schema = 'main' order by c",
    );
    expect(rows).toEqual([]);
  });

  // Every model builds here, so this is where the data dictionary's drift is checked. To regenerate it
  // after changing a model's header: AVALAKE_WRITE_DICTIONARY=1 npx vitest run test/warehouse/staging-all.test.ts
  it('docs/data-dictionary.md is what `avalake docs` generates from sql/models (a doc that drifts fails here)', async () => {
    expect(built.skipped).toEqual([]);
    const dictionary = await generateDictionary({ dataDir });
    expect(dictionary.problems).toEqual([]);
    if (process.env.AVALAKE_WRITE_DICTIONARY === '1') writeFileSync(DICTIONARY_PATH, dictionary.markdown);
    expect(readFileSync(DICTIONARY_PATH, 'utf8')).toBe(dictionary.markdown);
  });
});
