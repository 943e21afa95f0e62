/**
 * Keeps the events scheduled and not yet run in (time, rank, seq) order: each chain's history is in time
 * order, and in the P-Chain's order within a second.
 */
import type { EvmChainInfo } from '../../chains.ts';
import type { NodeInfo, Wallet } from '../actors.ts';
import type { StakeRec, UtxoRec } from '../types.ts';

/** Something that will happen: its handler (ledger/index.ts `run`) writes its transactions. */
export type Event =
  | { kind: 'fund'; chain: 'p' | 'x'; wallet: Wallet }
  | { kind: 'validator'; node: NodeInfo; round: number }
  | { kind: 'reward'; stake: StakeRec }
  | { kind: 'delegate' | 'pTransfer' | 'xTransfer' | 'atomic'; day: number; slot: number }
  | { kind: 'import'; utxo: UtxoRec; owner: Wallet }
  | { kind: 'subnet' | 'chain'; chain: EvmChainInfo }
  | { kind: 'l1'; step: number };

export interface Queued {
  time: number;
  /** Which of the events at the same time runs first (rankOf). */
  rank: number;
  /** Scheduling order: the tie-breaker of events at the same time and rank. */
  seq: number;
  event: Event;
}

/**
 * A delegation that ends in the same second as its validator is rewarded first: avalanchego removes
 * stakers by end time, then by priority, and primary-network delegators come before validators (see its
 * txs/priorities.go). So the delegation's reward UTXO takes the output index after its stake, and the
 * validator's fee on it, paid by the validator's RewardValidatorTx, the one after that.
 */
const rankOf = (event: Event) => (event.kind === 'reward' && event.stake.kind !== 'validator' ? 0 : 1);

export interface EventQueue {
  push(time: number, event: Event): void;
  /** Takes the earliest event if it is before `t`; undefined when none is. */
  popBefore(t: number): Queued | undefined;
}

/** A binary heap on (time, rank, seq). */
export function createEventQueue(): EventQueue {
  const heap: Queued[] = [];
  let queued = 0;
  const before = (a: Queued, b: Queued) =>
    a.time !== b.time ? a.time < b.time : a.rank !== b.rank ? a.rank < b.rank : a.seq < b.seq;
  const pop = (): Queued => {
    const top = heap[0] as Queued;
    const last = heap.pop() as Queued;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l] as Queued, heap[m] as Queued)) m = l;
        if (r < heap.length && before(heap[r] as Queued, heap[m] as Queued)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m] as Queued, heap[i] as Queued];
        i = m;
      }
    }
    return top;
  };
  return {
    push(time, event) {
      heap.push({ time, rank: rankOf(event), seq: queued++, event });
      for (let i = heap.length - 1; i > 0; ) {
        const up = (i - 1) >> 1;
        if (!before(heap[i] as Queued, heap[up] as Queued)) break;
        [heap[i], heap[up]] = [heap[up] as Queued, heap[i] as Queued];
        i = up;
      }
    },
    popBefore: (t) => (heap.length > 0 && (heap[0] as Queued).time < t ? pop() : undefined),
  };
}
