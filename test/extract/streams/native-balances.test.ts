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

const nativeBalances: StreamCase = {
  stream: 'native_balances',
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const totals: Totals = {};
    for (const chainId of pipeline.evm.chains) {
      const chain = emulator.truth.evm.chain(chainId);
      if (!chain) throw new Error(`no EVM chain ${chainId}`);
      for (const address of pipeline.evm.addresses)
        add(totals, `${chainId} ${address}`, chain.nativeBalance(address, chain.head(now)));
    }
    return totals;
  },
  lake: { partition: "chain || ' ' || address", key: 'chain, address', amount: 'balanceExact::hugeint' },
};

describe('native_balances', () => {
  it('snapshots each balance with one request, and again after the clock moves', async () => {
    await expectMirrorsTruth(nativeBalances, 2 * 86_400, async ({ first, second }) => {
      for (const run of [first, second])
        for (const p of run.partitions) expect([p.requests, p.rows]).toEqual([1, 1]);
    });
  });

  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(nativeBalances));

  it("accepts the OpenAPI document's example", () => {
    const body = openApiExample('data', '/v1/chains/{chainId}/addresses/{address}/balances:getNative');
    const [balance] = expectSchemaAccepts('native_balances', body);
    expect(balance).toMatchObject({ chainId: '43114', decimals: 18, balance: '2000000000000000000' });
  });
});
