import { describe, expect, it } from 'vitest';
import type { HttpClient } from '../../src/extract/http.ts';
import { partitionId, readLakeState } from '../../src/load/index.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce, requestsOf } from '../helpers/extract.ts';
import { duplicateRows, queryLake, streamTable } from '../helpers/lake.ts';

/**
 * Under cron, the newest record a newest-first walk committed (its head) can stop being listed: the
 * indexer re-indexed the address, or a record was delisted. The walk still knows where it stopped, by
 * the records listed just below the head, and reads and appends only what is new.
 */

const emulator = useEmulator();

/** The HTTP client, with the UTXO whose id is `utxoId` left out of every UTXO listing. */
const hiding =
  (utxoId: string) =>
  (http: HttpClient): HttpClient => ({
    async send(request) {
      const answer = await http.send(request);
      if (answer.status !== 200 || !request.url.includes('/utxos')) return answer;
      const body = JSON.parse(answer.text) as { utxos: { utxoId: string }[] };
      body.utxos = body.utxos.filter((u) => u.utxoId !== utxoId);
      return { ...answer, text: JSON.stringify(body) };
    },
    close: () => http.close(),
  });

describe('a newest-first walk whose head is no longer listed', () => {
  it('appends only what is new: the same rows as a run that still saw the head', async () => {
    // Two lakes of the same UTXOs, from the whole history (no start): one sees every record, the
    // other, from its second run on, not the newest UTXO its first run committed.
    const seesAll = demoWorkspace(emulator, (p) => {
      p.streams = ['utxos'];
      delete p.start;
    });
    const missesHead = demoWorkspace(emulator, (p) => {
      p.streams = ['utxos'];
      delete p.start;
    });
    const first = await Promise.all([
      extractOnce(seesAll.pipelinePath, seesAll.dataDir),
      extractOnce(missesHead.pipelinePath, missesHead.dataDir),
    ]);
    expect(first.map((s) => s.status)).toEqual(['ok', 'ok']);
    const partitions = [
      ...((await readLakeState(missesHead.dataDir)).get('utxos')?.partitions.values() ?? []),
    ];
    // The partition with the longest history, where re-reading it all would show most.
    const [longest] = partitions.sort((a, b) => b.rows - a.rows);
    const head = JSON.parse(String(longest?.checkpoint?.head)) as string[];
    expect(longest?.rows).toBeGreaterThan(100);
    const open = Object.keys(longest?.checkpoint?.open ?? {});
    expect(open).toContain(longest?.checkpoint?.head);

    const rowsOf = (s: (typeof first)[0]) => s.partitions.reduce((n, p) => n + p.rows, 0);
    const headPartition = partitionId(longest?.partition ?? {});
    const rowsOfHeadPartition = (s: (typeof first)[0]) =>
      s.partitions.find((p) => partitionId(p.partition) === headPartition)?.rows;
    const versionsOfHead = async () =>
      (
        await queryLake(
          `select count(*)::int as n from ${streamTable(seesAll.dataDir, 'utxos')} where utxoId = '${head[0]}'`,
        )
      )[0]?.n as number;
    for (const run of [2, 3]) {
      emulator.advance(3 * 86_400);
      const headVersions = await versionsOfHead();
      const all = await extractOnce(seesAll.pipelinePath, seesAll.dataDir);
      const missed = await extractOnce(
        missesHead.pipelinePath,
        missesHead.dataDir,
        {},
        hiding(head[0] as string),
      );
      expect(missed.status).toBe('ok');
      // Three days brought new UTXOs above the head, and spent some.
      expect(rowsOfHeadPartition(all)).toBeGreaterThan(0);
      // What the other run appended, less a new version of the head (a UTXO spent since).
      expect(rowsOf(missed), `run ${run}`).toBe(rowsOf(all) - ((await versionsOfHead()) - headVersions));
      // The head was still open (unspent): the second run reads down the partition once looking for
      // it, as for any open record no longer listed, and forgets it. The third reads what the other does.
      if (run === 3) expect(requestsOf(missed)).toBe(requestsOf(all));
    }
    expect(await duplicateRows(missesHead.dataDir, 'utxos')).toBe(0);
  });
});
