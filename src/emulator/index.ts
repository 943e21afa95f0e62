import type { AddressInfo } from 'node:net';
import { type Clock, createClock } from './clock.ts';
import { createFaultInjector, parseFaultSpec } from './faults.ts';
import { createPageTokens } from './http/paging.ts';
import { createHttpServer, listenOn } from './http/server.ts';
import { type ApiKey, parseKeysSpec } from './keys.ts';
import { createRateLimiter, parseRateLimitSpec } from './limits.ts';
import { allRoutes } from './routes/index.ts';
import { parseGenesis } from './world/genesis.ts';
import { createWorld, type World } from './world/index.ts';
import type { Scale } from './world/scale.ts';

export interface EmulatorOptions {
  host?: string;
  /** 0 (default) picks any free port. */
  port?: number;
  seed?: number;
  scale?: Scale;
  /** e.g. "429=0.1,500=0.02,reset=0.01,truncate=0.01,slow=0.02:3000"; default none. */
  faults?: string;
  /** "on" (default: the published allowances), "off", or e.g. "minute=1,day=60,scale=0.1". */
  rateLimit?: string;
  /** "real" (default), "fixed:<unix seconds>" or "speed:<factor>". */
  clock?: string;
  /**
   * The UTC day the world's history begins ("YYYY-MM-DD" or Unix seconds at a midnight); by default the
   * scale's history before the clock's day. An earlier start's `truth.genesis` continues its world.
   */
  genesis?: string | number;
  /** API keys the data service knows, e.g. "k1:pro,k2:free:deny=/v1/signatureAggregator". */
  keys?: string | ApiKey[];
  /**
   * The rate limiter's clock, Unix seconds; by default the real one. In-process only: a test that steps
   * the quota's days itself is not at the mercy of how long a run takes on a busy machine.
   */
  rateLimitClock?: () => number;
}

export interface Emulator {
  /** Base URL of all three surfaces, e.g. http://127.0.0.1:41234 (data, metrics and node RPC alike). */
  readonly url: string;
  readonly clock: Clock;
  /** Moves the world forward by `seconds` of emulator time. */
  advance(seconds: number): void;
  /** The ground truth: the same world the HTTP surfaces answer from. */
  readonly truth: World;
  /** Requests answered so far, by route path (for tests that count requests). */
  readonly requests: { total: number; byStatus: Map<number, number> };
  close(): Promise<void>;
}

export const DEFAULT_SEED = 1;

/** Starts the emulator in-process; the CLI `avalake emulator` is a thin wrapper around this. */
export async function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const seed = options.seed ?? DEFAULT_SEED;
  const clock = createClock(options.clock ?? 'real');
  const world = createWorld({
    seed,
    scale: options.scale ?? 'small',
    clock,
    ...(options.genesis !== undefined ? { genesis: parseGenesis(options.genesis) } : {}),
  });
  const keys = typeof options.keys === 'string' ? parseKeysSpec(options.keys) : (options.keys ?? []);
  const faults = createFaultInjector(seed, parseFaultSpec(options.faults ?? ''));
  const requests = { total: 0, byStatus: new Map<number, number>() };
  const server = createHttpServer({
    routes: allRoutes,
    world,
    clock,
    tokens: createPageTokens(seed, () => clock.now()),
    limiter: createRateLimiter(parseRateLimitSpec(options.rateLimit ?? 'on'), options.rateLimitClock),
    keys,
    decideFault: (key) => faults.decide(key),
    onRequest: ({ status }) => {
      requests.total++;
      requests.byStatus.set(status, (requests.byStatus.get(status) ?? 0) + 1);
    },
  });
  const address: AddressInfo = await listenOn(server, options.host ?? '127.0.0.1', options.port ?? 0);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    clock,
    advance: (seconds) => clock.advance(seconds),
    truth: world,
    requests,
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
