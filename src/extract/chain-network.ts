import { FinalError, type RequestLocation } from './errors.ts';
import type { PageRequest, Partition } from './stream.ts';

type Network = 'mainnet' | 'fuji';

/** The network whose listing tells a chain of the wrong network from one the service does not know. */
const OTHER: Record<Network, Network> = { mainnet: 'fuji', fuji: 'mainnet' };

/** Where a chain of each service's routes comes from in the pipeline. */
const LISTED_IN = { data: 'evm.chains', metrics: 'metrics.chains' } as const;

/**
 * The Data and Metrics APIs serve an EVM chain by its id alone: their paths name no network. A mainnet
 * chain in a fuji pipeline (43114 for 43113, say) is read without complaint, and every row lands labelled
 * fuji. So before a partition's first read of a chain, the chain is looked up in the Data API's
 * `GET /v1/chains` of the pipeline's network and, when it is not there, of the other one: found there,
 * the partition fails with what to fix. A chain neither lists goes on, for the service's own answer (a
 * 404) to say so; so does every chain when the listing cannot be read (the check adds no way to fail).
 *
 * `listChains(network)` answers `GET /v1/chains?network=…`; each network's is asked at most once a run
 * (1 CU), and only for partitions read for the first time, so a cron tick asks nothing.
 */
export function chainNetworkCheck(listChains: (network: Network) => Promise<unknown>) {
  const listings = new Map<Network, Promise<ReadonlySet<string>>>();
  const idsOf = (network: Network) => {
    let ids = listings.get(network);
    if (!ids) {
      ids = listChains(network).then(chainIdsOf, () => new Set<string>());
      listings.set(network, ids);
    }
    return ids;
  };
  return async (
    request: PageRequest,
    partition: Partition,
    at: Omit<RequestLocation, 'request'>,
  ): Promise<void> => {
    if (request.kind !== 'http') return;
    const chain = request.params.chainId;
    const network = partition.network as Network;
    // Only chain ids: the Metrics API's network-wide series (mainnet, testnet, total) the config checks.
    if (chain === undefined || !/^\d+$/.test(chain) || !(network in OTHER)) return;
    if ((await idsOf(network)).has(chain)) return;
    const other = OTHER[network];
    if (!(await idsOf(other)).has(chain)) return;
    throw new FinalError(
      `EVM chain ${chain} is a ${other} chain, and the pipeline's network is ${network}: its rows would be ` +
        `labelled ${network}. Remove ${chain} from ${LISTED_IN[request.service]}, or set "network" to ${other} ` +
        `(GET /v1/chains lists each network's chains)`,
      { ...at, request: `GET /v1/chains?network=${other}` },
    );
  };
}

/** The EVM chain ids of a `GET /v1/chains` answer (the pipeline names chains by these ids only). */
function chainIdsOf(body: unknown): ReadonlySet<string> {
  const chains = (body as { chains?: unknown } | null)?.chains;
  if (!Array.isArray(chains)) return new Set();
  return new Set(
    chains
      .map((chain: { chainId?: unknown } | null) => chain?.chainId)
      .filter((id) => typeof id === 'string'),
  );
}
