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

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  const text = typeof value === 'bigint' ? `${value}n` : JSON.stringify(value);
  return text && text.length > 80 ? `${text.slice(0, 77)}...` : String(text);
}
