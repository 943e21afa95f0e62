import type { CommitRecord, StreamState } from './state.ts';

/**
 * Where commit records and folded states are kept: beside the lake as files (the default, one writer
 * per data directory under its lock) or in a PostgreSQL catalog (several writers). The commit protocol
 * (commit.ts) is the same over either: stage, make one record durable, move the files in.
 */
export interface RecordStore {
  /** For messages: `files` or the catalog's redacted URL. */
  readonly name: string;
  /** Streams that have records or a state. */
  streams(): Promise<string[]>;
  /**
   * A stream's newest folded state and the records after it, in the order they apply. `tidy` (a writer)
   * removes what a crash left behind.
   */
  loadStream(stream: string, options: { tidy: boolean }): Promise<StreamLog>;
  /**
   * A fresh sequence number for the stream; undefined when the store leaves numbering to the one writer
   * (files: the log counts from its state).
   */
  allocateSeq(stream: string): Promise<number | undefined>;
  /**
   * Makes one record durable. A data commit that names a `parent` advances its partition only if the
   * partition's newest commit is still that one; otherwise nothing is written and CommitConflictError
   * is thrown (another writer advanced it).
   */
  append(record: CommitRecord): Promise<void>;
  /** Writes a stream's folded state durably, then drops the records it covers (`covered`, by seq). */
  writeState(state: StreamState, covered: readonly number[]): Promise<void>;
  /**
   * Several writers share it: a writer's view of a stream goes stale, so folding and compaction read the
   * stream again while they hold it alone.
   */
  readonly shared: boolean;
  /**
   * Of these sequence numbers (of files left in staging), those whose writer is gone (`gone`), and among
   * them those with no commit, which are fenced off here so that none can be committed later (`fenced`):
   * a writer judged gone may only have paused (a suspended VM, a long stall), and must not commit a flush
   * whose staged files are discarded. Recovery rolls forward what the state knows committed, deletes
   * what is fenced, and leaves the rest. Files: all of them, both ways (the lock holder is the only writer).
   */
  abandoned(stream: string, seqs: readonly number[]): Promise<{ gone: Set<number>; fenced: Set<number> }>;
  /**
   * Runs `body` while no writer holds the stream the other way: commits hold it shared (from the record
   * until their files are moved in), compaction and folding alone. Files: the lock already serializes.
   */
  withStream<T>(stream: string, mode: 'shared' | 'exclusive', body: () => Promise<T>): Promise<T>;
  /** A shared store: one partition's records this reader has not applied yet (another writer's commits). */
  loadPartition?(stream: string, partition: Readonly<Record<string, string>>): Promise<CommitRecord[]>;
  close(): Promise<void>;
}

export interface StreamLog {
  state: StreamState | undefined;
  records: CommitRecord[];
}

/** Two writers raced for one partition: the loser's flush is dropped, the partition's chain stays one. */
export class CommitConflictError extends Error {
  constructor(
    readonly stream: string,
    readonly partition: string,
    readonly parent: number | null,
    /** `repaired`: the newest commit is an `avalake repair` that rewound the partition to its start. */
    { repaired = false }: { repaired?: boolean } = {},
  ) {
    super(
      `commit of ${stream} ${partition} refused: its newest commit is no longer ${parent ?? 'none'} ` +
        (repaired
          ? '("avalake repair" rewound the partition to its start meanwhile); the flush was dropped and nothing ' +
            'of it is visible: the next run reads the partition again from the start'
          : '(another worker advanced it); the flush was dropped and nothing of it is visible'),
    );
    this.name = 'CommitConflictError';
  }
}

/**
 * This run was judged gone while it paused (its heartbeat older than its lease), and the flush's staged
 * files were fenced off by another worker's recovery: the flush may not commit. Nothing of it is visible,
 * and its partition's checkpoint is where it was, so its rows are fetched again.
 */
export class LeaseLostError extends CommitConflictError {
  constructor(stream: string, partition: string, seq: number) {
    super(stream, partition, null);
    this.name = 'LeaseLostError';
    this.message =
      `commit ${seq} of ${stream} ${partition} refused: this run went without a heartbeat past its lease, ` +
      'and another worker took it for gone and discarded the flush; the flush was dropped and its rows ' +
      'will be fetched again';
  }
}

// The one masker of catalog URLs, here too for the catalog's messages (catalog.ts).
export { redactCatalogUrl } from './catalog-url.ts';

/** The catalog could not be reached or set up: names it (without its password) and what to check. */
export class CatalogUnavailableError extends Error {
  constructor(name: string, cause: unknown) {
    super(
      `the catalog ${name} is not reachable or not usable (${(cause as Error).message}): check --catalog, ` +
        'AVALAKE_CATALOG or the pipeline\'s "catalog", that the server is up and that the user may create tables',
      { cause },
    );
    this.name = 'CatalogUnavailableError';
  }
}

/**
 * PostgreSQL refuses who or what the catalog URL names: its password or user (28P01, 28000), or a
 * database that does not exist (3D000). Configuration to fix, not a server to wait for: the commands
 * exit 2 with it, where a catalog that is down exits 1.
 */
const REFUSALS: Readonly<Record<string, string>> = {
  '28P01': 'check the user and its password (PGPASSWORD or ~/.pgpass)',
  '28000': 'check the user and that pg_hba.conf lets it in from this host',
  '3D000': 'check the database name, or create the database',
};

export class CatalogRefusedError extends CatalogUnavailableError {
  constructor(name: string, cause: Error & { code: string }) {
    super(name, cause);
    this.name = 'CatalogRefusedError';
    this.message =
      `the catalog ${name} refused avalake: ${cause.message}; ${REFUSALS[cause.code]}, in --catalog, ` +
      'AVALAKE_CATALOG or the pipeline\'s "catalog"';
  }

  /** The error as a refusal when PostgreSQL's code says it is one. */
  static of(error: unknown): (Error & { code: string }) | undefined {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'string' && code in REFUSALS ? (error as Error & { code: string }) : undefined;
  }
}
