import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { queryLake, streamTable } from '../../helpers/lake.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  openApiExample,
  type StreamCase,
  type Totals,
} from './harness.ts';

const erc721Balances: StreamCase = {
  stream: 'erc721_balances',
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const totals: Totals = {};
    for (const chainId of pipeline.evm.chains) {
      const chain = emulator.truth.evm.chain(chainId);
      if (!chain) throw new Error(`no EVM chain ${chainId}`);
      for (const address of pipeline.evm.addresses)
        for (const token of chain.listErc721Balances(
          address,
          undefined,
          now,
          undefined,
          Number.MAX_SAFE_INTEGER,
        ).items)
          add(totals, `${chainId} ${address}`, token.tokenId);
    }
    return totals;
  },
  lake: {
    partition: "chain || ' ' || owner",
    key: 'chain, owner, address, tokenId',
    amount: 'tokenIdExact::hugeint',
  },
};

describe('erc721_balances', () => {
  it('snapshots every token held, with the native balance, and again after the clock moves', async () => {
    await expectMirrorsTruth(erc721Balances, 2 * 86_400, async ({ dataDir, emulator, pipeline }) => {
      // Each row carries the holder's native balance at the latest block of the same answer.
      const rows = await queryLake(
        `select distinct chain, owner, nativeTokenBalance.balanceExact as balance from ${streamTable(dataDir, 'erc721_balances')} qualify _snapshot_at = max(_snapshot_at) over ()`,
      );
      expect(rows.length).toBeGreaterThan(0);
      const now = Math.floor(emulator.clock.now());
      for (const row of rows) {
        const chain = emulator.truth.evm.chain(row.chain as string);
        expect(row.balance).toBe(String(chain?.nativeBalance(row.owner as string, chain.head(now))));
      }
      expect(pipeline.evm.addresses.length).toBeGreaterThan(0);
    });
  });

  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(erc721Balances));

  it("accepts the OpenAPI document's example", () => {
    const body = openApiExample('data', '/v1/chains/{chainId}/addresses/{address}/balances:listErc721');
    const [token] = expectSchemaAccepts('erc721_balances', body);
    expect(token).toMatchObject({ chainId: '43114', nativeTokenBalance: { balance: '2000000000000000000' } });
  });
});
