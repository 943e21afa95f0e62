import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { allowanceOf, type SharedAllowance } from './catalog-allowance.ts';
import {
  type CatalogRuns,
  catalogRuns,
  type HeartbeatReport,
  listWorkers,
  type WorkerStanding,
} from './catalog-runs.ts';
import { createSchema } from './catalog-schema.ts';
import { type Partition, partitionId } from './layout.ts';
import {
  CatalogRefusedError,
  CatalogUnavailableError,
  CommitConflictError,
  LeaseLostError,
  type RecordStore,
  redactCatalogUrl,
  type StreamLog,
} from './records.ts';
import {
  type CommitRecord,
  isCompaction,
  isDataCommit,
  parseCommitRecord,
  parseState,
  partitionOf,
  type StreamState,
  serializeState,
} from './state.ts';

/**
 * A PostgreSQL catalog: the commit log, checkpoints and the work queue of a lake shared by several
 * writers (processes on one machine or several).
 *
 * - Commit records go in `commits`, one transaction each, with a compare-and-set on the partition's
 *   newest commit (`heads`): two writers can never both advance a partition, so its commits form one
 *   chain. A folded `states` row says up to which commit it covers; the records it covers are kept
 *   for KEEP_FOLDED_DAYS (each partition's recent chain can be audited), then deleted as streams fold.
 * - A writer is a run (`runs`) with a heartbeat. A run whose heartbeat is older than the lease time is
 *   gone: its partitions can be claimed by others and its staged files rolled forward or discarded.
 * - `leases`: which run extracts which partition. A partition finished after a run started is not
 *   extracted again by that run, so N workers started together extract each partition once.
 * - Session advisory locks per stream: commits hold one shared (from their record until their files
 *   are moved in), compaction and folding hold it alone.
 */

/**
 * Days a folded commit record is kept. Nothing reads one again but an audit of the chain: a run reads
 * a stream's state and the records after it, and then another writer's newer records of a partition it
 * claims (`loadPartition`), all written after the run started. So a record goes only once it is folded,
 * this old, and older than every live run.
 */
export const KEEP_FOLDED_DAYS = 7;
/**
 * Records a fold deletes at most. A fold holds its stream alone; a backlog (a catalog from before records
 * were deleted, a week of stopped writers) goes over the next folds instead of in one long delete.
 */
export const DELETE_AT_ONCE = 20_000;
/**
 * How long a run must have been silent before a fold deletes the numbers it never committed: far past
 * any lease, so that a run whose heartbeat only lapsed can still commit them.
 */
export const UNUSED_SEQ_DAYS = 1;

/** How long a run's heartbeat stays valid; `AVALAKE_LEASE_SECONDS` overrides it (tests shorten it). */
export const DEFAULT_LEASE_SECONDS = 30;

export type { AllowanceSeen, AllowanceTake, SharedAllowance } from './catalog-allowance.ts';
export type { Claim, HeartbeatReport, WorkerStanding } from './catalog-runs.ts';

export interface Catalog
  extends RecordStore,
    SharedAllowance,
    Omit<CatalogRuns, 'runId' | 'isLive' | 'close'> {
  /** Every run the catalog knows, live or gone, with what it holds. */
  workers(): Promise<WorkerStanding[]>;
  /** The newest row stamp any worker's commits gave a stream (`stampedAt`), if known. */
  streamStamp(stream: string): Promise<number | undefined>;
  /**
   * Several records in one transaction: all of them, or none (a repair's, each rewinding a partition;
   * one conflict refuses them all).
   */
  appendAll(records: readonly CommitRecord[]): Promise<void>;
  /** Records of one partition that this reader has not loaded yet (another writer's commits). */
  loadPartition(stream: string, partition: Partition): Promise<CommitRecord[]>;
  /**
   * Takes over streams whose commit log was kept elsewhere (a local lake's files), each as its folded
   * state: in one transaction, the states, each partition's head, and the sequence past every seq they
   * used. Refuses (CatalogImportError) a stream the catalog already has, unless with that very state.
   */
  adopt(states: readonly StreamState[]): Promise<void>;
  /**
   * What `adopt` would refuse, found without taking anything: throws its CatalogImportError, or returns
   * (every stream new to the catalog, or held with that very state: an import run again after a crash).
   * An import asks before it moves anything (uploads a lake's files); `adopt` asks again as it takes them.
   */
  checkAdoption(states: readonly StreamState[]): Promise<void>;
  /** The lake this catalog keeps, once bound (lake-identity.ts). */
  lakeBinding(): Promise<LakeBinding | undefined>;
  /** Binds the catalog to this lake unless it is bound already; returns the binding that holds. */
  bindLake(binding: LakeBinding): Promise<LakeBinding>;
}

/** The lake a catalog keeps: the id marked in the lake, and where it was when bound. */
export interface LakeBinding {
  id: string;
  location: string;
}

/** A stream to adopt is already in the catalog, as something else. */
export class CatalogImportError extends Error {
  override name = 'CatalogImportError';
}

/**
 * The catalog failed after it was opened (its server stopped or restarted, the network dropped): what
 * was committed stays; a flush caught mid-commit is rolled forward or discarded when the lake is next
 * opened, and its rows are fetched again.
 */
export class CatalogLostError extends CatalogUnavailableError {
  constructor(name: string, cause: unknown) {
    super(name, cause);
    this.name = 'CatalogLostError';
    this.message =
      `lost the catalog ${name} during the run (${(cause as Error).message}): what was committed stays, ` +
      'and the next run continues from there once the server is back';
  }
}

/**
 * Whether an error is the catalog's: its server refusing (shutting down, not accepting connections) or
 * the connection failing. Not our own refusals (CommitConflictError), nor a record that does not parse.
 */
function isServerFailure(error: unknown): boolean {
  if (error instanceof CatalogUnavailableError) return false;
  if (error instanceof pg.DatabaseError) return true;
  // A socket's (ECONNRESET, ECONNREFUSED, …) or pg's own: "Connection terminated unexpectedly", "… not queryable".
  return (
    error instanceof Error &&
    ('errno' in error || /connection|terminated|queryable|timeout/i.test(error.message))
  );
}

/** The methods, each with its failures passed through `lost` (which rethrows them). */
function reportingLoss<T extends object>(methods: T, lost: (error: unknown) => never): T {
  return Object.fromEntries(
    Object.entries(methods).map(([key, value]) => [
      key,
      typeof value !== 'function'
        ? value
        : (...args: unknown[]) => {
            const result = value(...args);
            return result instanceof Promise ? result.catch(lost) : result;
          },
    ]),
  ) as T;
}

/** How long a connection to the catalog may take before the run fails naming it (pg waits for ever). */
const CONNECT_TIMEOUT_MS = 10_000;

export async function openCatalog(
  url: string,
  options: {
    leaseSeconds?: number;
    connectTimeoutMs?: number;
    /** Told when this run's heartbeats start failing, and when they go through again. */
    onHeartbeat?: (report: HeartbeatReport) => void;
  } = {},
): Promise<Catalog> {
  const leaseSeconds =
    options.leaseSeconds ?? (Number(process.env.AVALAKE_LEASE_SECONDS) || DEFAULT_LEASE_SECONDS);
  const pool = new pg.Pool({
    connectionString: url,
    max: 20,
    application_name: 'avalake',
    // A server that accepts and never answers (a half-open address, a firewall that drops) would hang a
    // cron run for ever; TCP keep-alive lets the kernel notice a peer gone without a word.
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const name = redactCatalogUrl(url);
  /** A server failure as CatalogLostError, which names the catalog; other errors as they are. */
  const lost = (error: unknown): never => {
    throw isServerFailure(error) ? new CatalogLostError(name, error) : error;
  };
  try {
    await createSchema(pool);
  } catch (error) {
    await pool.end().catch(() => undefined);
    const refusal = CatalogRefusedError.of(error);
    throw refusal ? new CatalogRefusedError(name, refusal) : new CatalogUnavailableError(name, error);
  }

  /**
   * A client out of the pool. The pool listens for the loss of idle clients only: without a listener
   * of its own, a checked-out client whose server goes away emits an 'error' that ends the process.
   * Its queries fail instead, and the client is dropped when released.
   */
  const checkOut = async () => {
    const client = await pool.connect();
    let lost: Error | undefined;
    const onError = (error: Error) => {
      lost ??= error;
    };
    client.on('error', onError);
    return {
      client,
      broken: () => lost !== undefined,
      release: () => {
        client.off('error', onError);
        client.release(lost);
      },
    };
  };
  // The connection that holds a stream's advisory lock also carries the commits made under it: a
  // second connection per commit could exhaust the pool with lock holders each waiting for one. And
  // should that connection be lost, and the lock with it, what is written under the lock fails with
  // it instead of landing unguarded over another connection.
  const locked = new AsyncLocalStorage<pg.PoolClient>();
  const connect = async () => {
    const client = locked.getStore();
    return client ? { client, release: () => {} } : checkOut();
  };
  /** One statement over `connect()`: on the stream's locked connection when there is one. */
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[]) => {
    const { client, release } = await connect();
    try {
      return await client.query<R>(text, values);
    } finally {
      release();
    }
  };
  /** `body` in one transaction over `connect()`, begun with `begin`; rolled back when it throws. */
  const transaction = async <T>(body: (client: pg.PoolClient) => Promise<T>, begin = 'begin'): Promise<T> => {
    const { client, release } = await connect();
    try {
      await client.query(begin);
      const result = await body(client);
      await client.query('commit');
      return result;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      release();
    }
  };
  const runs = catalogRuns(pool, leaseSeconds, options.onHeartbeat);
  const allowance = allowanceOf(pool);
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
  const parseRecord = (json: unknown, stream: string, seq: unknown): CommitRecord =>
    parseCommitRecord(json, `catalog record ${stream} #${seq}`, name);
  /**
   * Whether the catalog may adopt a stream as the state serialized as `json`: `new` to it, the `same`
   * state adopted already (an import run again after a crash), or refused (CatalogImportError) when
   * it holds the stream as anything else (another state, or commits of its partitions).
   */
  const adoption = async (client: pg.PoolClient, stream: string, json: string): Promise<'new' | 'same'> => {
    const held = await client.query<{ same: boolean }>(
      'select state = $2::jsonb as same from avalake.states where stream = $1',
      [stream, json],
    );
    if (held.rows[0]?.same) return 'same';
    const heads = await client.query('select 1 from avalake.heads where stream = $1 limit 1', [stream]);
    if (held.rowCount !== 0 || heads.rowCount !== 0)
      throw new CatalogImportError(
        `the catalog ${name} already holds the stream ${stream}; a catalog takes over a lake only into streams it does not have`,
      );
    return 'new';
  };

  /**
   * One record, in `client`'s transaction: its seq must not be fenced, and a record of a partition moves
   * the partition's head from its `parent` (compare-and-set), or nothing is written.
   */
  const appendIn = async (client: pg.PoolClient, record: CommitRecord) => {
    const partition = partitionOf(record);
    const id = partition ? partitionId(partition) : null;
    // The fence: a seq that another worker's recovery fenced off (its files discarded) never commits.
    // Both sides update the seq's one row, so whichever comes second sees what the first did.
    const allowed = await client.query(
      'update avalake.seqs set committed = true where seq = $1 and not fenced',
      [record.seq],
    );
    if (allowed.rowCount !== 1) throw new LeaseLostError(record.stream, id ?? 'compaction', record.seq);
    if (id !== null && !isCompaction(record)) {
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
      if (advanced.rowCount !== 1) {
        // A repair that rewound the partition is said as such: the worker did nothing wrong.
        const head = await client.query<{ kind: string | null }>(
          `select c.record->>'kind' as kind from avalake.heads h
           join avalake.commits c on c.stream = h.stream and c.seq = h.seq
           where h.stream = $1 and h.partition_id = $2`,
          [record.stream, id],
        );
        throw new CommitConflictError(record.stream, id, parent, {
          repaired: head.rows[0]?.kind === 'repair',
        });
      }
    }
    await client.query(
      'insert into avalake.commits (stream, seq, partition_id, record) values ($1, $2, $3, $4)',
      [record.stream, record.seq, id, JSON.stringify(record)],
    );
    // Last: every commit of the stream locks this one row, until its transaction ends.
    if (isDataCommit(record) && record.stampedAt !== undefined)
      await client.query(
        `insert into avalake.stamps as s (stream, stamped_at) values ($1, $2)
         on conflict (stream) do update set stamped_at = excluded.stamped_at
         where s.stamped_at < excluded.stamped_at`,
        [record.stream, record.stampedAt],
      );
  };

  const { withStream, ...methods }: Catalog = {
    name,
    shared: true,

    async streams() {
      // Every stream with a commit has a partition's head (a compaction follows data commits) or a
      // folded state: a row per partition, where the records are a row per commit of the last week.
      const { rows } = await pool.query<{ stream: string }>(
        'select stream from avalake.states union select stream from avalake.heads order by 1',
      );
      return rows.map((r) => r.stream);
    },

    async loadStream(stream) {
      // One snapshot: a fold that moves records into the state cannot fall between the two reads.
      const { stateRow, rows } = await transaction(async (client) => {
        const stateRow = await client.query<{ through_commit: string; state: unknown }>(
          'select through_commit, state from avalake.states where stream = $1',
          [stream],
        );
        const { rows } = await client.query<{ commit_id: string; seq: string; record: unknown }>(
          'select commit_id, seq, record from avalake.commits where stream = $1 and commit_id > $2 order by commit_id',
          [stream, Number(stateRow.rows[0]?.through_commit ?? 0)],
        );
        return { stateRow, rows };
      }, 'begin isolation level repeatable read read only');
      const through = Number(stateRow.rows[0]?.through_commit ?? 0);
      const state: StreamLog['state'] =
        stateRow.rows[0] && parseState(stateRow.rows[0].state, `catalog state of ${stream}`, name);
      const records = rows.map((r) => parseRecord(r.record, stream, r.seq));
      // Rows come in commit order: the last is the newest (a spread of every id could overflow the stack).
      loadedThrough.set(stream, Math.max(through, Number(rows.at(-1)?.commit_id ?? 0)));
      seen.set(stream, new Set(records.map((r) => r.seq)));
      return { state, records };
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

    async streamStamp(stream) {
      const { rows } = await pool.query<{ stamped_at: string }>(
        'select stamped_at from avalake.stamps where stream = $1',
        [stream],
      );
      return rows[0] ? Number(rows[0].stamped_at) : undefined;
    },

    async allocateSeq(stream) {
      const { rows } = await pool.query<{ seq: string }>(
        "insert into avalake.seqs (seq, stream, run_id) values (nextval('avalake.seq'), $1, $2) returning seq",
        [stream, runs.runId()],
      );
      return Number(rows[0]?.seq);
    },

    async append(record) {
      await transaction((client) => appendIn(client, record));
      seenOf(record.stream).add(record.seq);
    },

    async appendAll(records) {
      await transaction(async (client) => {
        for (const record of records) await appendIn(client, record);
      });
      for (const record of records) seenOf(record.stream).add(record.seq);
    },

    async writeState(state) {
      const through = loadedThrough.get(state.stream) ?? 0;
      await transaction(async (client) => {
        await client.query(
          `insert into avalake.states (stream, through_commit, state) values ($1, $2, $3)
         on conflict (stream) do update set through_commit = excluded.through_commit, state = excluded.state`,
          [state.stream, through, serializeState(state)],
        );
        // Without it the table grows by every commit of every run (~8M records a year at 225 partitions).
        // Their seqs' rows go with them: a seq is fenced or committed once, long before.
        await client.query(
          `with gone as (
           delete from avalake.commits where commit_id in (
             select commit_id from avalake.commits
             where stream = $1 and commit_id <= $2
               -- One bound (now(), not the volatile clock), so the index by age finds the rows.
               and written_at < least(now() - make_interval(days => $3), coalesce(
                 (select min(live.started_at) from avalake.runs live where ${runs.isLive('live.run_id')}), 'infinity'))
             limit $4)
           returning seq
         )
         delete from avalake.seqs where seq in (select seq from gone)`,
          [state.stream, through, KEEP_FOLDED_DAYS, DELETE_AT_ONCE],
        );
        // A number never committed (a flush dropped: every unchanged snapshot's, every run) can no longer
        // commit once fenced, or once its run has been silent for a day: far past any lease, so a run
        // whose heartbeat only lapsed (a catalog failover, a stalled event loop) keeps the number it
        // will still commit. Without its row the fence refuses it, and a recovery that finds its staged
        // files takes them for a gone run's (catalog.abandoned). Without this, ~80 rows a quiet run.
        await client.query(
          `delete from avalake.seqs where seq in (
             select s.seq from avalake.seqs s
             where s.stream = $1 and not s.committed and (s.fenced or not exists (
               select 1 from avalake.runs r
               where r.run_id = s.run_id and r.heartbeat_at >= clock_timestamp() - make_interval(days => $3)))
             limit $2)`,
          [state.stream, DELETE_AT_ONCE, UNUSED_SEQ_DAYS],
        );
      });
    },

    async abandoned(_stream, seqs) {
      if (seqs.length === 0) return { gone: new Set(), fenced: new Set() };
      const fencing = await query<{ seq: string }>(
        `update avalake.seqs s set fenced = true
         where s.seq = any($1::bigint[]) and not s.committed and not ${runs.isLive('s.run_id')}
         returning s.seq`,
        [seqs],
      );
      const { rows } = await query<{ seq: string; live: boolean }>(
        `select s.seq, ${runs.isLive('s.run_id')} as live from avalake.seqs s where s.seq = any($1::bigint[])`,
        [seqs],
      );
      const live = new Set(rows.filter((r) => r.live).map((r) => Number(r.seq)));
      const known = new Set(rows.map((r) => Number(r.seq)));
      // A number without its row can never commit (the fence needs the row): a fold deleted it, unused
      // with its run gone, or committed with its record folded away long ago (its file, if still live,
      // is in the state). As fenced: its staged files go, unless the state names them.
      const fenced = new Set([
        ...fencing.rows.map((r) => Number(r.seq)),
        ...seqs.filter((seq) => !known.has(seq)),
      ]);
      // Fenced ones stay gone even if their writer's heartbeat came back meanwhile.
      return { gone: new Set(seqs.filter((seq) => fenced.has(seq) || !live.has(seq))), fenced };
    },

    async withStream(stream, mode, body) {
      // Only the lock's own failures are the catalog's here; the body's (an S3 copy's ECONNRESET) are its own.
      const { client, release, broken } = await checkOut().catch(lost);
      const key = `avalake:${stream}`;
      try {
        await client
          .query(
            mode === 'shared'
              ? 'select pg_advisory_lock_shared(hashtextextended($1, 0))'
              : 'select pg_advisory_lock(hashtextextended($1, 0))',
            [key],
          )
          .catch(lost);
        try {
          return await locked.run(client, body);
        } finally {
          // A lost connection took its session's locks with it: then there is nothing to unlock.
          await client
            .query(
              mode === 'shared'
                ? 'select pg_advisory_unlock_shared(hashtextextended($1, 0))'
                : 'select pg_advisory_unlock(hashtextextended($1, 0))',
              [key],
            )
            .catch((error: unknown) => broken() || lost(error));
        }
      } finally {
        release();
      }
    },

    async adopt(states) {
      await transaction(async (client) => {
        // Alone with the catalog's seqs and heads while it takes the streams over.
        await client.query('lock table avalake.heads, avalake.states in exclusive mode');
        for (const state of states) {
          const json = serializeState(state);
          // The same state: adopted already (an import run again after a crash).
          if ((await adoption(client, state.stream, json)) === 'same') continue;
          await client.query(
            `insert into avalake.states (stream, through_commit, state)
           values ($1, (select coalesce(max(commit_id), 0) from avalake.commits), $2)`,
            [state.stream, json],
          );
          // Every partition's head in one statement: a lake of address partitions has thousands.
          const partitions = [...state.partitions.values()];
          await client.query(
            `insert into avalake.heads (stream, partition_id, seq)
           select $1, id, seq from unnest($2::text[], $3::bigint[]) as p(id, seq)`,
            [state.stream, partitions.map((p) => partitionId(p.partition)), partitions.map((p) => p.seq)],
          );
        }
        // Every seq the catalog hands out from now on comes after those the lake used.
        const next = Math.max(1, ...states.map((s) => s.nextSeq));
        await client.query(
          "select setval('avalake.seq', greatest((select last_value from avalake.seq), $1::bigint))",
          [next - 1],
        );
      });
    },

    async checkAdoption(states) {
      // One snapshot for every stream, as adopt sees them under its lock; nothing written.
      await transaction(async (client) => {
        for (const state of states) await adoption(client, state.stream, serializeState(state));
      }, 'begin isolation level repeatable read read only');
    },

    async lakeBinding() {
      const { rows } = await pool.query<{ lake_id: string; location: string }>(
        'select lake_id, location from avalake.lake',
      );
      const row = rows[0];
      return row && { id: row.lake_id, location: row.location };
    },

    async bindLake(binding) {
      // Workers starting together on a new lake each offer an id: the first one in is the lake's.
      await pool.query(
        'insert into avalake.lake (lake_id, location) values ($1, $2) on conflict do nothing',
        [binding.id, binding.location],
      );
      return (await methods.lakeBinding()) ?? binding;
    },

    ...runs,
    workers: () => listWorkers(pool),
    ...allowance,

    async close() {
      await runs.close();
      await pool.end();
    },
  };
  return { ...reportingLoss(methods, lost), withStream };
}
