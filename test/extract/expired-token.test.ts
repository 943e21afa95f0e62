import { afterEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { HttpClient } from '../../src/extract/http.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { duplicateRows, queryLake, streamTable } from '../helpers/lake.ts';

/**
 * A newest-first walk whose page token has expired (24 hours) starts again from the top of the listing:
 * it appends what was listed since and skips what it read before. Stopped again on the way (a quota, a
 * kill), the next run must know which stretches of the listing it has read: the newest ones of the
 * restarted pass, and the older ones of the first, with unread records between them.
 */

const HOUR = 3600;
const DAY = 24 * HOUR;
const CHAIN = '43113';

/** Answers 400 (a final error: the run stops with what it committed) once `n` pages of ERC-20 transfers went through. */
const stoppedAfter =
  (n: number) =>
  (http: HttpClient): HttpClient => {
    let seen = 0;
    return {
      send: (request) =>
        request.url.includes('transactions:listErc20') && ++seen > n
          ? Promise.resolve({
              status: 400,
              headers: {},
              text: '{"message":"stopped by the test","statusCode":400}',
            })
          : http.send(request),
      close: () => http.close(),
    };
  };

let emulator: Emulator | undefined;
afterEach(() => emulator?.close());

describe('a newest-first walk restarted after its page token expired, and stopped again', () => {
  // Days before the restart: one day lists less than a page of new transfers (the restarted first
  // page ends in the stretch read before), a week more than a page (it ends among the new ones).
  // Then the next run comes while the restart's token lives, or after it expired too.
  it.each([
    { newDays: 1, thenDays: 0 },
    { newDays: 1, thenDays: 2 },
    { newDays: 7, thenDays: 0 },
    { newDays: 7, thenDays: 2 },
  ])(
    '$newDays day(s) of new transfers, the next run $thenDays day(s) later: each transfer once',
    async ({ newDays, thenDays }) => {
      const emu = await startEmulator();
      emulator = emu;
      const whale = emu.truth.evm.whale('fuji');
      const chain = emu.truth.evm.chain(CHAIN);
      if (!chain) throw new Error(`the emulator has no chain ${CHAIN}`);
      const truth = () =>
        chain
          .listErc20(whale, {}, Math.floor(emu.clock.now()), undefined, Number.MAX_SAFE_INTEGER)
          .items.map((t) => `${t.txHash} ${t.logIndex}`)
          .sort();
      const keys = async () =>
        (
          await queryLake(
            `select distinct txHash || ' ' || logIndex as k from ${streamTable(w.dataDir, 'erc20_transfers')}`,
          )
        )
          .map((r) => String(r.k))
          .sort();
      const w = demoWorkspace(emu, (p) => {
        p.streams = ['erc20_transfers'];
        p.flush = { rows: 100 };
        p.evm = { ...(p.evm as object), chains: [CHAIN], addresses: [whale] };
      });

      // The first walk stops after its first page, committed with the token of the second.
      expect((await extractOnce(w.pipelinePath, w.dataDir, {}, stoppedAfter(1))).status).not.toBe('ok');
      const first = truth().length;
      expect(await keys()).toHaveLength(100);

      // The token has expired (a little over a day): the walk starts again from the top, and stops
      // after one page again (its third request: it reads the page it read last again, which no longer
      // lists where it stopped, and the first one's token is refused).
      emu.advance(newDays * DAY + HOUR);
      const listedSince = truth().length - first;
      if (newDays === 1) expect(listedSince).toBeLessThan(100);
      else expect(listedSince).toBeGreaterThan(100);
      expect((await extractOnce(w.pipelinePath, w.dataDir, {}, stoppedAfter(3))).status).not.toBe('ok');
      expect((await keys()).length).toBe(100 + Math.min(listedSince, 100));

      emu.advance(thenDays * DAY);
      expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
      expect(await keys()).toEqual(truth());
      expect(await duplicateRows(w.dataDir, 'erc20_transfers')).toBe(0);
    },
  );
});
