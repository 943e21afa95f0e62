/** Keeps each chain's transactions and the P-Chain blocks and X-Chain vertices that hold them. */
import { createHash } from 'node:crypto';
import { cb58Decode, cb58Encode } from '../../../encoding.ts';
import { digest } from '../../../rng.ts';
import type { PrimaryChain } from '../../networks.ts';
import { idOf } from '../actors.ts';
import type { BlockType, PBlock, TxRec, Vertex } from '../types.ts';
import { type Postings, postingKey } from './postings.ts';
import { type Ids, Tx } from './records.ts';

/** Where the C-Chain's blocks are: the EVM side's block clock and block hashes (one fact, one value). */
export interface CChainBlocks {
  /** The first block sealed at or after `t`. */
  blockAt(t: number): number;
  timeOf(block: number): number;
  hashOf(block: number): string;
}

/** What a P-Chain block records of the rest of the ledger when it is accepted. */
export interface BlockFacts {
  proposer: string;
  supply: bigint;
  activeL1Validators: number;
  l1AccruedFees: number;
}

export interface Transactions {
  readonly txs: Record<PrimaryChain, TxRec[]>;
  readonly blocks: PBlock[];
  readonly vertices: Vertex[];
  blockByHash(hash: string): PBlock | undefined;
  /** A new transaction of `chain` at `time`, in the block it will be committed to. */
  begin(chain: PrimaryChain, type: string, time: number): Tx;
  /** Appends `tx` to its chain: its postings, and its P-Chain block(s) or X-Chain vertex. */
  commit(tx: Tx): TxRec;
  /** Appends a P-Chain block of `blockTxs` (none for the genesis and commit blocks). */
  addBlock(time: number, blockTxs: Tx[], type: BlockType): void;
  /** The time of the C-Chain block sealed at or after `t` (events that may write a C-Chain transaction). */
  onCChainBlock(t: number): number;
}

export function createTransactions(args: {
  ids: Ids;
  cChain: CChainBlocks;
  postings: Postings;
  /** Read as each P-Chain block is accepted. */
  blockFacts(time: number, height: number): BlockFacts;
}): Transactions {
  const { ids, cChain, postings, blockFacts } = args;
  const { seed, network } = ids;
  const post = postings.add;
  const txs: Record<PrimaryChain, TxRec[]> = { p: [], x: [], c: [] };
  const blocks: PBlock[] = [];
  const vertices: Vertex[] = [];
  const blocksByHash = new Map<string, PBlock>();
  // Note: the genesis block's parent is the network's genesis state and its bytes carry no time (as
  // avalanchego's genesis block), so its id is a constant of seed and network: a world started on any
  // day has it, and a pipeline may name it forever (pipelines/demo.json does).
  let lastBlockHash: Buffer = digest(seed, network, 'p-chain genesis state');

  const addBlock = (time: number, blockTxs: Tx[], type: BlockType) => {
    const height = blocks.length;
    const bytes = blockBytes(
      type,
      lastBlockHash,
      height,
      time,
      blockTxs.map((tx) => tx.hashBytes()),
    );
    const hashBytes = createHash('sha256').update(bytes).digest();
    const hash = cb58Encode(hashBytes);
    const facts = blockFacts(time, height);
    const block: PBlock = {
      height,
      hash,
      parent: cb58Encode(lastBlockHash),
      time,
      type,
      txs: blockTxs,
      proposer: facts.proposer,
      supply: facts.supply,
      activeL1Validators: facts.activeL1Validators,
      l1AccruedFees: facts.l1AccruedFees,
      size: bytes.length,
    };
    for (const tx of blockTxs) tx.blockHash = hash;
    blocks.push(block);
    blocksByHash.set(hash, block);
    post(postingKey.proposer(facts.proposer), height);
    lastBlockHash = hashBytes;
  };

  return {
    txs,
    blocks,
    vertices,
    blockByHash: (hash) => blocksByHash.get(hash),
    begin(chain, type, time) {
      const block = chain === 'p' ? blocks.length : chain === 'x' ? vertices.length : cChain.blockAt(time);
      return new Tx(ids, chain, txs[chain].length, type, time, block);
    },
    commit(tx) {
      const parties = new Set(tx.parties);
      for (const u of tx.consumed) for (const a of u.addresses) parties.add(a);
      for (const u of tx.emitted) for (const a of u.addresses) parties.add(a);
      for (const leg of tx.evmInputs ?? []) parties.add(leg.address);
      for (const leg of tx.evmOutputs ?? []) parties.add(leg.address);
      tx.parties = [...parties];
      for (const a of tx.parties) {
        post(postingKey.tx(tx.chain, a, '*'), tx.index);
        post(postingKey.tx(tx.chain, a, tx.type), tx.index);
      }
      post(postingKey.tx(tx.chain, '*', tx.type), tx.index);
      for (const v of tx.l1?.validators ?? []) post(postingKey.validation(v.validationId), tx.index);
      txs[tx.chain].push(tx);
      if (tx.chain === 'p') {
        const proposal = tx.type === 'RewardValidatorTx';
        addBlock(tx.time, [tx], proposal ? 'BanffProposalBlock' : 'BanffStandardBlock');
        if (proposal) addBlock(tx.time, [], 'BanffCommitBlock');
      } else if (tx.chain === 'x') {
        const prev = vertices.at(-1);
        const v: Vertex = {
          index: vertices.length,
          height: vertices.length,
          hash: idOf(seed, network, 'vertex', vertices.length),
          parents: prev ? [prev.hash] : [],
          time: tx.time,
          txs: [tx],
        };
        vertices.push(v);
        tx.blockHash = v.hash;
      } else {
        tx.blockHash = cChain.hashOf(tx.block);
      }
      return tx;
    },
    addBlock,
    onCChainBlock: (t) => cChain.timeOf(cChain.blockAt(t)),
  };
}

/**
 * The block's bytes: codec version, type id, parent id, height, time (none for the genesis block), then
 * its transaction ids.
 */
export function encodeBlock(
  type: BlockType,
  parent: string,
  height: number,
  time: number,
  txs: readonly TxRec[],
): Buffer {
  return blockBytes(
    type,
    cb58Decode(parent) ?? Buffer.alloc(32),
    height,
    time,
    txs.map((tx) => cb58Decode(tx.hash) ?? Buffer.alloc(32)),
  );
}

function blockBytes(type: BlockType, parent: Buffer, height: number, time: number, txIds: Buffer[]): Buffer {
  const typeId = { BanffProposalBlock: 29, BanffCommitBlock: 31, BanffStandardBlock: 32 }[type];
  const head = Buffer.alloc(2 + 4 + 8 + 32 + 8 + 4);
  head.writeUInt16BE(0, 0);
  head.writeUInt32BE(typeId, 2);
  head.writeBigUInt64BE(BigInt(height === 0 ? 0 : time), 6);
  parent.copy(head, 14);
  head.writeBigUInt64BE(BigInt(height), 46);
  head.writeUInt32BE(txIds.length, 54);
  return Buffer.concat([head, ...txIds]);
}
