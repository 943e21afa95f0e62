import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Pipeline } from '../../src/extract/pipeline.ts';
import { isUnchangedAnswer, type WalkStep, walkOf } from '../../src/extract/strategies/index.ts';
import { defineStream, httpGet } from '../../src/extract/stream.ts';

/**
 * A snapshot read in one go holds its rows back until its last page tells whether the answer changed:
 * an unchanged one hands on no rows at all, a changed one every row, once. Past the flush size the rows
 * go on as they come, and the runner throws the flush away if the answer turns out the same.
 */

/** Five pages of three records; a record of page 3 can be spoilt (rejected) or changed. */
function pagesOf(change: 'none' | 'changed' | 'rejected') {
  const pages = Array.from({ length: 5 }, (_, p) => ({
    items: Array.from({ length: 3 }, (_, i) => ({ id: `r${p * 3 + i}`, amount: p * 3 + i })) as unknown[],
    ...(p < 4 ? { nextPageToken: `t${p + 1}` } : {}),
  }));
  const third = pages[2]?.items as unknown[];
  if (change === 'changed') third[1] = { id: 'r7', amount: 700 };
  if (change === 'rejected') third[1] = { id: 'r7', amount: 'lots' };
  return pages;
}

const stream = defineStream({
  name: 'test_snapshot',
  description: 'a paged snapshot',
  strategy: 'snapshot',
  schema: z.object({ id: z.string(), amount: z.number() }),
  primaryKey: ['id'],
  partitions: () => [{ network: 'fuji' }],
  request: () => httpGet({ service: 'data', route: '/v1/test', params: {}, query: {} }),
  records: (body) => (body as { items: unknown[] }).items,
});

/** Every step of one walk of the pages, at flushes of `flushRows`, after `committed`. */
async function walk(
  pages: ReturnType<typeof pagesOf>,
  flushRows: number,
  committed?: Record<string, unknown>,
): Promise<WalkStep[]> {
  const steps: WalkStep[] = [];
  const ctx = {
    stream,
    pipeline: { flush: { rows: flushRows, bytes: 1 << 26, seconds: 60 } } as Pipeline,
    partition: { network: 'fuji' },
    checkpoint: committed,
    fetchPage: async (_: unknown, token?: string) =>
      structuredClone(pages[token ? Number(token.slice(1)) : 0]),
  };
  for await (const step of walkOf(stream, ctx, 1_800_000_000_000)) steps.push(step);
  return steps;
}

const ids = (steps: WalkStep[]) => steps.flatMap((s) => s.append.map((r) => r.id));
const ALL = Array.from({ length: 15 }, (_, i) => `r${i}`);

describe('a snapshot holds its rows back until it knows the answer changed', () => {
  it('hands every row on at its last page the first time, none when the answer is the one committed', async () => {
    const first = await walk(pagesOf('none'), 50_000);
    expect(first.map((s) => s.append.length)).toEqual([0, 0, 0, 0, 15]);
    expect(ids(first)).toEqual(ALL);
    expect(first.at(-1)?.append[0]).toMatchObject({
      _snapshot_at: 1_800_000_000_000,
      _partition: expect.any(String),
    });
    const done = first.at(-1)?.checkpoint as Record<string, unknown>;

    const again = await walk(pagesOf('none'), 50_000, done);
    expect(again.map((s) => s.append.length)).toEqual([0, 0, 0, 0, 0]);
    // The runner sees the same answer, and records only that it was still true.
    expect(isUnchangedAnswer(done, again.at(-1)?.checkpoint as Record<string, unknown>, false)).toBe(true);
  });

  it('hands every row on when one record changed, none when the same record is rejected again', async () => {
    const done = (await walk(pagesOf('none'), 50_000)).at(-1)?.checkpoint as Record<string, unknown>;
    const changed = await walk(pagesOf('changed'), 50_000, done);
    expect(ids(changed)).toEqual(ALL);
    expect(changed.at(-1)?.append.find((r) => r.id === 'r7')).toMatchObject({ amount: 700 });

    // A rejected record changes the answer: every other row is handed on beside its reject.
    const spoilt = await walk(pagesOf('rejected'), 50_000, done);
    expect(ids(spoilt)).toEqual(ALL.filter((id) => id !== 'r7'));
    expect(spoilt.flatMap((s) => s.rejects)).toHaveLength(1);
    // The same answer, rejected record and all, as the one committed: nothing is handed on (the runner
    // records only that it was still true; its reject was committed with it the first time).
    const committed = spoilt.at(-1)?.checkpoint as Record<string, unknown>;
    const again = await walk(pagesOf('rejected'), 50_000, committed);
    expect(isUnchangedAnswer(committed, again.at(-1)?.checkpoint as Record<string, unknown>, false)).toBe(
      true,
    );
    expect(ids(again)).toEqual([]);
  });

  it('past the flush size, hands the rows on as they come, each once', async () => {
    const done = (await walk(pagesOf('none'), 50_000)).at(-1)?.checkpoint as Record<string, unknown>;
    for (const committed of [undefined, done]) {
      const steps = await walk(pagesOf('none'), 7, committed);
      // Held until 7 or more are in hand (page 3 brings the ninth), then page by page.
      expect(steps.map((s) => s.append.length)).toEqual([0, 0, 9, 3, 3]);
      expect(ids(steps)).toEqual(ALL);
    }
  });
});
