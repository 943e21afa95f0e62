import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatStatus, readStatus } from '../../src/cli/status.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { queryLake, streamTable } from '../helpers/lake.ts';

/**
 * The machine's clock ran six hours ahead (a VM resumed, a bad RTC) and NTP steps it back between two
 * cron runs. The lake's times order a record's versions and a partition's snapshots: the versions and
 * snapshots read after the step are still the newest, in the raw lake and in a warehouse rebuilt from it.
 */

const HOURS_AHEAD = 6 * 3600_000;

const emulator = useEmulator();
afterEach(() => {
  vi.useRealTimers();
});

/** Two runs of `stream`: the first with the clock ahead, the second (a day of the world later) after the step back. */
async function runsAcrossTheStep(stream: string) {
  const workspace = demoWorkspace(emulator, (p) => {
    p.streams = [stream];
  });
  const now = Date.now();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(now + HOURS_AHEAD);
  const first = await extractOnce(workspace.pipelinePath, workspace.dataDir);
  emulator.advance(86_400);
  vi.setSystemTime(now + 60_000);
  const second = await extractOnce(workspace.pipelinePath, workspace.dataDir);
  vi.useRealTimers();
  expect([first.status, second.status]).toEqual(['ok', 'ok']);
  return { workspace, first, second };
}

describe('after the clock steps back', () => {
  it('a record read again is newer than its version read before the step, in the lake and a rebuilt warehouse', async () => {
    const { workspace, first, second } = await runsAcrossTheStep('delegators');
    const lake = streamTable(workspace.dataDir, 'delegators');
    const [times] = await queryLake(`
      select max(epoch_ms(_extracted_at)) filter (where _run_id = '${first.runId}') as first,
             min(epoch_ms(_extracted_at)) filter (where _run_id = '${second.runId}') as second
      from ${lake}`);
    expect(Number(times?.second)).toBeGreaterThan(Number(times?.first));

    // Delegations whose status moved in the second run: its version is the one staging keeps.
    const moved = await queryLake(`
      select txHash, delegationStatus from ${lake}
      where _run_id = '${second.runId}' and txHash in (select txHash from ${lake} where _run_id = '${first.runId}')`);
    expect(moved.length).toBeGreaterThan(0);
    await buildWarehouse({ dataDir: workspace.dataDir, fromScratch: true });
    const kept = new Map(
      (
        await withDuckDB(`${workspace.dataDir}/warehouse.duckdb`, (c) =>
          queryRows(c, 'select tx_hash, delegation_status from stg_delegators'),
        )
      ).map((r) => [r.tx_hash, r.delegation_status]),
    );
    for (const { txHash, delegationStatus } of moved)
      expect(kept.get(txHash), String(txHash)).toBe(delegationStatus);

    // status says the rows are stamped ahead of the clock (the commits are not: they say when).
    const now = Date.now() + 120_000;
    const report = await readStatus(workspace.dataDir, now);
    for (const p of report.partitions) {
      expect(p.aheadSeconds).toBeUndefined();
      expect(p.stampedAheadSeconds).toBeGreaterThan(5 * 3600);
    }
    expect(formatStatus(report)).toMatch(
      new RegExp(
        `warning: ${report.partitions.length} partitions' rows are stamped up to 5h \\d+m after this host's clock`,
      ),
    );
  });

  it('a snapshot read after the step is the newest snapshot', async () => {
    const { workspace, first, second } = await runsAcrossTheStep('validators');
    const lake = streamTable(workspace.dataDir, 'validators');
    // The validator set changed in a day: the second run stored a snapshot of its own.
    const newest = await queryLake(`
      select _partition, arg_max(_run_id, _snapshot_at) as run, count(distinct _snapshot_at)::int as snapshots
      from ${lake} group by _partition`);
    expect(newest.length).toBeGreaterThan(0);
    for (const partition of newest) {
      expect(partition.snapshots).toBe(2);
      expect(partition.run).toBe(second.runId);
    }
    expect(second.runId).not.toBe(first.runId);
  });
});
