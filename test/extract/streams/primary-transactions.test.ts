import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { exampleOf } from '../../helpers/openapi-examples.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  openApiExample,
  type StreamCase,
  type Totals,
} from './harness.ts';

const CHAINS = { p_chain_transactions: 'p', x_chain_transactions: 'x', c_chain_transactions: 'c' } as const;

/** Small pages where an address has few transactions, so that a run takes several (and meets faults). */
const PAGE_SIZE = { p_chain_transactions: 100, x_chain_transactions: 5, c_chain_transactions: 1 } as const;

/** Per address: its transactions on the chain (every party the world posts it under), summed by time. */
const caseOf = (stream: keyof typeof CHAINS): StreamCase => ({
  stream,
  edit: (p) => {
    p.pageSize = { [stream]: PAGE_SIZE[stream] };
  },
  pageSize: PAGE_SIZE[stream],
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const primary = emulator.truth.primary(pipeline.network);
    const totals: Totals = {};
    for (const tx of primary.transactions(CHAINS[stream], now))
      for (const address of pipeline.primary.addresses)
        if (tx.parties.includes(address)) add(totals, address, tx.time);
    return totals;
  },
  lake: {
    partition: 'address',
    key: 'address, txHash',
    amount: `epoch(${stream === 'p_chain_transactions' ? 'blockTimestamp' : '"timestamp"'})::bigint`,
  },
});

const TX_PATH = '/v1/networks/{network}/blockchains/{blockchainId}/transactions';

describe.each(Object.keys(CHAINS) as (keyof typeof CHAINS)[])('%s', (stream) => {
  it('mirrors the truth, then reads only what is new after the clock moves', () =>
    expectMirrorsTruth(caseOf(stream), 2 * 86_400));

  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(caseOf(stream)));
});

describe("the transaction schemas accept the OpenAPI document's examples", () => {
  it('P-Chain: UTXOs, amounts, L1 validator details, subnet ownership, BLS, blockchain info', () => {
    const [tx] = expectSchemaAccepts('p_chain_transactions', openApiExample('data', TX_PATH));
    expect(tx).toMatchObject({
      txHash: '3P91K6nuDFvDodcRuJTsgdf9SvYe5pMiKk38HppsoeAiEztCP',
      txType: 'AddDelegatorTx',
    });
    expect(tx?.consumedUtxos).toHaveLength(1);
    // Every optional part of the example is typed, not dropped.
    const full = exampleOf('data', 'PChainTransaction') as Record<string, unknown>;
    const [typed] = expectSchemaAccepts('p_chain_transactions', { transactions: [full] });
    for (const key of ['l1ValidatorDetails', 'subnetOwnershipInfo', 'blsCredentials', 'blockchainInfo'])
      expect(typed?.[key], key).toBeDefined();
    // genesisData stays whatever JSON the service sent: the lake stores it as text.
    expect((typed?.blockchainInfo as { genesisData: unknown } | undefined)?.genesisData).toEqual(
      (full.blockchainInfo as { genesisData: unknown }).genesisData,
    );
  });

  it('X-Chain: non-linear and linear forms', () => {
    for (const variant of ['XChainNonLinearTransaction', 'XChainLinearTransaction']) {
      const [tx] = expectSchemaAccepts('x_chain_transactions', {
        transactions: [exampleOf('data', variant)],
      });
      expect(tx?.txHash).toBe('3j9JpF1aGuQtLLbo3YkvvKkWrCZViXZjdeJQWUSEY5hcqUn2c');
    }
  });

  it('C-Chain: exports and imports', () => {
    for (const variant of ['CChainExportTransaction', 'CChainImportTransaction']) {
      const [tx] = expectSchemaAccepts('c_chain_transactions', {
        transactions: [exampleOf('data', variant)],
      });
      expect(tx?.blockHeight).toBe(1005);
    }
  });
});
