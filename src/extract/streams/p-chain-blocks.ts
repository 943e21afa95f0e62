import { rpcBlock, rpcBlockTx } from '../../schemas/primary.ts';
import type { Pipeline } from '../pipeline.ts';
import { defineStream, type RpcPageRequest } from '../stream.ts';
import { isNamed } from './fields.ts';

type Json = Record<string, unknown>;

/** `platform.getBlockByHeight` (or `getBlock`) with the JSON encoding: the block object, if any. */
export const blockOf = (body: unknown): Json | undefined => {
  const block = (body as { block?: unknown } | null)?.block;
  return typeof block === 'object' && block !== null ? (block as Json) : undefined;
};

/**
 * A block's transactions. Note: standard blocks list them in `txs`; proposal blocks carry their one
 * proposal in `tx` (after any Banff decision txs); commit and abort blocks have none.
 */
const txsOf = (block: Json): Json[] => [
  ...(Array.isArray(block.txs) ? (block.txs as Json[]) : []),
  ...(typeof block.tx === 'object' && block.tx !== null ? [block.tx as Json] : []),
];

/** The block as one row: its ids, height, time and the ids of its transactions. */
export const blockRows = (body: unknown): unknown[] => {
  const block = blockOf(body);
  if (!block) return [];
  const txs = txsOf(block);
  const { txs: _txs, tx: _tx, ...header } = block;
  return [{ ...header, txCount: txs.length, txIds: txs.map((tx) => tx.id) }];
};

/** Each transaction of the block as a row, with the block it is in and its common members typed. */
const txRows = (body: unknown): unknown[] => {
  const block = blockOf(body);
  if (!block) return [];
  return txsOf(block).map((tx, index) => {
    const unsigned = (tx.unsignedTx ?? {}) as Json;
    return {
      txID: tx.id,
      blockID: block.id,
      blockHeight: block.height,
      blockTime: block.time,
      index,
      networkID: unsigned.networkID,
      blockchainID: unsigned.blockchainID,
      memo: unsigned.memo,
      sourceChain: unsigned.sourceChain,
      destinationChain: unsigned.destinationChain,
      subnetID: unsigned.subnetID,
      unsignedTx: unsigned,
      credentials: tx.credentials,
    };
  });
};

const tip = (): RpcPageRequest => ({ kind: 'rpc', method: 'platform.getHeight', params: {} });
const tipOf = (body: unknown) => Number((body as { height?: unknown } | null)?.height);
const byHeight = (_p: Pipeline, _partition: unknown, height: number): RpcPageRequest => ({
  kind: 'rpc',
  method: 'platform.getBlockByHeight',
  params: { height, encoding: 'json' },
});
/** A block's time, absent before Banff. */
const timeOf = (body: unknown) => {
  const time = blockOf(body)?.time;
  return time === undefined || time === null ? undefined : Number(time);
};
const perNetwork = (p: Pipeline) => [{ network: p.network }];

/**
 * §4.20 P-Chain blocks from the node, one `platform.getBlockByHeight` (JSON encoding) per height, from
 * the last committed height (a first run: the first block at or after the pipeline's `start`) to the
 * tip `platform.getHeight` reports when the run begins.
 */
export const pChainBlocks = defineStream({
  name: 'p_chain_blocks',
  description: 'P-Chain blocks from the node, by height',
  inputs: 'the stream name in streams',
  strategy: 'height-walk',
  schema: rpcBlock,
  primaryKey: ['height'],
  partitions: (p) => (isNamed(p, 'p_chain_blocks') ? perNetwork(p) : []),
  tip,
  tipOf,
  request: byHeight,
  timeOf,
  records: blockRows,
});

/**
 * The transactions of the same blocks, one row each, from their own height walk: the unsigned
 * transaction kept as JSON text (its shape depends on its type), its common members typed.
 */
export const pChainBlockTransactions = defineStream({
  name: 'p_chain_block_transactions',
  description: 'Transactions of the P-Chain blocks from the node, with their unsigned form as JSON',
  inputs: 'the stream name in streams',
  strategy: 'height-walk',
  schema: rpcBlockTx,
  primaryKey: ['txID'],
  partitions: (p) => (isNamed(p, 'p_chain_block_transactions') ? perNetwork(p) : []),
  tip,
  tipOf,
  request: byHeight,
  timeOf,
  records: txRows,
});
