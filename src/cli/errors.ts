/** A mistake in how avalake was called: printed as one line, exit code 2, never a stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}
