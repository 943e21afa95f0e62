import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  openApiExample,
  type StreamCase,
  type Totals,
} from './harness.ts';

const nativeTransactions: StreamCase = {
  stream: 'native_transactions',
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const totals: Totals = {};
    for (const chainId of pipeline.evm.chains) {
      const chain = emulator.truth.evm.chain(chainId);
      if (!chain) throw new Error(`no EVM chain ${chainId}`);
      for (const address of pipeline.evm.addresses)
        for (const tx of chain.listNative(address, {}, now, undefined, Number.MAX_SAFE_INTEGER).items)
          add(totals, `${chainId} ${address}`, tx.value);
    }
    return totals;
  },
  lake: {
    partition: "chain || ' ' || address",
    key: 'chain, address, txHash',
    amount: 'valueExact::hugeint',
  },
};

describe('native_transactions', () => {
  it('mirrors every native transaction, then reads only the new ones after the clock moves', async () => {
    await expectMirrorsTruth(nativeTransactions, 2 * 86_400, async ({ second }) => {
      expect(second.partitions.reduce((n, p) => n + p.rows, 0)).toBeGreaterThan(0);
    });
  });

  it('the fault mix of the core streams changes nothing', () =>
    expectFaultsChangeNothing(nativeTransactions));

  it("accepts the OpenAPI document's example", () => {
    const body = openApiExample('data', '/v1/chains/{chainId}/addresses/{address}/transactions:listNative');
    const [tx] = expectSchemaAccepts('native_transactions', body);
    expect(tx).toMatchObject({ txHash: expect.stringMatching(/^0x/), value: '10000000000000000000' });
  });
});
