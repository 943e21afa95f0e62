import type { StreamDefinition } from '../stream.ts';
import { delegators } from './delegators.ts';
import { erc20Transfers } from './erc20-transfers.ts';
import { icmMessages } from './icm-messages.ts';
import { metrics } from './metrics.ts';
import { rewards } from './rewards.ts';
import { stakingTransactions } from './staking-transactions.ts';
import { utxos } from './utxos.ts';
import { validatorDelegators, validators } from './validators.ts';

/** Every stream avalake knows, by name. Adding one is a file in this folder and a line here. */
export const STREAMS: readonly StreamDefinition[] = [
  rewards,
  delegators,
  stakingTransactions,
  utxos,
  erc20Transfers,
  icmMessages,
  metrics,
  validators,
  validatorDelegators,
] as unknown as StreamDefinition[];

export const STREAM_NAMES = STREAMS.map((s) => s.name);
