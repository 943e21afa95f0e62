import { evmAddressOf } from '../../encoding.ts';
import { digest } from '../../rng.ts';
import type { EvmChainInfo } from '../chains.ts';
import type { Network } from '../networks.ts';
import type { PricedAsset } from '../prices.ts';

/**
 * The wallets of a network, shared by its EVM chains (one key pair works on every chain), plus the
 * whale. Index `size` is the whale; contracts of a chain follow it in the chain's index space.
 */
export interface WalletPool {
  /** Ordinary wallets; their indexes are 0..size-1. */
  readonly size: number;
  readonly whaleIndex: number;
  addressOf(index: number): string;
  /** The index of a lower-case address, or undefined if it is not a wallet of this network. */
  indexOf(address: string): number | undefined;
}

export function createWalletPool(seed: number, network: Network, size: number): WalletPool {
  const addresses = Array.from({ length: size + 1 }, (_, i) =>
    evmAddressOf(digest(seed, i === size ? 'whale' : 'wallet', network, i).subarray(0, 20)),
  );
  const byAddress = new Map(addresses.map((a, i) => [a, i]));
  return {
    size,
    whaleIndex: size,
    addressOf: (index) => addresses[index] as string,
    indexOf: (address) => byAddress.get(address),
  };
}

export type ContractKind = 'erc20' | 'erc721' | 'dapp' | 'icm';

/** TeleporterMessenger (the ICM contract): the same address on every chain, lower-case as we serve addresses. */
export const ICM_CONTRACT_ADDRESS = '0x253b2784c75e510dd0ff1da844684a1ac0aa5fcf';

/** A contract deployed at genesis: the tokens, NFT collections and dApps transactions call. */
export interface ContractInfo {
  kind: ContractKind;
  address: string;
  name: string;
  symbol: string;
  decimals: number;
  logoUri: string;
  /** The asset whose price (prices.ts) the token is quoted at (ERC-20 only; a wrapped token, its base). */
  priceAsset?: PricedAsset;
}

const logo = (symbol: string) => `https://images.avalake.invalid/tokens/${symbol.toLowerCase()}.svg`;

export const nativeLogoUri = (symbol: string) => logo(symbol);

/**
 * Tokens, collections and dApps of a chain (the C-Chains get one of each more than the L1s), then the
 * ICM contract, which only ICM sends and deliveries call (see IcmSlots).
 */
export function contractsOf(seed: number, chain: EvmChainInfo): ContractInfo[] {
  const sym = chain.token.symbol;
  const primary = chain.validatorSet === 'primary';
  const specs: Omit<ContractInfo, 'address' | 'logoUri'>[] = [
    {
      kind: 'erc20',
      name: `Wrapped ${chain.token.name}`,
      symbol: `W${sym}`,
      decimals: 18,
      priceAsset: sym as PricedAsset,
    },
    { kind: 'erc20', name: 'USD Coin', symbol: primary ? 'USDC' : 'USDC.e', decimals: 6, priceAsset: 'USDC' },
    ...(primary
      ? [
          {
            kind: 'erc20' as const,
            name: 'Lake Coin',
            symbol: 'LAKE',
            decimals: 18,
            priceAsset: 'LAKE' as const,
          },
        ]
      : []),
    { kind: 'erc721', name: 'Avalanche Otters', symbol: 'OTTR', decimals: 0 },
    ...(primary ? [{ kind: 'erc721' as const, name: 'Lake Lights', symbol: 'LITE', decimals: 0 }] : []),
    { kind: 'dapp', name: 'Lake Router', symbol: 'ROUTER', decimals: 0 },
    { kind: 'dapp', name: 'Lake Vault', symbol: 'VAULT', decimals: 0 },
  ];
  const genesis = specs.map((s) => ({
    ...s,
    address: evmAddressOf(digest(seed, 'contract', chain.evmChainId, s.symbol).subarray(0, 20)),
    logoUri: logo(s.symbol),
  }));
  const icm: ContractInfo = {
    kind: 'icm',
    address: ICM_CONTRACT_ADDRESS,
    name: 'TeleporterMessenger',
    symbol: 'ICM',
    decimals: 0,
    logoUri: logo('ICM'),
  };
  return [...genesis, icm];
}

/**
 * Contracts created by transactions: the address carries the transaction's sequence number (masked),
 * so an address can be traced back to its creation in O(1) instead of by scanning history.
 */
export interface CreatedContracts {
  addressOf(seq: number): string;
  /** The creating transaction's sequence number, if the address has the chain's created-contract form. */
  seqOf(address: string): number | undefined;
}

export function createdContracts(seed: number, chainId: string): CreatedContracts {
  const key = digest(seed, 'created-contracts', chainId);
  const prefix = key.subarray(0, 12).toString('hex');
  const mask = key.readBigUInt64BE(12);
  return {
    addressOf: (seq) => `0x${prefix}${(BigInt(seq) ^ mask).toString(16).padStart(16, '0')}`,
    seqOf(address) {
      if (!address.startsWith(`0x${prefix}`)) return undefined;
      const seq = BigInt(`0x${address.slice(26)}`) ^ mask;
      return seq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seq) : undefined;
    },
  };
}
