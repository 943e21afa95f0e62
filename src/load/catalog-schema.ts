import type pg from 'pg';

/**
 * The catalog's tables, in schema `avalake` (catalog.ts says what each holds). Created on first use;
 * concurrent workers starting together serialize on one advisory lock instead of racing on the DDL.
 */
export const SCHEMA_LOCK = 0x61766c6b; // "avlk": serializes the first-time schema creation of concurrent workers

export const DDL = `
create schema if not exists avalake;
create sequence if not exists avalake.seq;
create table if not exists avalake.runs (
  run_id text primary key,
  host text not null,
  pid integer not null,
  -- How long the run may go without a heartbeat before others take it for gone: its own promise.
  lease_seconds integer not null,
  started_at timestamptz not null default clock_timestamp(),
  heartbeat_at timestamptz not null default clock_timestamp()
);
create table if not exists avalake.seqs (
  seq bigint primary key,
  stream text not null,
  run_id text not null
);
-- A seq is committed once, or fenced off once by a recovery that took its writer for gone; never both.
alter table avalake.seqs add column if not exists committed boolean not null default false;
alter table avalake.seqs add column if not exists fenced boolean not null default false;
create table if not exists avalake.commits (
  commit_id bigserial primary key,
  stream text not null,
  seq bigint not null,
  partition_id text,
  record jsonb not null,
  unique (stream, seq)
);
create index if not exists commits_by_partition on avalake.commits (stream, partition_id, commit_id);
-- The numbers a fold may delete: never committed (a flush dropped, an unchanged snapshot's), their run gone.
create index if not exists seqs_unused on avalake.seqs (stream) where not committed;
-- When the record was written, by the server's clock (writers' clocks may differ): folded records are
-- deleted by age (catalog.ts). Added to a catalog of before with the time of the upgrade, a constant
-- (kept in the table's metadata, where clock_timestamp() as the default would rewrite every row).
do $$ begin
  if not exists (select 1 from information_schema.columns
                 where table_schema = 'avalake' and table_name = 'commits' and column_name = 'written_at') then
    alter table avalake.commits add column written_at timestamptz not null default now();
    alter table avalake.commits alter column written_at set default clock_timestamp();
  end if;
end $$;
create index if not exists commits_by_age on avalake.commits (stream, written_at);
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
-- Each stream's newest row stamp (stampedAt, ms), raised by every commit's transaction: a worker
-- reads it as it claims a partition, so that its stamps follow those other workers gave the stream
-- since it opened the lake, in any partition (a record is listed in several), whatever its clock says.
create table if not exists avalake.stamps (
  stream text primary key,
  stamped_at bigint not null
);
create table if not exists avalake.allowances (
  origin text primary key,
  lim integer not null,
  remaining integer not null,
  reset_at timestamptz not null,
  window_seconds integer not null
);
-- Which lake this catalog keeps (one row): its id, also written into the lake as _lake/<id>, so that
-- the catalog opened over another lake (a mistyped --data-dir, a copy at another prefix) is refused
-- (lake-identity.ts); and where it was when first bound, for messages.
create table if not exists avalake.lake (
  one boolean primary key default true check (one),
  lake_id text not null,
  location text not null,
  bound_at timestamptz not null default clock_timestamp()
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

export async function createSchema(pool: pg.Pool): Promise<void> {
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
}
