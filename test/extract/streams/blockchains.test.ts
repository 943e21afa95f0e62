import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { fetchJson, startEmulator } from '../../helpers/emulator.ts';
import { extractOnce } from '../../helpers/extract.ts';
import { responseExampleOf } from '../../helpers/openapi-examples.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  FAULT_MIX,
  lakeTotals,
  type StreamCase,
  type Totals,
  workspaceFor,
} from './harness.ts';

/** The node's own answer, in one call: the world has no accessor for the chain list or statuses. */
const rpc = async (pipeline: Pipeline, method: string, params: Record<string, unknown> = {}) =>
  (
    await fetchJson(`${pipeline.urls.node}/ext/bc/P`, {
      method: 'POST',
      body: { jsonrpc: '2.0', id: 1, method, params },
    })
  ).body.result;

const blockchains: StreamCase = {
  stream: 'p_chain_blockchains',
  async truth(_emulator: Emulator, pipeline: Pipeline) {
    const totals: Totals = {};
    for (const b of (await rpc(pipeline, 'platform.getBlockchains')).blockchains)
      add(totals, b.subnetID, b.id.length);
    return totals;
  },
  lake: { partition: 'subnetID', key: 'id', amount: 'length(id)' },
  changes: false,
};

const STATUS_CODE: Record<string, number> = {
  Validating: 1,
  Created: 2,
  Preferred: 3,
  Syncing: 4,
  Unknown: 5,
};
const sqlCode = `case status ${Object.entries(STATUS_CODE)
  .map(([s, n]) => `when '${s}' then ${n}`)
  .join(' ')} end`;

const status: StreamCase = {
  stream: 'blockchain_status',
  async truth(_emulator: Emulator, pipeline: Pipeline) {
    const totals: Totals = {};
    const ids = [
      '11111111111111111111111111111111LpoYY',
      '2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm',
      'yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp',
    ];
    for (const id of ids)
      add(
        totals,
        id,
        STATUS_CODE[(await rpc(pipeline, 'platform.getBlockchainStatus', { blockchainID: id })).status] ?? 0,
      );
    return totals;
  },
  lake: { partition: 'blockchainId', key: 'blockchainId', amount: sqlCode },
  changes: false,
};

describe('p_chain_blockchains', () => {
  it('snapshots the chain list with one call per run', () => expectMirrorsTruth(blockchains, 2 * 86_400));
  it('the fault mix of the core streams changes nothing', async () => {
    // One call per run meets a fault only now and then: run until faults were met, checking every run.
    const emulator = await startEmulator({ faults: FAULT_MIX });
    try {
      const w = workspaceFor(emulator, blockchains);
      const truth = await blockchains.truth(emulator, w.pipeline);
      const faults = () =>
        (emulator.requests.byStatus.get(429) ?? 0) + (emulator.requests.byStatus.get(500) ?? 0);
      for (let run = 0; run < 20 && faults() < 2; run++) {
        expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
        expect(await lakeTotals(w.dataDir, blockchains)).toEqual(truth);
      }
      expect(faults()).toBeGreaterThan(0);
    } finally {
      await emulator.close();
    }
  });
  it("accepts the node document's example", () => {
    const body = responseExampleOf('rpc', 'POST', '/ext/bc/P#platform.getBlockchains') as { result: unknown };
    const [chain] = expectSchemaAccepts('p_chain_blockchains', body.result);
    expect(chain?.id).toBe('2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM');
  });
});

describe('blockchain_status', () => {
  it('snapshots the status of the P-, X- and C-Chain', () => expectMirrorsTruth(status, 2 * 86_400));
  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(status));
  it("accepts the node document's example", () => {
    const body = responseExampleOf('rpc', 'POST', '/ext/bc/P#platform.getBlockchainStatus') as {
      result: unknown;
    };
    expect(expectSchemaAccepts('blockchain_status', body.result)).toHaveLength(1);
  });
});
