import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../../src/emulator/index.ts';
import type { Pipeline } from '../../../src/extract/pipeline.ts';
import { TEST_EPOCH } from '../../helpers/emulator.ts';
import { exampleOf } from '../../helpers/openapi-examples.ts';
import {
  add,
  expectFaultsChangeNothing,
  expectMirrorsTruth,
  expectSchemaAccepts,
  type StreamCase,
  type Totals,
} from './harness.ts';

/** The day before the test clock starts: its balances are those at 23:59:59 that day. */
const AS_OF = new Date((TEST_EPOCH - 86_400) * 1000).toISOString().slice(0, 10);
const endOfDay = Date.parse(`${AS_OF}T23:59:59Z`) / 1000;

const primaryBalances: StreamCase = {
  stream: 'primary_balances',
  edit: (p) => {
    (p.primary as Record<string, unknown>).balancesAsOf = AS_OF;
  },
  truth(emulator: Emulator, pipeline: Pipeline) {
    const now = Math.floor(emulator.clock.now());
    const primary = emulator.truth.primary(pipeline.network);
    const totals: Totals = {};
    for (const chain of ['p', 'x', 'c'] as const)
      for (const address of pipeline.primary.addresses)
        for (const [asOf, at] of [
          ['latest', now],
          [AS_OF, Math.min(endOfDay, now)],
        ] as const) {
          const b = primary.balances(chain, [address], at);
          const label = `${chain}-chain ${address} ${asOf}`;
          // What each chain reports (§2.4): the P-Chain every bucket, the X-Chain its unlocked, the C-Chain atomic memory only.
          const buckets =
            chain === 'p'
              ? [b.unlockedUnstaked, b.unlockedStaked, b.pendingStaked]
              : chain === 'x'
                ? [b.unlockedUnstaked]
                : [];
          for (const bucket of buckets) if (bucket.utxos.length > 0) add(totals, label, bucket.amount);
          for (const bucket of b.atomic.values()) add(totals, label, bucket.amount);
        }
    return totals;
  },
  lake: {
    partition: "chain || ' ' || address || ' ' || asOfDay",
    key: 'chain, address, asOfDay, category, assetId',
    amount: 'amount',
  },
  pageSize: Number.MAX_SAFE_INTEGER,
};

describe('primary_balances', () => {
  it('snapshots every address on each chain, now and as of a past day, one request each', async () => {
    const { first, second } = await expectMirrorsTruth(primaryBalances, 2 * 86_400);
    for (const run of [first, second]) for (const p of run.partitions) expect(p.requests).toBe(1);
    expect(new Set(first.partitions.map((p) => p.partition.asOfDay))).toEqual(new Set(['latest', AS_OF]));
  });

  it('the fault mix of the core streams changes nothing', () => expectFaultsChangeNothing(primaryBalances));

  it("accepts the OpenAPI document's examples of each chain's answer", () => {
    for (const [variant, categories] of [
      ['ListPChainBalancesResponse', 8],
      ['ListXChainBalancesResponse', 4],
      ['ListCChainAtomicBalancesResponse', 2],
    ] as const) {
      const rows = expectSchemaAccepts('primary_balances', exampleOf('data', variant));
      expect(rows, variant).toHaveLength(categories);
      expect(rows[0]).toMatchObject({
        amount: '5001000',
        assetId: 'th5aLdWLi32yS9ED6uLGoMMubqHjzMsXhKWwzP6yZTYQKYzof',
      });
    }
  });
});
