import { describe, expect, it } from 'vitest';
import type { HttpClient } from '../../src/extract/http.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce, requestsOf } from '../helpers/extract.ts';
import { duplicateRows, queryLake, streamTable } from '../helpers/lake.ts';

/**
 * A newest-first walk stopped mid-way keeps its page token, and the next run carries it on to the
 * head. Records listed in between sit above the top that walk started from: the run that finishes
 * the walk must read them too, or a run that ends "ok" leaves the lake behind the source until the
 * run after it (the SIGKILL test saw the whale's newest ICM messages and ERC-20 transfers missing).
 */

const HOUR = 3600;

/** Answers 400 (a final error, so the run stops with what it committed) once `n` pages of a listing went through. */
const stoppedAfter =
  (n: number, listing: string) =>
  (http: HttpClient): HttpClient => {
    let seen = 0;
    return {
      send: (request) =>
        request.url.includes(listing) && ++seen > n
          ? Promise.resolve({
              status: 400,
              headers: {},
              text: '{"message":"stopped by the test","statusCode":400}',
            })
          : http.send(request),
      close: () => http.close(),
    };
  };

const emulator = useEmulator();

interface Case {
  stream: string;
  /** The part of the listing's URL that tells its requests apart. */
  listing: string;
  edit(pipeline: Record<string, unknown>, whale: string): void;
  /** The keys the emulator lists for the whale now. */
  truth(whale: string, now: number): string[];
  /** The key as the lake spells it. */
  key: string;
}

const CASES: Case[] = [
  {
    stream: 'icm_messages',
    listing: '/v1/icm/addresses/',
    edit: (p, whale) => {
      p.icm = { addresses: [whale] };
    },
    truth: (whale, now) => {
      const icm = emulator.truth.evm.icm('fuji');
      return [...icm.indexesDesc(whale, now)].map((k) => icm.message(k, now).messageId);
    },
    key: 'messageId',
  },
  {
    stream: 'erc20_transfers',
    listing: 'transactions:listErc20',
    edit: (p, whale) => {
      p.evm = { ...(p.evm as object), chains: ['770011'], addresses: [whale] };
    },
    truth: (whale, now) => {
      const chain = emulator.truth.evm.chain('770011');
      if (!chain) throw new Error('the emulator has no chain 770011');
      return chain
        .listErc20(whale, {}, now, undefined, Number.MAX_SAFE_INTEGER)
        .items.map((t) => `${t.txHash} ${t.logIndex}`);
    },
    key: `txHash || ' ' || logIndex`,
  },
];

describe('a newest-first walk resumed from an interrupted run', () => {
  it.each(CASES)('$stream: the run that finishes it also reads what was listed since', async (c) => {
    const whale = emulator.truth.evm.whale('fuji');
    const w = demoWorkspace(emulator, (p) => {
      p.streams = [c.stream];
      p.flush = { rows: 100 };
      c.edit(p, whale);
    });
    const first = await extractOnce(w.pipelinePath, w.dataDir, {}, stoppedAfter(1, c.listing));
    expect(first.status).not.toBe('ok');
    const before = c.truth(whale, Math.floor(emulator.clock.now()));
    // The stopped run committed its first page and the token of the second.
    expect(before.length).toBeGreaterThan(200);
    const keys = () =>
      queryLake(`select distinct ${c.key} as k from ${streamTable(w.dataDir, c.stream)}`).then((rows) =>
        rows.map((r) => String(r.k)).sort(),
      );
    expect(await keys()).toHaveLength(100);

    // Half a day later (the token still lives): new records at the top of the listing.
    emulator.advance(12 * HOUR);
    const now = Math.floor(emulator.clock.now());
    const after = c.truth(whale, now);
    expect(after.length).toBeGreaterThan(before.length);
    const second = await extractOnce(w.pipelinePath, w.dataDir);
    expect(second.status).toBe('ok');
    expect(await keys()).toEqual([...after].sort());
    expect(await duplicateRows(w.dataDir, c.stream)).toBe(0);
    // The rest of the old walk, then one fresh pass down to it: the listing is read about once.
    expect(requestsOf(second)).toBeLessThanOrEqual(Math.ceil(after.length / 100) + 1);

    // The next run finds nothing new.
    const third = await extractOnce(w.pipelinePath, w.dataDir);
    expect(third.partitions.reduce((n, p) => n + p.rows, 0)).toBe(0);
  });
});
