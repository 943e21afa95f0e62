import type { WorldBase } from '../index.ts';

/** The EVM chains of both networks, their blocks, transactions, transfers, NFTs, ICM messages and metrics. */
export interface EvmWorld {
  readonly chainCount: number;
}

export function createEvmWorld(base: WorldBase): EvmWorld {
  void base;
  return { chainCount: 0 };
}
