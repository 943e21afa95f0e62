/** Keeps posting lists (record positions by key) as records are appended: a filtered page costs O(log n). */
import type { PrimaryChain } from '../../networks.ts';

/** The key of a posting list: its parts, `*` standing for "any". */
export type PostingKey = readonly string[];
export const postingKey = {
  tx: (chain: PrimaryChain, party: string, type: string): PostingKey => ['t', chain, type, party],
  reward: (address: string, nodeId: string): PostingKey => ['r', nodeId, address],
  delegation: (address: string, nodeId: string): PostingKey => ['d', nodeId, address],
  proposer: (nodeId: string): PostingKey => ['b', nodeId],
  validation: (validationId: string): PostingKey => ['v', validationId],
};

/**
 * Posting lists in nested maps, one level per key part. Note: not one map keyed by joined parts: a
 * joined key is a fresh string whose hash is computed on every lookup, the hot spot of generation.
 */
export interface Postings {
  add(key: PostingKey, position: number): void;
  get(key: PostingKey): readonly number[];
}

export function createPostings(): Postings {
  type Node = Map<string, Node | number[]>;
  const root: Node = new Map();
  return {
    add(key, position) {
      let node = root;
      for (let i = 0; i < key.length - 1; i++) {
        let next = node.get(key[i] as string) as Node | undefined;
        if (!next) {
          next = new Map();
          node.set(key[i] as string, next);
        }
        node = next;
      }
      const last = key[key.length - 1] as string;
      let list = node.get(last) as number[] | undefined;
      if (!list) {
        list = [];
        node.set(last, list);
      }
      if (list.at(-1) !== position) list.push(position);
    },
    get(key) {
      let node: Node | number[] | undefined = root;
      for (const part of key) node = node instanceof Map ? node.get(part) : undefined;
      return Array.isArray(node) ? node : [];
    },
  };
}

/** The list under `key`, created empty on first use (the ledger's per-address and per-node lists). */
export function listOf<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (!list) {
    list = [];
    map.set(key, list);
  }
  return list;
}
