import { expect, it } from 'vitest';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

const emulator = useEmulator();

it('flush.bytes commits a partition once that many bytes are staged or buffered, as flush.rows does for rows', async () => {
  const commitsOf = async (flush: Record<string, number>) => {
    const w = demoWorkspace(emulator, (p) => {
      p.flush = flush;
    });
    const summary = await extractOnce(w.pipelinePath, w.dataDir, { streams: 'erc20_transfers' });
    expect(summary.status).toBe('ok');
    // The partition with the most pages: the whale's transfers.
    const [busiest] = [...summary.partitions].sort((a, b) => b.requests - a.requests);
    return { commits: busiest?.commits ?? 0, requests: busiest?.requests ?? 0, rows: busiest?.rows ?? 0 };
  };
  const whole = await commitsOf({});
  const byBytes = await commitsOf({ bytes: 1 });
  expect(whole.requests).toBeGreaterThan(2);
  expect(whole.commits).toBe(1);
  // Every page passes one byte: a commit per page, the same rows.
  expect(byBytes).toEqual({ commits: whole.requests, requests: whole.requests, rows: whole.rows });
}, 60_000);
