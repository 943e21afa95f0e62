/** A mistake in how avalake was called: printed as one line, exit code 2, never a stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A whole number from 0 to `max`, as the flag `name` was given it (commands.js takes numbers as strings:
 * yargs would turn a typo into NaN, and "got NaN" hides it); a UsageError showing what was typed otherwise.
 */
export function wholeNumberArg(name: string, value: string | number, max: number, expected: string): number {
  const text = String(value).trim();
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isSafeInteger(n) && n <= max) return n;
  throw new UsageError(`${name}: expected ${expected}, got ${JSON.stringify(value)}`);
}
