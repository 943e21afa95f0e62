import type { WorldBase } from '../index.ts';
import type { Network } from '../networks.ts';

/** The primary network of one network: validators, delegations, P/X/C transactions and UTXOs, blocks. */
export interface PrimaryNetwork {
  readonly network: Network;
}

export function createPrimaryNetwork(base: WorldBase & { network: Network }): PrimaryNetwork {
  void base;
  return { network: base.network };
}
