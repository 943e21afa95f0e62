import {
  CatalogRefusedError,
  CatalogUnavailableError,
  LakeCorruptError,
  LakeMismatchError,
  LockHeldError,
  LockLostError,
  StorageUnavailableError,
} from '../load/index.ts';
import { unwritable } from './data-dir.ts';
import { EXIT } from './exit.js';

/**
 * The exit code of a failure the lake reports in words a user can act on: 75 while another run holds
 * the data directory, or took it over from this one; 2 for a catalog given with a lake it does not keep, or one refusing the URL's
 * user or database (configuration, found before anything was written); 1 for a lake, catalog or bucket
 * that failed. Undefined for anything else, which stays the caller's to handle.
 */
export function lakeFailureCode(error: unknown): number | undefined {
  if (error instanceof LockHeldError || error instanceof LockLostError) return EXIT.locked;
  if (error instanceof LakeMismatchError || error instanceof CatalogRefusedError) return EXIT.usage;
  if (
    error instanceof LakeCorruptError ||
    error instanceof CatalogUnavailableError ||
    error instanceof StorageUnavailableError
  )
    return EXIT.failed;
  return undefined;
}

/** lakeFailureCode, with the failure printed as one line. */
export function lakeFailureExit(error: unknown): number | undefined {
  const code = lakeFailureCode(error);
  if (code !== undefined) process.stderr.write(`avalake: ${(error as Error).message}\n`);
  return code;
}

/**
 * A lake command's failure that has words for the user (compact, repair): lakeFailureExit's, or a data
 * directory it may not write in (exit 2), printed as one line; undefined for anything else.
 */
export function lakeCommandExit(error: unknown, dataDir: string): number | undefined {
  const failed = lakeFailureExit(error);
  if (failed !== undefined) return failed;
  const refused = unwritable('--data-dir', dataDir, error);
  if (!refused) return undefined;
  process.stderr.write(`avalake: ${refused}\n`);
  return EXIT.usage;
}
