import { AsyncLocalStorage } from 'node:async_hooks';
import { hostname } from 'node:os';
import pg from 'pg';
import { LakeCorruptError } from './errors.ts';
import { type Partition, partitionId } from './layout.ts';
import { CatalogUnavailableError, CommitConflictError, type RecordStore, type StreamLog } from './records.ts';
import { type CommitRecord, commitRecordSchema, isCompaction, parseState, serializeState } from './state.ts';

/**
 * A PostgreSQL catalog: the commit log, checkpoints and the work queue of a lake shared by several
 * writers (processes on one machine or several).
 *
 * - Commit records go in `commits`, one transaction each, with a compare-and-set on the partition's
 *   newest commit (`heads`): two writers can never both advance a partition, so its commits form one
 *   chain. Records are kept; a folded `states` row says up to which commit it covers.
 * - A writer is a run (`runs`) with a heartbeat. A run whose heartbeat is older than the lease time is
 *   gone: its partitions can be claimed by others and its staged files rolled forward or discarded.
 * - `leases`: which run extracts which partition. A partition finished after a run started is not
 *   extracted again by that run, so N workers started together extract each partition once.
 * - Session advisory locks per stream: commits hold one shared (from their record until their files
 *   are moved in), compaction and folding hold it alone.
 */

/** How long a run's heartbeat stays valid; `AVALAKE_LEASE_SECONDS` overrides it (tests shorten it). */
export const DEFAULT_LEASE_SECONDS = 30;

const SCHEMA_LOCK = 0x61766c6b; // "avlk": serializes the first-time schema creation of concurrent workers

const DDL = `
create schema if not exists avalake;
create sequence if not exists avalake.seq;
create table if not exists avalake.runs (
  run_id text primary key,
  host text not null,
  pid integer not null,
  started_at timestamptz not null default clock_timestamp(),
  heartbeat_at timestamptz not null default clock_timestamp()
);
create table if not exists avalake.seqs (
  seq bigint primary key,
  stream text not null,
  run_id text not null
);
create table if not exists avalake.commits (
  commit_id bigserial primary key,
  stream text not null,
  seq bigint not null,
  partition_id text,
  record jsonb not null,
  unique (stream, seq)
);
create index if not exists commits_by_partition on avalake.commits (stream, partition_id, commit_id);
create table if not exists avalake.heads (
  stream text not null,
  partition_id text not null,
  seq bigint not null,
  primary key (stream, partition_id)
);
create table if not exists avalake.states (
  stream text primary key,
  through_commit bigint not null,
  state jsonb not null
);
create table if not exists avalake.allowances (
  origin text primary key,
  lim integer not null,
  remaining integer not null,
  reset_at timestamptz not null,
  window_seconds integer not null
);
create table if not exists avalake.leases (
  stream text not null,
  partition_id text not null,
  run_id text not null,
  claimed_at timestamptz not null,
  done_at timestamptz,
  primary key (stream, partition_id)
);
`;

/**
 * A host's compute-unit allowance as every worker of the catalog spends it: one window, one count, so N
 * workers together stay under a key's limit instead of each spending what the headers said was left.
 */
export interface SharedAllowance {
  /**
   * Takes `cost` units from the current window (a new window starts full): `taken`; or how long until
   * the next window; or `unknown` before any answer told the allowance.
   */
  take(origin: string, cost: number): Promise<AllowanceTake>;
  /** What an answer's `ratelimit-*` headers said (a 429: nothing left in this window). */
  learn(origin: string, seen: AllowanceSeen): Promise<void>;
}

export type AllowanceTake =
  | { kind: 'taken' }
  | { kind: 'wait'; ms: number; limit: number; windowSeconds: number }
  | { kind: 'unknown' };

export interface AllowanceSeen {
  limit: number;
  remaining: number;
  resetSeconds: number;
  windowSeconds: number;
}

/** What a claim found: the partition is this run's now, another live run holds it, or it is done for this run. */
export type Claim = 'claimed' | 'held' | 'done';

export interface Catalog extends RecordStore, SharedAllowance {
  /** Registers this run and keeps its heartbeat going until `close`. */
  register(runId: string): Promise<void>;
  /** Takes the partition for this run if no live run holds it and it was not finished since this run began. */
  claim(stream: string, partition: Partition): Promise<Claim>;
  /**
   * `done`: finished for this wave of runs (those started before skip it); `released`: given up
   * unfinished (interrupted, a spent quota), so another live worker may take it at once.
   */
  finish(stream: string, partition: Partition, outcome: 'done' | 'released'): Promise<void>;
  /** Records of one partition that this reader has not loaded yet (another writer's commits). */
  loadPartition(stream: string, partition: Partition): Promise<CommitRecord[]>;
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`, for messages. */
export function redactCatalogUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(a catalog URL that does not parse)';
  }
}

export function isCatalogUrl(text: string): boolean {
  return /^postgres(ql)?:\/\//.test(text);
}

export async function openCatalog(url: string, options: { leaseSeconds?: number } = {}): Promise<Catalog> {
  const leaseSeconds =
    options.leaseSeconds ?? (Number(process.env.AVALAKE_LEASE_SECONDS) || DEFAULT_LEASE_SECONDS);
  const pool = new pg.Pool({ connectionString: url, max: 20, application_name: 'avalake' });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const name = redactCatalogUrl(url);
  try {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('select pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      await client.query(DDL);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new CatalogUnavailableError(name, error);
  }

  // The connection that holds a stream's advisory lock also carries the commits made under it: a
  // second connection per commit could exhaust the pool with lock holders each waiting for one.
  const locked = new AsyncLocalStorage<pg.PoolClient>();
  const connect = async () => {
    const client = locked.getStore();
    return client
      ? { client, release: () => {} }
      : pool.connect().then((c) => ({ client: c, release: () => c.release() }));
  };
  let runId: string | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  /** Per stream, the newest commit folded into what this reader loaded, and the records it has applied. */
  const loadedThrough = new Map<string, number>();
  const seen = new Map<string, Set<number>>();
  const seenOf = (stream: string) => {
    let s = seen.get(stream);
    if (!s) {
      s = new Set();
      seen.set(stream, s);
    }
    return s;
  };
  const liveRun = `exists (select 1 from avalake.runs r where r.run_id = %s and r.heartbeat_at >= clock_timestamp() - make_interval(secs => ${leaseSeconds}))`;
  const requireRun = () => {
    if (!runId) throw new Error('the catalog has no registered run');
    return runId;
  };
  const parseRecord = (json: unknown, stream: string, seq: unknown): CommitRecord => {
    const result = commitRecordSchema.safeParse(json);
    if (!result.success)
      throw new LakeCorruptError(
        `catalog record ${stream} #${seq} is malformed: ${result.error.message}`,
        name,
      );
    return result.data;
  };

  return {
    name,
    shared: true,

    async streams() {
      const { rows } = await pool.query<{ stream: string }>(
        'select stream from avalake.states union select distinct stream from avalake.commits order by 1',
      );
      return rows.map((r) => r.stream);
    },

    async loadStream(stream) {
      const { client, release } = await connect();
      try {
        // One snapshot: a fold that moves records into the state cannot fall between the two reads.
        await client.query('begin isolation level repeatable read read only');
        const stateRow = await client.query<{ through_commit: string; state: unknown }>(
          'select through_commit, state from avalake.states where stream = $1',
          [stream],
        );
        const through = Number(stateRow.rows[0]?.through_commit ?? 0);
        const { rows } = await client.query<{ commit_id: string; seq: string; record: unknown }>(
          'select commit_id, seq, record from avalake.commits where stream = $1 and commit_id > $2 order by commit_id',
          [stream, through],
        );
        await client.query('commit');
        let state: StreamLog['state'];
        if (stateRow.rows[0]) {
          const parsed = parseState(stateRow.rows[0].state);
          if ('error' in parsed)
            throw new LakeCorruptError(`catalog state of ${stream} is malformed: ${parsed.error}`, name);
          state = parsed;
        }
        const records = rows.map((r) => parseRecord(r.record, stream, r.seq));
        loadedThrough.set(stream, Math.max(through, ...rows.map((r) => Number(r.commit_id))));
        seen.set(stream, new Set(records.map((r) => r.seq)));
        return { state, records };
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        release();
      }
    },

    async loadPartition(stream, partition) {
      const { rows } = await pool.query<{ seq: string; record: unknown }>(
        'select seq, record from avalake.commits where stream = $1 and partition_id = $2 and commit_id > $3 order by commit_id',
        [stream, partitionId(partition), loadedThrough.get(stream) ?? 0],
      );
      const known = seenOf(stream);
      const fresh = rows.filter((r) => !known.has(Number(r.seq)));
      for (const r of fresh) known.add(Number(r.seq));
      return fresh.map((r) => parseRecord(r.record, stream, r.seq));
    },

    async allocateSeq(stream) {
      const { rows } = await pool.query<{ seq: string }>(
        "insert into avalake.seqs (seq, stream, run_id) values (nextval('avalake.seq'), $1, $2) returning seq",
        [stream, requireRun()],
      );
      return Number(rows[0]?.seq);
    },

    async append(record) {
      const { client, release } = await connect();
      try {
        await client.query('begin');
        const id = isCompaction(record) ? null : partitionId(record.partition);
        if (!isCompaction(record)) {
          const parent = record.parent ?? null;
          const advanced =
            parent === null
              ? await client.query(
                  'insert into avalake.heads (stream, partition_id, seq) values ($1, $2, $3) on conflict do nothing',
                  [record.stream, id, record.seq],
                )
              : await client.query(
                  'update avalake.heads set seq = $3 where stream = $1 and partition_id = $2 and seq = $4',
                  [record.stream, id, record.seq, parent],
                );
          if (advanced.rowCount !== 1) throw new CommitConflictError(record.stream, id as string, parent);
        }
        await client.query(
          'insert into avalake.commits (stream, seq, partition_id, record) values ($1, $2, $3, $4)',
          [record.stream, record.seq, id, JSON.stringify(record)],
        );
        await client.query('commit');
        seenOf(record.stream).add(record.seq);
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        release();
      }
    },

    async writeState(state) {
      // Records stay (each partition's chain can be audited); the state says up to where it covers them.
      await pool.query(
        `insert into avalake.states (stream, through_commit, state) values ($1, $2, $3)
         on conflict (stream) do update set through_commit = excluded.through_commit, state = excluded.state`,
        [state.stream, loadedThrough.get(state.stream) ?? 0, serializeState(state)],
      );
    },

    async abandoned(_stream, seqs) {
      if (seqs.length === 0) return new Set();
      const { rows } = await pool.query<{ seq: string }>(
        `select s.seq from avalake.seqs s where s.seq = any($1::bigint[]) and ${liveRun.replace('%s', 's.run_id')}`,
        [seqs],
      );
      const live = new Set(rows.map((r) => Number(r.seq)));
      return new Set(seqs.filter((seq) => !live.has(seq)));
    },

    async withStream(stream, mode, body) {
      const client = await pool.connect();
      const key = `avalake:${stream}`;
      try {
        await client.query(
          mode === 'shared'
            ? 'select pg_advisory_lock_shared(hashtextextended($1, 0))'
            : 'select pg_advisory_lock(hashtextextended($1, 0))',
          [key],
        );
        try {
          return await locked.run(client, body);
        } finally {
          await client.query(
            mode === 'shared'
              ? 'select pg_advisory_unlock_shared(hashtextextended($1, 0))'
              : 'select pg_advisory_unlock(hashtextextended($1, 0))',
            [key],
          );
        }
      } finally {
        client.release();
      }
    },

    async register(id) {
      runId = id;
      await pool.query('insert into avalake.runs (run_id, host, pid) values ($1, $2, $3)', [
        id,
        hostname(),
        process.pid,
      ]);
      heartbeat = setInterval(
        () => {
          pool
            .query('update avalake.runs set heartbeat_at = clock_timestamp() where run_id = $1', [id])
            .catch(() => undefined);
        },
        Math.max(200, (leaseSeconds * 1000) / 3),
      );
      heartbeat.unref();
    },

    async claim(stream, partition) {
      const run = requireRun();
      const id = partitionId(partition);
      const claimed = await pool.query(
        `insert into avalake.leases as l (stream, partition_id, run_id, claimed_at)
         values ($1, $2, $3, clock_timestamp())
         on conflict (stream, partition_id) do update
           set run_id = excluded.run_id, claimed_at = excluded.claimed_at, done_at = null
           where l.run_id = excluded.run_id
              or (l.done_at is not null
                  and l.done_at < (select started_at from avalake.runs where run_id = excluded.run_id))
              or (l.done_at is null and not ${liveRun.replace('%s', 'l.run_id')})
         returning 1`,
        [stream, id, run],
      );
      if (claimed.rowCount === 1) return 'claimed';
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

    async take(origin, cost) {
      // A window whose reset has passed starts again full; its next reset is a whole number of windows on.
      const taken = await pool.query(
        `update avalake.allowances a set
           remaining = (case when a.reset_at <= clock_timestamp() then a.lim else a.remaining end) - $2,
           reset_at = case when a.reset_at <= clock_timestamp()
             then a.reset_at + make_interval(secs => a.window_seconds *
               (floor(extract(epoch from clock_timestamp() - a.reset_at) / a.window_seconds) + 1))
             else a.reset_at end
         where a.origin = $1
           and (case when a.reset_at <= clock_timestamp() then a.lim else a.remaining end) >= $2
         returning 1`,
        [origin, cost],
      );
      if (taken.rowCount === 1) return { kind: 'taken' };
      const { rows } = await pool.query<{ ms: number; lim: number; window_seconds: number }>(
        `select greatest(0, extract(epoch from reset_at - clock_timestamp()) * 1000)::float8 as ms, lim, window_seconds
         from avalake.allowances where origin = $1`,
        [origin],
      );
      const row = rows[0];
      return row
        ? { kind: 'wait', ms: row.ms, limit: row.lim, windowSeconds: row.window_seconds }
        : { kind: 'unknown' };
    },

    async learn(origin, seen) {
      // Within one window the lower count wins: the shared count already holds what is in flight.
      await pool.query(
        `insert into avalake.allowances as a (origin, lim, remaining, reset_at, window_seconds)
         values ($1, $2, $3, clock_timestamp() + make_interval(secs => $4), $5)
         on conflict (origin) do update set
           lim = excluded.lim,
           window_seconds = excluded.window_seconds,
           remaining = case when abs(extract(epoch from a.reset_at - excluded.reset_at)) < 1.5
             then least(a.remaining, excluded.remaining) else excluded.remaining end,
           reset_at = excluded.reset_at`,
        [origin, seen.limit, seen.remaining, seen.resetSeconds, seen.windowSeconds],
      );
    },

    async close() {
      if (heartbeat) clearInterval(heartbeat);
      if (runId) {
        // Gone at once rather than after the lease time: its unfinished partitions are free to take.
        await pool.query('delete from avalake.runs where run_id = $1', [runId]).catch(() => undefined);
      }
      await pool.end();
    },
  };
}
