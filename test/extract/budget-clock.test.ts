import { afterEach, expect, it, vi } from 'vitest';
import { createRateBudget } from '../../src/extract/budget.ts';
import { QuotaExhaustedError } from '../../src/extract/errors.ts';

afterEach(() => {
  vi.useRealTimers();
});

it('a wall clock stepped back while the run waits for its window is not taken for a spent daily quota', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-29T12:00:00Z') });
  const waits: number[] = [];
  const budget = createRateBudget({
    host: 'data-api',
    // The first wait is all this test needs: it ends the acquire there.
    sleep: async (ms) => {
      waits.push(ms);
      throw new Error('waited');
    },
  });
  await budget.acquire(100);
  budget.settle(100, 200, {
    'ratelimit-limit': '6000',
    'ratelimit-remaining': '0',
    'ratelimit-reset': '40',
    'ratelimit-policy': '6000;w=60, 1200000;w=86400',
  });
  vi.setSystemTime(Date.parse('2026-11-29T11:50:00Z')); // NTP steps the clock back ten minutes
  const error = await budget.acquire(100).catch((e: unknown) => e);
  expect(error).not.toBeInstanceOf(QuotaExhaustedError);
  expect((error as Error).message).toBe('waited');
  // The window's 40 seconds (and the margin), not 40 seconds plus the ten minutes the clock went back.
  expect(waits).toHaveLength(1);
  expect(waits[0]).toBeGreaterThan(39_000);
  expect(waits[0]).toBeLessThan(41_000);
});
