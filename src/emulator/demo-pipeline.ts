import type { World } from './world/index.ts';
import type { Network } from './world/networks.ts';

/**
 * A pipeline that mirrors what the emulated world holds for one network: some of its wallets and
 * validators, its subnets, every EVM chain, the whale and a wallet on the EVM side, and every metric.
 * `pipelines/demo.json` is this for seed 1 (`npm run demo-pipeline` writes it); tests build their own.
 */
export function demoPipelineOf(world: World, network: Network, url: string) {
  const primary = world.primary(network);
  const chains = world.evm.chains(network).map((c) => c.info);
  const whale = world.evm.whale(network);
  const wallets = world.evm.wallets(network).filter((w) => w !== whale);
  const base = url.replace(/\/$/, '');
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
    },
    evm: { chains: chains.map((c) => c.evmChainId), addresses: [whale, ...wallets.slice(0, 2)] },
    icm: { addresses: [whale, ...wallets.slice(0, 1)] },
    metrics: {
      chains: [...chains.map((c) => c.evmChainId), network === 'mainnet' ? 'mainnet' : 'testnet'],
      intervals: ['day', 'week'],
    },
  };
}
