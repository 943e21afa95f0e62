import { expect, it } from 'vitest';
import type { HttpClient } from '../../src/extract/http.ts';
import { readLakeState } from '../../src/load/index.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { extractOnce, pipelineWorkspace, smallPipeline } from '../helpers/extract.ts';
import { queryLake, streamTable } from '../helpers/lake.ts';

/**
 * A snapshot whose answer holds records that cannot be stored: one its schema refuses (checked as the
 * page is read) and one whose value does not fit its lake column (found as the row is built). Once
 * committed beside its rows, the same answer again is recorded as still true: neither its rows nor its
 * rejects are written a second time, however many runs find it unchanged.
 */

const emulator = useEmulator();

/** Validators the node listed in its last answer. */
let listed = 0;

/** The node's validators answer with two records spoilt. */
const spoilt = (http: HttpClient): HttpClient => ({
  async send(request) {
    const answer = await http.send(request);
    if (!String(request.body ?? '').includes('platform.getCurrentValidators')) return answer;
    const body = JSON.parse(answer.text) as { result: { validators: Record<string, unknown>[] } };
    listed = body.result.validators.length;
    const [, second, third] = body.result.validators;
    if (!second || !third) throw new Error('the emulator lists fewer than three validators');
    second.weight = 'lots'; // refused by the schema
    third.startTime = '9999999999999999'; // a time in seconds past what a millisecond Int64 holds
    return { ...answer, text: JSON.stringify(body) };
  },
  close: () => http.close(),
});

const rejectsIn = async (dataDir: string) =>
  queryLake(
    `select reason from read_parquet('${dataDir}/lake/_rejects/**/*.parquet', hive_partitioning = true) where stream = 'validators' order by reason`,
  );

it('an unchanged snapshot with rejects is confirmed, its rows and rejects not written again', async () => {
  const w = pipelineWorkspace(smallPipeline(emulator));
  const run = () => extractOnce(w.pipelinePath, w.dataDir, { streams: 'validators' }, spoilt);

  const first = await run();
  expect(first.status).toBe('ok');
  expect(first.partitions.map((p) => p.rejects)).toEqual([2]);
  const reasons = (await rejectsIn(w.dataDir)).map((r) => String(r.reason));
  expect(reasons).toHaveLength(2);
  expect(reasons.some((r) => r.includes('weight'))).toBe(true);
  expect(reasons.some((r) => r.includes('startTime'))).toBe(true);
  const [{ rows } = {}] = await queryLake(
    `select count(*) as rows from ${streamTable(w.dataDir, 'validators')}`,
  );
  expect(Number(rows)).toBe(listed - 2);

  for (let i = 0; i < 2; i++) {
    const again = await run();
    expect(again.status).toBe('ok');
    expect(again.partitions.map((p) => [p.rows, p.rejects])).toEqual([[0, 0]]);
  }
  expect(await rejectsIn(w.dataDir)).toHaveLength(2);
  const [{ stored } = {}] = await queryLake(
    `select count(*) as stored from ${streamTable(w.dataDir, 'validators')}`,
  );
  expect(Number(stored)).toBe(listed - 2);
  // Both later runs were recorded as confirmations of the first one's answer.
  const [partition] = (await readLakeState(w.dataDir)).get('validators')?.partitions.values() ?? [];
  expect(partition?.confirmations).toHaveLength(2);
}, 60_000);
