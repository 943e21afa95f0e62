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
    found: number | undefined,
  ) {
    const what = found === undefined ? 'is missing' : `has ${found} bytes`;
    super(
      `lake file ${path} of stream ${stream} ${what}, where the commit log records ${file.bytes} bytes ` +
        `(sha256 ${file.sha256}): restore it from a backup, or, without one, run "avalake repair" to drop it ` +
        `from the commit log and have the next run read its partitions again; until then its rows are not ` +
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
