import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { coreWorkspace, extractOnce } from '../helpers/extract.ts';
import { runCli } from '../helpers/output.ts';

let emulator: Emulator;
let dataDir: string;
beforeAll(async () => {
  emulator = await startEmulator();
  const w = coreWorkspace(emulator);
  dataDir = w.dataDir;
  expect((await extractOnce(w.pipelinePath, dataDir)).status).toBe('ok');
  await buildWarehouse({ dataDir });
}, 120_000);
afterAll(() => emulator.close());

/** A command as a process under a given TZ: its stdout (the exit code must be 0). */
async function stdoutUnder(tz: string, args: string[]): Promise<string> {
  const { code, stdout, stderr } = await runCli(args, { TZ: tz });
  if (code !== 0) throw new Error(`exit ${code}: ${stderr}`);
  return stdout;
}

it('prints and exports times in UTC whatever TZ is: the same output under Asia/Tokyo and America/Los_Angeles', async () => {
  const query =
    "select ended_at, ended_at::varchar as text, date_trunc('day', ended_at) as day, ended_at::date as date from stg_rewards order by utxo_id limit 3";
  const outputs: Record<string, string[]> = {};
  for (const tz of ['UTC', 'Asia/Tokyo', 'America/Los_Angeles']) {
    const out = join(dataDir, `stg_rewards-${tz.replace('/', '_')}.csv`);
    outputs[tz] = [
      await stdoutUnder(tz, ['sql', query, '--data-dir', dataDir]),
      await stdoutUnder(tz, ['sql', query, '--data-dir', dataDir, '--format', 'json']),
      await stdoutUnder(tz, ['sql', query, '--data-dir', dataDir, '--format', 'csv']),
      (await stdoutUnder(tz, [
        'export',
        'stg_rewards',
        '--format',
        'csv',
        '--out',
        out,
        '--data-dir',
        dataDir,
      ])) && readFileSync(out, 'utf8'),
    ];
  }
  expect(outputs['Asia/Tokyo']).toEqual(outputs.UTC);
  expect(outputs['America/Los_Angeles']).toEqual(outputs.UTC);
  expect(outputs.UTC?.every((o) => o.length > 0)).toBe(true);
  // And UTC it is: every time ends in +00, and the day is the UTC day of the time.
  const rows = JSON.parse(outputs.UTC?.[1] ?? '[]') as Record<string, string>[];
  expect(rows).toHaveLength(3);
  for (const row of rows) {
    expect(row.ended_at).toMatch(/\+00$/);
    expect(row.day).toBe(`${row.date} 00:00:00+00`);
    expect(row.text).toBe(row.ended_at);
  }
}, 120_000);

it('status and the report show times in UTC whatever TZ is', async () => {
  /** Ages and the page's generated time move between the runs (and with them the table's padding);
   * everything else must be the same. */
  const steady = (text: string) =>
    text
      .replace(/\b\d+[dhms]( \d+[dhms])?\b/g, '<age>')
      .replace(/ {2,}/g, ' ')
      .replace(/"ageSeconds":\s*[\d.]+/g, '"ageSeconds":<age>')
      .replace(/generated [^<]*UTC/, 'generated <now>');
  const outputs: Record<string, string[]> = {};
  for (const tz of ['UTC', 'Asia/Tokyo', 'America/Los_Angeles']) {
    const out = join(dataDir, `report-${tz.replace('/', '_')}.html`);
    await stdoutUnder(tz, ['report', '--data-dir', dataDir, '--out', out]);
    outputs[tz] = [
      steady(await stdoutUnder(tz, ['status', '--data-dir', dataDir])),
      steady(await stdoutUnder(tz, ['status', '--data-dir', dataDir, '--json'])),
      steady(readFileSync(out, 'utf8')),
    ];
  }
  expect(outputs['Asia/Tokyo']).toEqual(outputs.UTC);
  expect(outputs['America/Los_Angeles']).toEqual(outputs.UTC);
  // The status table's commit times are UTC instants, written with their zone.
  expect(outputs.UTC?.[0]).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?Z/);
}, 120_000);
