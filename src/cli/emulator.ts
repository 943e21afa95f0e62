import { createClock, parseClockSpec } from '../emulator/clock.ts';
import { parseFaultSpec } from '../emulator/faults.ts';
import { createEmulator } from '../emulator/index.ts';
import { KEYS_ENV_VAR, parseKeysSpec } from '../emulator/keys.ts';
import { parseRateLimitSpec } from '../emulator/limits.ts';
import { checkGenesis, genesisDay, parseGenesis } from '../emulator/world/genesis.ts';
import { parseScale, type Scale } from '../emulator/world/scale.ts';
import { UsageError, wholeNumberArg } from './errors.ts';

export interface EmulatorArgs {
  host: string;
  /** Numbers as typed (yargs would make a typo NaN): validate() reads them. */
  port: string;
  seed: string;
  scale: string;
  faults: string;
  'rate-limit': string;
  clock: string;
  genesis: string;
  keys: string;
}

/** Checks every spec before anything listens, so a typo is one clear line and exit 2. */
function validate(args: EmulatorArgs): { scale: Scale; port: number; seed: number } {
  try {
    parseClockSpec(args.clock);
    if (args.genesis !== '') checkGenesis(parseGenesis(args.genesis), createClock(args.clock).now());
    parseFaultSpec(args.faults);
    parseRateLimitSpec(args['rate-limit']);
    parseKeysSpec(args.keys);
    const port = wholeNumberArg('--port', args.port, 65535, '0..65535 (0 picks a free one)');
    const seed = wholeNumberArg('--seed', args.seed, Number.MAX_SAFE_INTEGER, 'a non-negative integer');
    return { scale: parseScale(args.scale), port, seed };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Why the server could not listen, as a usage mistake naming the flag to change, or undefined. */
function listenProblem(args: EmulatorArgs, error: NodeJS.ErrnoException): string | undefined {
  switch (error.code) {
    case 'EADDRINUSE':
      return `--port ${args.port} is in use on ${args.host}; choose another or --port 0 for any free one`;
    case 'EACCES':
      return `--port ${args.port} needs privileges on this machine; choose one above 1023 or --port 0`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `--host ${args.host}: no such host; use an address of this machine such as 127.0.0.1`;
    case 'EADDRNOTAVAIL':
      return `--host ${args.host} is not an address of this machine; use one such as 127.0.0.1 or 0.0.0.0`;
    default:
      return undefined;
  }
}

/** Serves until SIGINT or SIGTERM, then exits 0. */
export async function serveEmulator(args: EmulatorArgs): Promise<void> {
  if (args.keys === '') args.keys = process.env[KEYS_ENV_VAR] ?? '';
  const { scale, port, seed } = validate(args);
  const emulator = await createEmulator({
    host: args.host,
    port,
    seed,
    scale,
    faults: args.faults,
    rateLimit: args['rate-limit'],
    clock: args.clock,
    ...(args.genesis !== '' ? { genesis: args.genesis } : {}),
    keys: args.keys,
  }).catch((error: NodeJS.ErrnoException) => {
    const problem = listenProblem(args, error);
    throw problem ? new UsageError(problem, { cause: error }) : error;
  });
  // Handlers first: whoever reads "listening on" may signal at once, and a signal that came before them
  // would kill the process instead of closing the server and exiting 0.
  const stop = () => {
    void emulator.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { genesis } = emulator.truth;
  process.stdout.write(`listening on ${emulator.url}\n`);
  // The world starts on a day derived from the clock's unless pinned: say how to get this one back.
  process.stdout.write(
    `world of seed ${seed}, scale ${scale}, history from ${genesisDay(genesis)} ` +
      `(to serve this same world after a restart: --genesis ${genesisDay(genesis)})\n`,
  );
}
