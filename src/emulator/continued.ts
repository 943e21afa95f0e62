import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEmulator, type Emulator, type EmulatorOptions } from './index.ts';
import { genesisDay } from './world/genesis.ts';

/** The file in a data directory that names the UTC day its emulator's world began. */
export const GENESIS_FILE = 'emulator-genesis';

/**
 * An emulator whose world continues the one a data directory was filled from. A world begins its
 * history a fixed number of days before the day its clock starts, so an emulator started on a later
 * day would tell the same transactions at other times than the lake holds (and `avalake test`'s
 * reconciliations would fail); the first start's genesis, kept in the data directory, continues it.
 */
export async function createContinuedEmulator(
  dataDir: string,
  options: EmulatorOptions = {},
): Promise<Emulator> {
  const path = join(dataDir, GENESIS_FILE);
  const kept = existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined;
  const emulator = await createEmulator({ ...options, ...(kept ? { genesis: kept } : {}) }).catch(
    (error: Error) => {
      throw kept
        ? new Error(
            `${path} names ${kept}, the day the demo's world began, and it cannot be continued (${error.message}); delete ${dataDir} to begin a new one`,
            { cause: error },
          )
        : error;
    },
  );
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path, `${genesisDay(emulator.truth.genesis)}\n`);
  return emulator;
}
