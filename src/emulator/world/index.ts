import type { Clock } from '../clock.ts';
import { createEvmWorld, type EvmWorld } from './evm/index.ts';
import { checkGenesis, defaultGenesis } from './genesis.ts';
import { NETWORKS, type Network } from './networks.ts';
import { createPrimaryNetwork, type PrimaryNetwork } from './primary/index.ts';
import { SCALE_PROFILES, type Scale, type ScaleProfile } from './scale.ts';

export interface WorldOptions {
  seed: number;
  scale: Scale;
  clock: Clock;
  /**
   * Unix seconds (a UTC midnight) at which the history begins; by default `historyDays` before the
   * clock's starting day. Pass an earlier world's genesis to continue that world (genesis.ts).
   */
  genesis?: number;
}

/** Everything both the HTTP surfaces and the tests' ground truth read from: one fact, one value. */
export interface World {
  readonly seed: number;
  readonly scale: Scale;
  readonly profile: ScaleProfile;
  readonly clock: Clock;
  /** Unix seconds at which the world's history begins (UTC midnight). */
  readonly genesis: number;
  /** The primary network (P-, X-Chain, C-Chain atomic side) of each network. */
  primary(network: Network): PrimaryNetwork;
  /** Every EVM chain (C-Chains and L1s of both networks), ICM messages between them, chain metrics. */
  readonly evm: EvmWorld;
}

export function createWorld(options: WorldOptions): World {
  const profile = SCALE_PROFILES[options.scale];
  const genesis = options.genesis ?? defaultGenesis(options.clock.now(), profile.historyDays);
  checkGenesis(genesis, options.clock.now());
  const base = { seed: options.seed, scale: options.scale, profile, clock: options.clock, genesis };
  const primaries = new Map<Network, PrimaryNetwork>();
  const evm = createEvmWorld(base);
  return {
    ...base,
    evm,
    primary(network) {
      let p = primaries.get(network);
      if (!p) {
        p = createPrimaryNetwork({ ...base, network }, evm);
        primaries.set(network, p);
      }
      return p;
    },
  };
}

export { NETWORKS };
