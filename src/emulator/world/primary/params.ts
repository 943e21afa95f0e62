import type { Network } from '../networks.ts';
import type { Scale } from '../scale.ts';

/** nAVAX per AVAX: every primary-network amount is in nAVAX (denomination 9). */
export const NANO = 1_000_000_000n;
/** `whole` AVAX in nAVAX, to the thousandth of an AVAX. */
export const avax = (whole: number): bigint => BigInt(Math.round(whole * 1000)) * (NANO / 1000n);
export const DAY = 86_400;
export const YEAR = 365 * DAY;

/** The flat fee of a P-/X-Chain transaction (burned), in nAVAX. */
export const TX_FEE = 1_000_000n;
/** An L1 validator's continuous fee, nAVAX per second, charged against its balance. */
export const L1_FEE_PER_SECOND = 512n;
/**
 * The P-Chain's reward curve (avalanchego's reward config, the same on mainnet and Fuji): a stake earns a
 * share of the supply still to be minted, at a consumption rate that grows from 10 % for the shortest
 * stake to 12 % for one of a whole minting period, so longer stakes earn a higher rate.
 */
export const REWARD_CURVE = {
  supplyCapNavax: 720_000_000n * NANO,
  mintingPeriodSeconds: BigInt(YEAR),
  minConsumptionPpm: 100_000n,
  maxConsumptionPpm: 120_000n,
} as const;

/** A validation period whose node was up less than this share of it earns nothing, nor do its delegations. */
export const MIN_UPTIME_PERCENT = 80;

/** How many of each thing a scale holds; `small` keeps full walks in tests to seconds. */
export interface PrimarySizes {
  nodes: number;
  wallets: number;
  delegationsPerDay: number;
  pTransfersPerDay: number;
  xTransfersPerDay: number;
  atomicPerDay: number;
}

export const SIZES: Record<Scale, PrimarySizes> = {
  small: {
    nodes: 12,
    wallets: 20,
    delegationsPerDay: 8,
    pTransfersPerDay: 5,
    xTransfersPerDay: 6,
    atomicPerDay: 4,
  },
  medium: {
    nodes: 40,
    wallets: 120,
    delegationsPerDay: 16,
    pTransfersPerDay: 20,
    xTransfersPerDay: 30,
    atomicPerDay: 10,
  },
  // Note: four times medium's history at under a quarter of its daily activity, so the primary network
  // at `large` holds no more records than at medium. The ten-million-record walks of `large` are the
  // EVM side's; here every record is simulated and kept (see ledger/index.ts), so its size is bounded on purpose.
  large: {
    nodes: 40,
    wallets: 200,
    delegationsPerDay: 3,
    pTransfersPerDay: 4,
    xTransfersPerDay: 6,
    atomicPerDay: 2,
  },
};

/** Staking periods, in seconds. Shorter than the real minimums so small histories hold completed periods. */
export interface StakingRules {
  validatorDays: [number, number];
  delegatorDays: [number, number];
  validatorStakeAvax: [number, number];
  delegatorStakeAvax: [number, number];
  walletFundingAvax: number;
  initialSupplyAvax: bigint;
}

export const STAKING: Record<Network, StakingRules> = {
  mainnet: {
    validatorDays: [14, 28],
    delegatorDays: [2, 21],
    validatorStakeAvax: [2_000, 20_000],
    delegatorStakeAvax: [25, 5_000],
    walletFundingAvax: 400_000,
    initialSupplyAvax: 450_000_000n,
  },
  fuji: {
    validatorDays: [3, 10],
    delegatorDays: [1, 5],
    validatorStakeAvax: [1, 100],
    delegatorStakeAvax: [1, 50],
    walletFundingAvax: 20_000,
    initialSupplyAvax: 400_000_000n,
  },
};
