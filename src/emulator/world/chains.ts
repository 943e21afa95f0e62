import { cb58Encode } from '../encoding.ts';
import { digest } from '../rng.ts';
import { type Network, PRIMARY_CHAINS, PRIMARY_SUBNET_ID } from './networks.ts';

/** VM ids as avalanchego names them: coreth for the C-Chain, subnet-evm for the L1s. */
export const VM_IDS = {
  coreth: 'mgj786NP7uDwBCcq6YwThhaN8FLyybkCa4zBWTQbNgmK6k9A6',
  subnetEvm: 'srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy',
  avm: 'jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq',
} as const;

/**
 * How a chain's validators are organised on the P-Chain: the C-Chain by the primary network; an L1 by a
 * subnet converted with ConvertSubnetToL1Tx (validation ids, balances); a permissioned subnet by
 * AddSubnetValidatorTx.
 */
export type ValidatorSetKind = 'primary' | 'l1' | 'permissioned';

/** One EVM chain of the world. Both the P-Chain (blockchains, subnets) and the EVM side read these. */
export interface EvmChainInfo {
  network: Network;
  /** The EVM chain id, as a decimal string (the Data API's `chainId`). */
  evmChainId: string;
  /** The chain's blockchain id on the P-Chain (cb58). */
  blockchainId: string;
  subnetId: string;
  name: string;
  vmId: string;
  vmName: 'EVM';
  validatorSet: ValidatorSetKind;
  token: { name: string; symbol: string; decimals: number };
  /** Seconds between blocks. */
  blockSeconds: number;
  /**
   * Seconds after the world's genesis at which the chain exists: its CreateChainTx on the P-Chain and
   * its EVM block 0 both happen then (0 for the C-Chain, there from the start).
   */
  createdAfterGenesis: number;
}

const L1_TEMPLATES = [
  {
    name: 'Lakeview L1',
    evmId: { mainnet: 770_001, fuji: 770_011 },
    symbol: 'LKV',
    kind: 'l1',
    blockSeconds: 4,
    createdAfterGenesis: 4 * 3600,
  },
  {
    name: 'Harbor Subnet',
    evmId: { mainnet: 770_002, fuji: 770_012 },
    symbol: 'HBR',
    kind: 'permissioned',
    blockSeconds: 6,
    createdAfterGenesis: 5 * 3600,
  },
] as const;

const idOf = (seed: number, ...key: string[]) => cb58Encode(digest(seed, 'id', ...key));

/** The three EVM chains of a network: its C-Chain and two L1s (one converted L1, one permissioned subnet). */
export function evmChainsOf(seed: number, network: Network): EvmChainInfo[] {
  const primary = PRIMARY_CHAINS[network];
  const cChain: EvmChainInfo = {
    network,
    evmChainId: primary.cChainEvmId,
    blockchainId: primary.c,
    subnetId: PRIMARY_SUBNET_ID,
    name: network === 'mainnet' ? 'Avalanche (C-Chain)' : 'Avalanche Fuji (C-Chain)',
    vmId: VM_IDS.coreth,
    vmName: 'EVM',
    validatorSet: 'primary',
    token: { name: 'Avalanche', symbol: 'AVAX', decimals: 18 },
    blockSeconds: 2,
    createdAfterGenesis: 0,
  };
  const l1s = L1_TEMPLATES.map(
    (t): EvmChainInfo => ({
      network,
      evmChainId: String(t.evmId[network]),
      blockchainId: idOf(seed, network, t.name, 'blockchain'),
      subnetId: idOf(seed, network, t.name, 'subnet'),
      name: network === 'mainnet' ? t.name : `${t.name} Testnet`,
      vmId: VM_IDS.subnetEvm,
      vmName: 'EVM',
      validatorSet: t.kind,
      token: { name: `${t.name.split(' ')[0]} Token`, symbol: t.symbol, decimals: 18 },
      blockSeconds: t.blockSeconds,
      createdAfterGenesis: t.createdAfterGenesis,
    }),
  );
  return [cChain, ...l1s];
}
