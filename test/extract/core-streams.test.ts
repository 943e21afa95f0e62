import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { type Pipeline, PipelineSchema } from '../../src/extract/pipeline.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce, requestsOf } from '../helpers/extract.ts';
import { newestVersions, queryLake, streamTable } from '../helpers/lake.ts';
import { type Totals, truthOf } from '../helpers/truth.ts';

/** The same totals as `truthOf`, read back from the lake with DuckDB (newest version per key). */
async function lakeTotals(dataDir: string): Promise<Totals> {
  const specs: [stream: string, key: string, partition: string, amount: string][] = [
    ['rewards', 'subject, utxoId', 'subject', 'reward.amount'],
    ['delegators', 'subject, txHash', 'subject', 'amountDelegated'],
    ['utxos', 'chain, address, utxoId', "chain || ' ' || address", 'coalesce(amount, asset.amount)'],
    ['staking_transactions', 'address, txHash', 'address', 'coalesce(amountStaked[1].amount, 0)'],
    ['erc20_transfers', 'chain, address, txHash, logIndex', "chain || ' ' || address", 'valueExact::hugeint'],
    ['icm_messages', 'address, messageId', 'address', 'messageNonceExact::hugeint'],
    ['validators', 'subnet, nodeID', 'subnet', 'weight'],
  ];
  const totals: Totals = {};
  for (const [stream, key, partition, amount] of specs) {
    // Validators are snapshots: the truth is each subnet's newest one.
    const from =
      stream === 'validators'
        ? `(select * from ${streamTable(dataDir, stream)} qualify _snapshot_at = max(_snapshot_at) over (partition by subnet))`
        : newestVersions(dataDir, stream, key);
    const rows = await queryLake(
      `select ${partition} as p, count(*)::int as n, sum(${amount})::varchar as s from ${from} group by all`,
    );
    totals[stream] = Object.fromEntries(
      rows.map((r) => [r.p as string, { rows: r.n as number, sum: (r.s as string).replace(/\.0+$/, '') }]),
    );
  }
  return totals;
}

const CORE = [
  'rewards',
  'delegators',
  'staking_transactions',
  'utxos',
  'erc20_transfers',
  'icm_messages',
  'validators',
];
const sorted = (t: Totals) =>
  Object.fromEntries(
    CORE.map((s) => [s, Object.fromEntries(Object.entries(t[s] ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)))]),
  );

describe('extract of the core streams against the emulator', () => {
  let emulator: Emulator;
  let workspace: ReturnType<typeof demoWorkspace>;
  let pipeline: Pipeline;

  beforeAll(async () => {
    emulator = await startEmulator();
    workspace = demoWorkspace(emulator);
    pipeline = PipelineSchema.parse(JSON.parse(readFileSync(workspace.pipelinePath, 'utf8')));
  });
  afterAll(() => emulator.close());

  it('mirrors every record of the truth, then only what is new after the clock moves', async () => {
    const first = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(first.status).toBe('ok');
    expect(sorted(await lakeTotals(workspace.dataDir))).toEqual(sorted(await truthOf(emulator, pipeline)));
    // A second run at the same time fetches one page per partition and appends nothing but snapshots.
    const idle = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(requestsOf(idle)).toBe(idle.partitions.length);
    expect(
      idle.partitions
        .filter((p) => !['validators', 'validator_delegators'].includes(p.stream))
        .every((p) => p.rows === 0),
    ).toBe(true);

    emulator.advance(2 * 86_400);
    const second = await extractOnce(workspace.pipelinePath, workspace.dataDir);
    expect(second.status).toBe('ok');
    expect(sorted(await lakeTotals(workspace.dataDir))).toEqual(sorted(await truthOf(emulator, pipeline)));
    expect(requestsOf(second)).toBeLessThan(requestsOf(first));
  });
});
