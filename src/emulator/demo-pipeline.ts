import type { World } from './world/index.ts';
import type { Network } from './world/networks.ts';

/**
 * A pipeline that mirrors what the emulated world holds for one network: some of its wallets and
 * validators, its subnets, the P-Chain's genesis block, every EVM chain, the whale and a wallet on the
 * EVM side, and every metric. Nothing in it depends on the day the world's clock started.
 * `pipelines/demo.json` is this for seed 1 (`npm run demo-pipeline` writes it); tests build their own.
 */
export function demoPipelineOf(world: World, network: Network, url: string) {
  const primary = world.primary(network);
  const chains = world.evm.chains(network).map((c) => c.info);
  const whale = world.evm.whale(network);
  const wallets = world.evm.wallets(network).filter((w) => w !== whale);
  const base = url.replace(/\/$/, '');
  // Note: only ids that every world of the seed has, whatever day its clock starts on: wallets, nodes,
  // chains and contracts come from the seed, and of the P-Chain blocks only the genesis block does
  // (the others' ids hash their times, which follow the clock's starting day).
  const genesisBlock = primary.block(0, world.genesis);
  const collections = world.evm
    .chains(network)
    .flatMap((chain) =>
      chain.nfts.collections
        .map((i) => chain.core.contracts[i]?.address)
        .filter((a): a is string => a !== undefined),
    );
  return {
    $schema: './pipeline.schema.json',
    name: 'demo',
    network,
    urls: { data: base, metrics: base, node: network === 'mainnet' ? base : `${base}/${network}` },
    primary: {
      addresses: primary.addresses().slice(0, 4),
      nodeIds: primary
        .nodes()
        .slice(0, 3)
        .map((n) => n.nodeId),
      subnets: chains.filter((c) => c.validatorSet !== 'primary').map((c) => c.subnetId),
      blockIds: genesisBlock ? [genesisBlock.hash] : [],
    },
    evm: { chains: chains.map((c) => c.evmChainId), addresses: [whale, ...wallets.slice(0, 2)], collections },
    icm: { addresses: [whale, ...wallets.slice(0, 1)] },
    metrics: {
      chains: [...chains.map((c) => c.evmChainId), network === 'mainnet' ? 'mainnet' : 'testnet'],
      intervals: ['day', 'week'],
    },
  };
}
