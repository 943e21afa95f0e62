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
 * The exit code of a failure the lake reports in words a user can act on: 75 while another run holds
 * the data directory; 2 for a catalog given with a lake it does not keep, or one refusing the URL's
 * user or database (configuration, found before anything was written); 1 for a lake, catalog or bucket
 * that failed. Undefined for anything else, which stays the caller's to handle.
 */
export function lakeFailureCode(error: unknown): number | undefined {
  if (error instanceof LockHeldError) return EXIT.locked;
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
