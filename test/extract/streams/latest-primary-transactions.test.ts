import { describe, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  type StreamCase,
  type Totals,
} from './harness.ts';

const CHAINS = {
  p_chain_latest_transactions: 'p',
  x_chain_latest_transactions: 'x',
  c_chain_latest_transactions: 'c',
} as const;

/** Every transaction of the chain up to now, summed by time. */
/** The C-Chain has few atomic transactions: small pages, so that a run takes several (and meets faults). */
const PAGE_SIZE = {
  p_chain_latest_transactions: 100,
  x_chain_latest_transactions: 100,
  c_chain_latest_transactions: 5,
} as const;

const caseOf = (stream: keyof typeof CHAINS): StreamCase => ({
  stream,
  edit: (p) => {
    p.pageSize = { [stream]: PAGE_SIZE[stream] };
  },
  pageSize: PAGE_SIZE[stream],
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const totals: Totals = {};
    for (const tx of emulator.truth.primary(pipeline.network).transactions(CHAINS[stream], now))
      add(totals, 'all', tx.time);
    return totals;
  },
  lake: {
    partition: "'all'",
    key: 'txHash',
    amount: `epoch(${stream === 'p_chain_latest_transactions' ? 'blockTimestamp' : '"timestamp"'})::bigint`,
  },
});

describe.each(Object.keys(CHAINS) as (keyof typeof CHAINS)[])('%s', (stream) => {
  it('mirrors the chain, then walks down only to the last run', () =>
    expectMirrorsTruth(caseOf(stream), 2 * 86_400));
  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(caseOf(stream)));
});
