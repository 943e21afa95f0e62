import type { CommandModule } from 'yargs';
import { parseClockSpec } from '../emulator/clock.ts';
import { parseFaultSpec } from '../emulator/faults.ts';
import { createEmulator } from '../emulator/index.ts';
import { KEYS_ENV_VAR, parseKeysSpec } from '../emulator/keys.ts';
import { parseRateLimitSpec } from '../emulator/limits.ts';
import { parseScale, type Scale } from '../emulator/world/scale.ts';
import { UsageError } from './errors.ts';

interface EmulatorArgs {
  host: string;
  port: number;
  seed: number;
  scale: string;
  faults: string;
  'rate-limit': string;
  clock: string;
  keys: string;
}

/** Checks every spec before anything listens, so a typo is one clear line and exit 2. */
function validate(args: EmulatorArgs): Scale {
  try {
    parseClockSpec(args.clock);
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

export const emulatorCommand: CommandModule<object, EmulatorArgs> = {
  command: 'emulator',
  describe: 'Serve the Data API, Metrics API and P-Chain RPC locally from one port',
  builder: (y) =>
    y
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
      .option('port', { type: 'number', default: 0, describe: 'Port; 0 picks any free one' })
      .option('seed', {
        type: 'number',
        default: 1,
        describe: 'World seed: the same seed gives the same world',
      })
      .option('scale', { type: 'string', default: 'small', describe: 'World size: small, medium or large' })
      .option('faults', {
        type: 'string',
        default: '',
        describe: 'Injected faults, e.g. "429=0.1,500=0.02,reset=0.01,truncate=0.01,slow=0.02:3000"',
      })
      .option('rate-limit', {
        type: 'string',
        default: 'on',
        describe: 'on (published CU allowances), off, or e.g. "minute=1,day=60,scale=0.1"',
      })
      .option('clock', {
        type: 'string',
        default: 'real',
        describe: 'real, fixed:<unix seconds> or speed:<factor>',
      })
      .option('keys', {
        type: 'string',
        default: '',
        describe: `Known API keys, e.g. "KEY:pro,KEY2:free:deny=/v1/signatureAggregator" (or set ${KEYS_ENV_VAR}, kept off the command line)`,
      }),
  handler: async (args) => {
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
      keys: args.keys,
    });
    process.stdout.write(`listening on ${emulator.url}\n`);
    const stop = () => {
      void emulator.close().then(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  },
};
