import {
  CatalogRefusedError,
  CatalogUnavailableError,
  LakeCorruptError,
  LakeMismatchError,
  LockHeldError,
  StorageUnavailableError,
} from '../load/index.ts';
import { EXIT } from './exit.js';

/**
 * A failure the lake reports in words a user can act on, printed as one line with its exit code: 75
 * while another run holds the data directory, 2 for a catalog given with a lake it does not keep or one
 * that refuses its user or names no database, 1 for
 * a lake, catalog or bucket that failed. Undefined for anything else, which stays the caller's to handle.
 */
export function lakeFailureExit(error: unknown): number | undefined {
  const code =
    error instanceof LockHeldError
      ? EXIT.locked
      : error instanceof LakeMismatchError || error instanceof CatalogRefusedError
        ? EXIT.usage
        : error instanceof LakeCorruptError ||
            error instanceof CatalogUnavailableError ||
            error instanceof StorageUnavailableError
          ? EXIT.failed
          : undefined;
  if (code !== undefined) process.stderr.write(`avalake: ${(error as Error).message}\n`);
  return code;
}
