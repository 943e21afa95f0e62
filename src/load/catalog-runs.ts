import { hostname } from 'node:os';
import type pg from 'pg';
import { type Partition, partitionId } from './layout.ts';

/** Days after its last heartbeat that a gone run's row is deleted. */
export const FORGET_RUNS_DAYS = 7;

/** What a claim found: the partition is this run's now, another live run holds it, or it is done for this run. */
export type Claim = 'claimed' | 'held' | 'done';

/**
 * A catalog's claim also says `taken-over` when the partition is this run's now but was another's, left
 * unfinished by a run that is gone: what that run staged may still wait for a recovery.
 */
export type CatalogClaim = Claim | 'taken-over';

/** A worker as the catalog knows it: alive while its heartbeat is within its lease. */
export interface WorkerStanding {
  runId: string;
  host: string;
  pid: number;
  startedAt: string;
  heartbeatAt: string;
  live: boolean;
  /** Partitions it holds and has not finished. */
  holding: number;
}

/** Every run the catalog holds (a gone one stays until another worker's recovery or its own close). */
export async function listWorkers(pool: pg.Pool): Promise<WorkerStanding[]> {
  const { rows } = await pool.query<{
    run_id: string;
    host: string;
    pid: number;
    started_at: Date;
    heartbeat_at: Date;
    live: boolean;
    holding: string;
  }>(
    `select r.run_id, r.host, r.pid, r.started_at, r.heartbeat_at,
            r.heartbeat_at >= clock_timestamp() - make_interval(secs => r.lease_seconds) as live,
            (select count(*) from avalake.leases l where l.run_id = r.run_id and l.done_at is null) as holding
     from avalake.runs r order by r.started_at, r.run_id`,
  );
  return rows.map((r) => ({
    runId: r.run_id,
    host: r.host,
    pid: r.pid,
    startedAt: r.started_at.toISOString(),
    heartbeatAt: r.heartbeat_at.toISOString(),
    live: r.live,
    holding: Number(r.holding),
  }));
}

/**
 * The catalog's writers and their work: each run registers with a heartbeat, and leases partitions.
 * A run whose heartbeat is older than the lease time is gone; its unfinished partitions may be claimed.
 */
export interface CatalogRuns {
  /** Registers this run and keeps its heartbeat going until `close`. */
  register(runId: string): Promise<void>;
  /** Takes the partition for this run if no live run holds it and it was not finished since this run began. */
  claim(stream: string, partition: Partition): Promise<CatalogClaim>;
  /**
   * `done`: finished for this wave of runs (those started before skip it); `released`: given up
   * unfinished (interrupted, a spent quota), so another live worker may take it at once.
   */
  finish(stream: string, partition: Partition, outcome: 'done' | 'released'): Promise<void>;
  /** The registered run; throws before `register`. */
  runId(): string;
  /** SQL: whether the run named by the expression `runIdSql` is alive. */
  isLive(runIdSql: string): string;
  /** Stops the heartbeat and removes the run: its unfinished partitions are free at once. */
  close(): Promise<void>;
}

/**
 * What became of a run's heartbeats, as they change: `missed` on the first that failed after one that
 * went through (with the error), `restored` on the first that went through after `missed` of them failed.
 */
export type HeartbeatReport =
  | { state: 'missed'; error: Error; leaseSeconds: number }
  | { state: 'restored'; missed: number };

export function catalogRuns(
  pool: pg.Pool,
  leaseSeconds: number,
  onHeartbeat: (report: HeartbeatReport) => void = () => {},
): CatalogRuns {
  let runId: string | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let missed = 0;
  const requireRun = () => {
    if (!runId) throw new Error('the catalog has no registered run');
    return runId;
  };
  // Judged by each run's own lease: a worker started with a short one is gone sooner, whoever asks.
  const isLive = (runIdSql: string) =>
    `exists (select 1 from avalake.runs r where r.run_id = ${runIdSql} and r.heartbeat_at >= clock_timestamp() - make_interval(secs => r.lease_seconds))`;
  return {
    runId: requireRun,
    isLive,
    async register(id) {
      runId = id;
      // A run silent for a week is long gone (its claims and seqs go with its liveness, not its row):
      // forgotten, so that a year of killed runs does not pile up in `status`.
      await pool.query(
        `delete from avalake.runs where heartbeat_at < clock_timestamp() - make_interval(days => ${FORGET_RUNS_DAYS})`,
      );
      await pool.query(
        'insert into avalake.runs (run_id, host, pid, lease_seconds) values ($1, $2, $3, $4)',
        [id, hostname(), process.pid, leaseSeconds],
      );
      // A missed heartbeat stops nothing here: past the lease, the fence refuses this run's commits. It is
      // reported, so that the refusals that follow have a cause in the log.
      heartbeat = setInterval(
        () => {
          pool.query('update avalake.runs set heartbeat_at = clock_timestamp() where run_id = $1', [id]).then(
            () => {
              if (missed > 0) onHeartbeat({ state: 'restored', missed });
              missed = 0;
            },
            (error: Error) => {
              if (missed++ === 0) onHeartbeat({ state: 'missed', error, leaseSeconds });
            },
          );
        },
        Math.max(200, (leaseSeconds * 1000) / 3),
      );
      heartbeat.unref();
    },

    async claim(stream, partition) {
      const run = requireRun();
      const id = partitionId(partition);
      // `previous` is read from the statement's snapshot: a lease another run left unfinished.
      const claimed = await pool.query<{ taken_over: boolean }>(
        `with previous as (
           select 1 from avalake.leases
           where stream = $1 and partition_id = $2 and run_id <> $3 and done_at is null
         )
         insert into avalake.leases as l (stream, partition_id, run_id, claimed_at)
         values ($1, $2, $3, clock_timestamp())
         on conflict (stream, partition_id) do update
           set run_id = excluded.run_id, claimed_at = excluded.claimed_at, done_at = null
           where l.run_id = excluded.run_id
              or (l.done_at is not null
                  and l.done_at < (select started_at from avalake.runs where run_id = excluded.run_id))
              or (l.done_at is null and not ${isLive('l.run_id')})
         returning exists (select 1 from previous) as taken_over`,
        [stream, id, run],
      );
      if (claimed.rowCount === 1) return claimed.rows[0]?.taken_over ? 'taken-over' : 'claimed';
      const { rows } = await pool.query<{ done: boolean }>(
        'select done_at is not null as done from avalake.leases where stream = $1 and partition_id = $2',
        [stream, id],
      );
      return rows[0]?.done ? 'done' : 'held';
    },

    async finish(stream, partition, outcome) {
      await pool.query(
        outcome === 'done'
          ? 'update avalake.leases set done_at = clock_timestamp() where stream = $1 and partition_id = $2 and run_id = $3'
          : 'delete from avalake.leases where stream = $1 and partition_id = $2 and run_id = $3',
        [stream, partitionId(partition), requireRun()],
      );
    },

    async close() {
      if (heartbeat) clearInterval(heartbeat);
      // Gone at once rather than after the lease time: its unfinished partitions are free to take.
      if (runId)
        await pool.query('delete from avalake.runs where run_id = $1', [runId]).catch(() => undefined);
    },
  };
}
