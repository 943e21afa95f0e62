import { describe, expect, it } from 'vitest';
import { responseExampleOf } from '../../helpers/openapi-examples.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  type StreamCase,
  type Totals,
} from './harness.ts';

const balances: StreamCase = {
  stream: 'p_chain_balances',
  truth(emulator, pipeline) {
    const now = Math.floor(emulator.clock.now());
    const primary = emulator.truth.primary(pipeline.network);
    const totals: Totals = {};
    for (const address of pipeline.primary.addresses)
      add(totals, address, primary.balances('p', [address], now).unlockedUnstaked.amount);
    return totals;
  },
  lake: { partition: 'address', key: 'address', amount: 'unlocked' },
};

describe('p_chain_balances', () => {
  it('snapshots each address with one call, and again after the clock moves', () =>
    expectMirrorsTruth(balances, 2 * 86_400));
  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(balances));
  it("accepts the node document's example", () => {
    const body = responseExampleOf('rpc', 'POST', '/ext/bc/P#platform.getBalance') as { result: unknown };
    const [row] = expectSchemaAccepts('p_chain_balances', body.result);
    expect(row).toMatchObject({ balance: '1000000000', balances: [] });
  });
});
