import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { PipelineSchema } from '../../src/extract/pipeline.ts';
import { type HttpPageRequest, keyOf, pathOf } from '../../src/extract/stream.ts';
import { STREAMS } from '../../src/extract/streams/index.ts';
import { openLake } from '../../src/load/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { fetchJson, startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace } from '../helpers/extract.ts';
import { queryWarehouse } from '../helpers/warehouse.ts';

/**
 * stg_rewards values a reward in USD exactly: nAVAX times the day's price, to the micro-dollar, rounded
 * half away from zero. Amounts and prices where a DOUBLE on the way (a DECIMAL divided by an integer is
 * one in DuckDB) gives another last digit.
 */
const CASES = [
  { amount: '123456789012345678', price: 23.330381, usd: '2880293924.694638' },
  { amount: '987654321098765432', price: 41.123457, usd: '40615760004.569273' },
  { amount: '1500', price: 1, usd: '0.000002' },
  { amount: '7', price: 0.000001, usd: '0.000000' },
];

let emulator: Emulator;
let dataDir: string;

beforeAll(async () => {
  emulator = await startEmulator();
  const workspace = demoWorkspace(emulator);
  dataDir = workspace.dataDir;
  const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
  const stream = STREAMS.find((s) => s.name === 'rewards');
  if (!stream || stream.strategy === 'height-walk') throw new Error('no rewards listing');
  // A reward as the service lists it, copied with each case's amount and price under a key of its own.
  let listed: { utxoId: string; reward: Record<string, unknown> } | undefined;
  let partition: ReturnType<typeof stream.partitions>[number] | undefined;
  for (partition of stream.partitions(pipeline)) {
    const request = stream.request(pipeline, partition, undefined) as HttpPageRequest;
    const query = new URLSearchParams(request.query as Record<string, string>);
    const page = await fetchJson(`${emulator.url}${pathOf(request)}?${query}`);
    [listed] = stream.records(page.body) as (typeof listed)[];
    if (listed) break;
  }
  if (!listed || !partition) throw new Error('the demo pipeline lists no reward');
  const records = CASES.map((c, i) =>
    stream.schema.parse({
      ...listed,
      utxoId: `${listed?.utxoId.slice(0, -2)}${String(i).padStart(2, '0')}`,
      reward: {
        ...listed?.reward,
        amount: c.amount,
        historicalPrice: { currencyCode: 'usd', value: c.price },
      },
    }),
  ) as Record<string, unknown>[];
  const lake = await openLake({ dataDir });
  try {
    const flush = lake.begin({ stream: 'rewards', partition, schema: stream.schema });
    await flush.append(records);
    await flush.commit({ head: keyOf(stream.primaryKey, records[0] as Record<string, unknown>), open: {} });
  } finally {
    await lake.close();
  }
  const models = join(mkdtempSync(join(tmpdir(), 'avalake-models-')), 'models');
  cpSync('sql/models/staging/stg_rewards.sql', join(models, 'staging', 'stg_rewards.sql'), {
    recursive: true,
  });
  await buildWarehouse({ dataDir, modelsDir: models });
}, 60_000);
afterAll(() => emulator?.close());

it('reward_usd is nAVAX times the price to the micro-dollar, with no float on the way', async () => {
  const rows = await queryWarehouse(
    dataDir,
    'select cast(reward_navax as varchar) as amount, cast(reward_usd as varchar) as usd from stg_rewards order by utxo_id',
  );
  expect(rows).toEqual(CASES.map((c) => ({ amount: c.amount, usd: c.usd })));
});
