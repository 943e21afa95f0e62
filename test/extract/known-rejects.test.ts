import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { HttpClient } from '../../src/extract/http.ts';
import { KNOWN_REJECTS, knownRejectsOf } from '../../src/extract/known-rejects.ts';
import { readLakeState } from '../../src/load/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { extractOnce, pipelineWorkspace, smallPipeline } from '../helpers/extract.ts';
import { queryLake } from '../helpers/lake.ts';

const reject = (raw: string) => ({ raw, reason: 'amount: expected a number' });

describe('knownRejectsOf', () => {
  it('passes each raw record once, remembers what the checkpoint carried, and hides it from the walk', () => {
    const first = knownRejectsOf({ head: 'h' });
    expect(first.checkpoint).toEqual({ head: 'h' });
    expect(first.fresh([reject('{"a":1}'), reject('{"a":2}'), reject('{"a":1}')]).map((r) => r.raw)).toEqual([
      '{"a":1}',
      '{"a":2}',
    ]);
    const stored = first.attach({ head: 'h2' });
    expect(stored.head).toBe('h2');
    expect(stored[KNOWN_REJECTS]).toHaveLength(2);

    const next = knownRejectsOf(stored);
    expect(next.checkpoint).toEqual({ head: 'h2' });
    expect(next.fresh([reject('{"a":2}'), reject('{"a":3}')]).map((r) => r.raw)).toEqual(['{"a":3}']);
    // A full refresh (no checkpoint) writes its rejects anew.
    expect(knownRejectsOf(undefined).checkpoint).toBeUndefined();
  });

  it('keeps the 256 met last; one read again moves to the end', () => {
    const known = knownRejectsOf(undefined);
    known.fresh(Array.from({ length: 300 }, (_, i) => reject(`{"n":${i}}`)));
    known.fresh([reject('{"n":0}')]); // read again: now the newest
    const next = knownRejectsOf(known.attach({}));
    expect(next.attach({})[KNOWN_REJECTS]).toHaveLength(256);
    const again = next.fresh([
      reject('{"n":0}'),
      reject('{"n":299}'),
      reject('{"n":44}'),
      reject('{"n":45}'),
    ]);
    // 0 and 45..299 are kept; 1..44 were dropped, the oldest.
    expect(again.map((r) => r.raw)).toEqual(['{"n":44}']);
  });

  it('leaves a checkpoint without rejects as it is', () => {
    const known = knownRejectsOf({ cursor: 5 });
    expect(known.fresh([])).toEqual([]);
    expect(known.attach({ cursor: 6 })).toEqual({ cursor: 6 });
  });
});

describe('a record rejected once under cron', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(() => emulator.close());

  /** One delegation in five, chosen by its hash, with an amount that is not one. */
  const isSpoilt = (txHash: string) => createHash('sha256').update(txHash).digest().readUInt8(0) % 5 === 0;
  const spoiling = (http: HttpClient): HttpClient => ({
    async send(request) {
      const answer = await http.send(request);
      if (!request.url.includes('/delegators')) return answer;
      const body = JSON.parse(answer.text) as { delegators?: { txHash: string; amountDelegated: unknown }[] };
      for (const d of body.delegators ?? []) if (isSpoilt(d.txHash)) d.amountDelegated = 'lots';
      return { ...answer, text: JSON.stringify(body) };
    },
    close: () => http.close(),
  });

  it('is written to the rejects table once, however many runs read it again', async () => {
    const w = pipelineWorkspace(smallPipeline(emulator));
    const run = async () => {
      const summary = await extractOnce(w.pipelinePath, w.dataDir, { streams: 'delegators' }, spoiling);
      expect(summary.status).toBe('ok');
      return summary.partitions.reduce((n, p) => n + p.rejects, 0);
    };
    const rejectRows = async () =>
      queryLake(
        `select count(*)::int as n, count(distinct raw)::int as distinct_raw
         from read_parquet('${w.dataDir}/lake/_rejects/**/*.parquet', hive_partitioning = true)`,
      ).then(([r]) => r as { n: number; distinct_raw: number });
    /** Files the commit log lists for the stream, its rows' and its rejects'. */
    const files = async () => (await readLakeState(w.dataDir)).get('delegators')?.files.length;

    const first = await run();
    expect(first).toBeGreaterThan(0);
    expect(await rejectRows()).toEqual({ n: first, distinct_raw: first });
    const committed = await files();

    // The same listing: its first pages hold rejected records, read again; none is written again, and a
    // run that finds nothing else new writes no file.
    expect(await run()).toBe(0);
    expect(await run()).toBe(0);
    expect(await rejectRows()).toEqual({ n: first, distinct_raw: first });
    expect(await files()).toBe(committed);

    // New delegations: those spoilt among them are written, once each.
    emulator.advance(7 * 86_400);
    const later = await run();
    expect(later).toBeGreaterThan(0);
    expect(await run()).toBe(0);
    const total = await rejectRows();
    expect(total).toEqual({ n: first + later, distinct_raw: first + later });
  }, 60_000);
});
