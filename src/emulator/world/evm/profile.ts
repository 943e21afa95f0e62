import type { ValidatorSetKind } from '../chains.ts';
import type { Scale } from '../scale.ts';

/**
 * How busy the EVM side is per scale. `small` keeps every per-address listing to hundreds or low
 * thousands of records (tests walk them in seconds); `large` gives the whale tens of millions.
 */
export interface EvmProfile {
  /** Wallets per network (prime: the per-group permutations need it). The whale comes on top. */
  walletCount: number;
  /** The whale sends every `whaleEvery`-th transaction and receives the one half-way between. */
  whaleEvery: number;
  /** Every `createEvery`-th transaction (the last of each run) deploys a contract. */
  createEvery: number;
  /** Mean transactions per day by the chain's kind; each day's rate varies ±25 % around it. */
  txPerDay: Record<ValidatorSetKind, number>;
  /** Mean seconds between ICM messages of a network. */
  icmIntervalSeconds: number;
  /** NFTs minted per collection over the history (more follow as the clock advances). */
  nftsPerCollection: number;
}

export const EVM_PROFILES: Record<Scale, EvmProfile> = {
  small: {
    walletCount: 53,
    whaleEvery: 16,
    createEvery: 97,
    txPerDay: { primary: 600, l1: 300, permissioned: 150 },
    icmIntervalSeconds: 900,
    nftsPerCollection: 120,
  },
  medium: {
    walletCount: 503,
    whaleEvery: 8,
    createEvery: 499,
    txPerDay: { primary: 20_000, l1: 8_000, permissioned: 4_000 },
    icmIntervalSeconds: 120,
    nftsPerCollection: 1_000,
  },
  large: {
    walletCount: 4_099,
    whaleEvery: 4,
    createEvery: 997,
    txPerDay: { primary: 95_000, l1: 30_000, permissioned: 15_000 },
    icmIntervalSeconds: 30,
    nftsPerCollection: 5_000,
  },
};
