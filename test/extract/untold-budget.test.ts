import { describe, expect, it } from 'vitest';
import { createRateBudget, type RateBudget } from '../../src/extract/budget.ts';
import { createSharedBudget } from '../../src/extract/shared-budget.ts';

/**
 * A host whose answers carry no `ratelimit-*` headers (api-surfaces.md does not promise them; a gateway
 * may strip them): after its first answer the pipeline's concurrency alone sets the pace, for a worker
 * alone and for one sharing a catalog. Not after a failure to connect, a gateway's 5xx or a 429, which
 * may come from in front of a host that does send them.
 */

const neverWaits = async () => {
  throw new Error('waited');
};

const budgets: [string, () => RateBudget][] = [
  ['alone', () => createRateBudget({ host: 'h', now: () => 0, sleep: neverWaits })],
  [
    'on a catalog',
    () =>
      createSharedBudget({
        host: 'h',
        // A catalog that never learns the allowance: no answer ever tells it.
        allowance: { take: async () => ({ kind: 'unknown' }), learn: async () => {} },
        sleep: neverWaits,
      }),
  ],
];

describe.each(budgets)('a budget %s', (_name, make) => {
  it('sends one request at a time until an answer of the host’s own says nothing of an allowance', async () => {
    const budget = make();
    await budget.acquire(100);
    // The first answer is not back: the next request waits for what it will tell.
    await expect(budget.acquire(100)).rejects.toThrow('waited');
    // A failure to connect, a gateway's 502 and a 429 tell nothing: still one at a time.
    for (const status of [0, 502, 429]) {
      budget.settle(100, status, {});
      await budget.acquire(100);
      await expect(budget.acquire(100)).rejects.toThrow('waited');
    }
    budget.settle(100, 200, {});
    await budget.acquire(100);
    await budget.acquire(100);
    await budget.acquire(100);
  });
});
