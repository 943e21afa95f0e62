import { createClock, parseClockSpec } from '../emulator/clock.ts';
import { parseFaultSpec } from '../emulator/faults.ts';
import { createEmulator } from '../emulator/index.ts';
import { KEYS_ENV_VAR, parseKeysSpec } from '../emulator/keys.ts';
import { parseRateLimitSpec } from '../emulator/limits.ts';
import { checkGenesis, genesisDay, parseGenesis } from '../emulator/world/genesis.ts';
import { parseScale, type Scale } from '../emulator/world/scale.ts';
import { UsageError } from './errors.ts';

export interface EmulatorArgs {
  host: string;
  port: number;
  seed: number;
  scale: string;
  faults: string;
  'rate-limit': string;
  clock: string;
  genesis: string;
  keys: string;
}

/** Checks every spec before anything listens, so a typo is one clear line and exit 2. */
function validate(args: EmulatorArgs): Scale {
  try {
    parseClockSpec(args.clock);
    if (args.genesis !== '') checkGenesis(parseGenesis(args.genesis), createClock(args.clock).now());
    parseFaultSpec(args.faults);
    parseRateLimitSpec(args['rate-limit']);
    parseKeysSpec(args.keys);
    if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535)
      throw new Error(`--port: expected 0..65535, got ${args.port}`);
    if (!Number.isSafeInteger(args.seed) || args.seed < 0)
      throw new Error(`--seed: expected a non-negative integer, got ${args.seed}`);
    return parseScale(args.scale);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Serves until SIGINT or SIGTERM, then exits 0. */
export async function serveEmulator(args: EmulatorArgs): Promise<void> {
  if (args.keys === '') args.keys = process.env[KEYS_ENV_VAR] ?? '';
  const scale = validate(args);
  const emulator = await createEmulator({
    host: args.host,
    port: args.port,
    seed: args.seed,
    scale,
    faults: args.faults,
    rateLimit: args['rate-limit'],
    clock: args.clock,
    ...(args.genesis !== '' ? { genesis: args.genesis } : {}),
    keys: args.keys,
  });
  // Handlers first: whoever reads "listening on" may signal at once, and a signal that came before them
  // would kill the process instead of closing the server and exiting 0.
  const stop = () => {
    void emulator.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { seed, genesis } = emulator.truth;
  process.stdout.write(`listening on ${emulator.url}\n`);
  // The world starts on a day derived from the clock's unless pinned: say how to get this one back.
  process.stdout.write(
    `world of seed ${seed}, scale ${scale}, history from ${genesisDay(genesis)} ` +
      `(to serve this same world after a restart: --genesis ${genesisDay(genesis)})\n`,
  );
}
