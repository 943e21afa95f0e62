import type { WorldBase } from '../base.ts';
import { type EvmChainInfo, evmChainsOf } from '../chains.ts';
import { NETWORKS, type Network } from '../networks.ts';
import { createWalletPool, type WalletPool } from './addresses.ts';
import { createEvmChain, type EvmChain } from './evm-chain.ts';
import { createIcmLedger, createIcmSlots, type IcmLedger, type IcmSlots } from './icm.ts';
import type { TimeInterval } from './intervals.ts';
import { EVM_PROFILES, type EvmProfile } from './profile.ts';
import type { ChainMetric } from './stats.ts';

export type { EvmChain } from './evm-chain.ts';
export type { IcmLedger, IcmMessageRecord, IcmSlots } from './icm.ts';
export type { ChainMetric, DayStats } from './stats.ts';

/** The metrics service recomputes this often; its points are as of the last refresh (`lastRun`). */
export const METRICS_REFRESH_SECONDS = 600;
export const metricsAsOf = (now: number): number =>
  Math.floor(now / METRICS_REFRESH_SECONDS) * METRICS_REFRESH_SECONDS;

/**
 * The EVM chains of both networks, their blocks, transactions, transfers, NFTs, ICM messages and
 * metrics: the ground truth of the EVM routes and the metrics service. Everything is computed on
 * demand from (seed, clock); per-day statistics are memoized.
 *
 * For tests: `whale(network)` is the busiest address of a network (on every chain of it; at scale
 * `large` it sends ≥ 10 million transactions on the C-Chain: `chain('43114').activity.sentCount`);
 * `chain(id).dayStats(day, now).txCount` is a day's transaction count (day 0 starts at genesis).
 */
export interface EvmWorld {
  readonly profile: EvmProfile;
  /** The EVM chains of a network (C-Chain first), or of both networks, mainnet first. */
  chains(network?: Network): EvmChain[];
  /** A chain by EVM chain id ("43114") or blockchain id (cb58); undefined if unknown. */
  chain(id: string): EvmChain | undefined;
  whale(network: Network): string;
  /** The network's ordinary wallets (the whale not included). */
  wallets(network: Network): string[];
  icm(network: Network): IcmLedger;
  /** The chains a metrics `chainId` covers: one chain, `mainnet`, `testnet` or `total`. */
  metricChains(chainId: string): EvmChain[] | undefined;
  /** A metric's value over several chains (sums; maxima for max*; a transaction-weighted avgGasPrice). */
  metric(
    chains: readonly EvmChain[],
    metric: ChainMetric,
    interval: TimeInterval,
    t: number,
    asOf: number,
  ): number;
}

export function createEvmWorld(base: WorldBase): EvmWorld {
  const profile = EVM_PROFILES[base.scale];
  const pools = new Map<Network, WalletPool>();
  const poolOf = (network: Network) => {
    let pool = pools.get(network);
    if (!pool) {
      pool = createWalletPool(base.seed, network, profile.walletCount);
      pools.set(network, pool);
    }
    return pool;
  };
  const chainsByNetwork = new Map<Network, EvmChain[]>();
  const slotsByNetwork = new Map<Network, IcmSlots>();
  const chainsOf = (network: Network): EvmChain[] => {
    let chains = chainsByNetwork.get(network);
    if (!chains) {
      const infos = evmChainsOf(base.seed, network);
      let built: EvmChain[] | undefined;
      const slots = createIcmSlots({
        seed: base.seed,
        network,
        // Messages begin once every chain of the network exists (the last L1's creation).
        genesis: base.genesis + Math.max(...infos.map((c) => c.createdAfterGenesis)),
        intervalSeconds: profile.icmIntervalSeconds,
        whaleEvery: profile.whaleEvery,
        createEvery: profile.createEvery,
        clocks: () => {
          if (!built) throw new Error(`the ${network} EVM chains were asked about ICM while being built`);
          return built.map((c) => c.core.clock);
        },
      });
      built = infos.map((info: EvmChainInfo, i) =>
        createEvmChain({
          base,
          info,
          profile,
          pool: poolOf(network),
          icmRole: (seq) => slots.roleOf(i, seq),
        }),
      );
      chains = built;
      chainsByNetwork.set(network, chains);
      slotsByNetwork.set(network, slots);
    }
    return chains;
  };
  const ledgers = new Map<Network, IcmLedger>();
  const all = () => NETWORKS.flatMap(chainsOf);

  return {
    profile,
    chains: (network) => (network ? chainsOf(network) : all()),
    chain: (id) => all().find((c) => c.info.evmChainId === id || c.info.blockchainId === id),
    whale: (network) => {
      const pool = poolOf(network);
      return pool.addressOf(pool.whaleIndex);
    },
    wallets: (network) => {
      const pool = poolOf(network);
      return Array.from({ length: pool.size }, (_, i) => pool.addressOf(i));
    },
    icm(network) {
      let ledger = ledgers.get(network);
      if (!ledger) {
        const chains = chainsOf(network);
        ledger = createIcmLedger({
          seed: base.seed,
          network,
          slots: slotsByNetwork.get(network) as IcmSlots,
          pool: poolOf(network),
          chains: chains.map((c) => c.core),
        });
        ledgers.set(network, ledger);
      }
      return ledger;
    },
    metricChains(chainId) {
      if (chainId === 'total') return all();
      if (chainId === 'mainnet') return chainsOf('mainnet');
      if (chainId === 'testnet') return chainsOf('fuji');
      const chain = all().find((c) => c.info.evmChainId === chainId);
      return chain ? [chain] : undefined;
    },
    metric(chains, metric, interval, t, asOf) {
      const values = chains.map((c) => c.stats.value(metric, interval, t, asOf));
      if (metric.startsWith('max')) return Math.max(0, ...values);
      if (metric === 'avgGasPrice') {
        const counts = chains.map((c) => c.stats.value('txCount', 'day', t, asOf));
        const total = counts.reduce((a, b) => a + b, 0);
        return total === 0 ? 0 : values.reduce((acc, v, i) => acc + v * (counts[i] as number), 0) / total;
      }
      return values.reduce((a, b) => a + b, 0);
    },
  };
}
