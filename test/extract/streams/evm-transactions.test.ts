import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { PipelineSchema } from '../../../src/extract/pipeline.ts';
import { queryLake, streamTable } from '../../helpers/lake.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  openApiExample,
  type StreamCase,
  streamNamed,
  type Totals,
} from './harness.ts';

const evmTransactions: StreamCase = {
  stream: 'evm_transactions',
  // The chain with the fewest transactions (4,400 in this world): a whole-chain walk in a few seconds.
  edit(p) {
    const evm = p.evm as { chains: string[] };
    evm.chains = evm.chains.slice(-1);
  },
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const totals: Totals = {};
    for (const chainId of pipeline.evm.chains) {
      const chain = emulator.truth.evm.chain(chainId);
      if (!chain) throw new Error(`no EVM chain ${chainId}`);
      for (const tx of chain.listLatestTransactions(undefined, now, undefined, Number.MAX_SAFE_INTEGER).items)
        add(totals, chainId, tx.value);
    }
    return totals;
  },
  lake: { partition: 'chain', key: 'chain, txHash', amount: 'valueExact::hugeint' },
};

describe('evm_transactions', () => {
  it('mirrors every transaction of each chain, then reads only the new ones after the clock moves', async () => {
    await expectMirrorsTruth(evmTransactions, 86_400, async ({ dataDir, emulator, pipeline }) => {
      // Both statuses land in the one partition per chain; txStatus tells them apart.
      const now = Math.floor(emulator.clock.now());
      const chainId = pipeline.evm.chains[0] as string;
      const failed = emulator.truth.evm
        .chain(chainId)
        ?.listLatestTransactions('failed', now, undefined, Number.MAX_SAFE_INTEGER).items.length;
      const [row] = await queryLake(
        `select count(*)::int as n from ${streamTable(dataDir, 'evm_transactions')} where chain = '${chainId}' and txStatus = '0'`,
      );
      expect(failed).toBeGreaterThan(0);
      expect(row?.n).toBe(failed);
    });
  });

  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(evmTransactions));

  it('is fed only when the pipeline names it: its first run reads the chain back to genesis', () => {
    const base = { network: 'fuji', evm: { chains: ['43113'] } } as const;
    expect(streamNamed('evm_transactions').partitions(PipelineSchema.parse(base))).toEqual([]);
    expect(
      streamNamed('evm_transactions').partitions(
        PipelineSchema.parse({ ...base, streams: ['evm_transactions'] }),
      ),
    ).toEqual([{ network: 'fuji', chain: '43113' }]);
  });

  it("accepts the OpenAPI document's example", () => {
    const body = openApiExample('data', '/v1/chains/{chainId}/transactions');
    const [tx] = expectSchemaAccepts('evm_transactions', body);
    expect(tx).toMatchObject({ txStatus: '1', blockNumber: '339', gasPrice: '470000000000' });
  });
});
