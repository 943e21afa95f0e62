/** Picks a listing's records out of its answer by the list field's name (it varies by endpoint). */
export const listField =
  (field: string) =>
  (body: unknown): unknown[] => {
    const list = (body as Record<string, unknown> | null)?.[field];
    return Array.isArray(list) ? list : [];
  };

/** The largest page each kind of endpoint allows (§8): every stream asks for it. */
export const MAX_PAGE_SIZE = 100;
export const MAX_METRICS_PAGE_SIZE = 2160;

/**
 * Partitions of a whole-chain listing that takes no lower bound (a chain's latest transactions, its
 * blocks, its vertices, a height walk): without a `start`, the first run would read the chain back to
 * its genesis, millions of pages on mainnet. Such a stream runs only when the pipeline names it in `streams`.
 */
export const isNamed = (pipeline: { streams?: readonly string[] | undefined }, name: string): boolean =>
  pipeline.streams?.includes(name) ?? false;

type Feeds = {
  network: string;
  primary: { addresses: readonly string[] };
  evm: { chains: readonly string[]; addresses: readonly string[] };
};

/** One partition per configured P-/X-Chain address. */
export const perPrimaryAddress = (p: Feeds) =>
  p.primary.addresses.map((address) => ({ network: p.network, address }));

/** One partition per configured EVM chain. */
export const perEvmChain = (p: Feeds) => p.evm.chains.map((chain) => ({ network: p.network, chain }));

/** One partition per configured EVM chain × EVM address. */
export const perChainAndAddress = (p: Feeds) =>
  p.evm.chains.flatMap((chain) => p.evm.addresses.map((address) => ({ network: p.network, chain, address })));
