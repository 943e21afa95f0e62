/** A record value that does not fit its column: the record goes to rejects, the batch stays consistent. */
export class RecordTypeError extends Error {
  override name = 'RecordTypeError';
  constructor(
    readonly column: string,
    readonly value: unknown,
    reason: string,
  ) {
    super(`column ${column}: ${reason} (got ${describe(value)})`);
  }
}

/** The lake on disk contradicts its commit log: never repaired silently, since data would be lost. */
export class LakeCorruptError extends Error {
  override name = 'LakeCorruptError';
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What decides how a damaged lake file can be put right: where the commit log is, and the files. */
export interface LakeKind {
  /** The commit log is in a PostgreSQL catalog. */
  catalog: boolean;
  /** The files are in a bucket (object storage). */
  bucket: boolean;
}

/**
 * What to do about a committed file missing or cut short, said alike by status, compaction, recovery and
 * a build: a copy puts its rows back (a bucket's builds keep one in their mirror); without one,
 * `avalake repair` drops it and rewinds its partitions (repair.ts), and the next run reads them again.
 */
export function damagedFileRemedy({ catalog, bucket }: LakeKind): string {
  const mirror =
    catalog && bucket
      ? ' or from the mirror of a host that built from the bucket (mirror/<bucket>/<prefix>/lake/ under its --local-dir)'
      : '';
  return `restore it from a backup${mirror}, or, without one, run "avalake repair" to drop it and have the next run read its partitions again`;
}

/**
 * A file the commit log names that the storage lacks, or holds at another size: deleted or cut short by
 * hand, or a restore gone wrong. Its rows are not in the lake, and nothing rewrites them: said once, with
 * what the log knows of the file, so that it can be restored (or dropped by `avalake repair`, repair.ts).
 */
export class LakeFileDamagedError extends LakeCorruptError {
  override name = 'LakeFileDamagedError';
  constructor(
    readonly stream: string,
    path: string,
    file: { bytes: number; sha256: string },
    /** Its size found in place; undefined when it is missing. */
    readonly found: number | undefined,
    lake: LakeKind,
  ) {
    const what = found === undefined ? 'is missing' : `has ${found} bytes`;
    super(
      `lake file ${path} of stream ${stream} ${what}, where the commit log records ${file.bytes} bytes ` +
        `(sha256 ${file.sha256}): ${damagedFileRemedy(lake)}; until then its rows are not ` +
        `in the lake, and a build from scratch and the stream's compaction stop on it`,
      path,
    );
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  const text = typeof value === 'bigint' ? `${value}n` : JSON.stringify(value);
  return text && text.length > 80 ? `${text.slice(0, 77)}...` : String(text);
}
