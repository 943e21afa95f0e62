import type { StreamDefinition } from '../stream.ts';
import * as avgTps from './avg-tps.ts';
import * as blockchains from './blockchains.ts';
import * as chains from './chains.ts';
import * as currentSupply from './current-supply.ts';
import * as delegators from './delegators.ts';
import * as erc20Transfers from './erc20-transfers.ts';
import * as erc721Balances from './erc721-balances.ts';
import * as evmBlocks from './evm-blocks.ts';
import * as evmTransactions from './evm-transactions.ts';
import * as icmMessages from './icm-messages.ts';
import * as latestPrimaryTransactions from './latest-primary-transactions.ts';
import * as metrics from './metrics.ts';
import * as nativeBalances from './native-balances.ts';
import * as nativeTransactions from './native-transactions.ts';
import * as nftTokens from './nft-tokens.ts';
import * as nodeBlocks from './node-blocks.ts';
import * as pChainBalances from './p-chain-balances.ts';
import * as pChainBlocks from './p-chain-blocks.ts';
import * as pChainBlocksById from './p-chain-blocks-by-id.ts';
import * as primaryBalances from './primary-balances.ts';
import * as primaryTransactions from './primary-transactions.ts';
import * as rewards from './rewards.ts';
import * as stakingTransactions from './staking-transactions.ts';
import * as utxos from './utxos.ts';
import * as validators from './validators.ts';
import * as xChainVertices from './x-chain-vertices.ts';

/**
 * Every stream avalake knows: the stream definitions each file of this folder exports. Adding a stream is
 * adding its file and importing it here (test/extract/stream-definition.test.ts names a file left out);
 * the engine does not change. Ordered by name, so plans and summaries are stable.
 *
 * Note: imported one by one, not found by listing the folder, so that the built CLI (scripts/build.ts)
 * holds them all.
 */
const modules: Record<string, unknown>[] = [
  avgTps,
  blockchains,
  chains,
  currentSupply,
  delegators,
  erc20Transfers,
  erc721Balances,
  evmBlocks,
  evmTransactions,
  icmMessages,
  latestPrimaryTransactions,
  metrics,
  nativeBalances,
  nativeTransactions,
  nftTokens,
  nodeBlocks,
  pChainBalances,
  pChainBlocksById,
  pChainBlocks,
  primaryBalances,
  primaryTransactions,
  rewards,
  stakingTransactions,
  utxos,
  validators,
  xChainVertices,
];

const isStream = (x: unknown): x is StreamDefinition =>
  typeof x === 'object' && x !== null && 'name' in x && 'strategy' in x && 'schema' in x && 'partitions' in x;

export const STREAMS: readonly StreamDefinition[] = modules
  .flatMap((m) => Object.values(m).filter(isStream))
  .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const duplicate = STREAMS.find((s, i) => STREAMS.findIndex((t) => t.name === s.name) !== i);
if (duplicate) throw new Error(`two stream files define a stream named ${duplicate.name}`);

export const STREAM_NAMES = STREAMS.map((s) => s.name);
