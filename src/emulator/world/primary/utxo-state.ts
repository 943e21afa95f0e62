import type { UtxoRec } from './types.ts';

/**
 * What a UTXO is at one time. The live states carry the names of api-surfaces.md §2.4's balance
 * categories, so that §4.3 sums them as they are.
 */
export type UtxoState =
  /** Created after the time asked about: no view shows it. */
  | 'unborn'
  /** Consumed by a transaction accepted by then. */
  | 'spent'
  /** Exported to its home chain and not yet imported: in that chain's atomic memory. */
  | 'atomic'
  /** Locked by a staking transaction whose period has not started. */
  | 'pendingStaked'
  /** Locked by a staking transaction in its period. */
  | 'unlockedStaked'
  /** Spendable by any transaction: what `platform.getBalance` calls unlocked. */
  | 'unlockedUnstaked';

/**
 * The one rule for a UTXO's state at `t`: the UTXO listing (`staked`, `utxoType`, the consuming fields),
 * the balances of §4.3 and the node's `platform.getBalance` all read it, so they agree at every time.
 *
 * Note: a stake is locked from its transaction until the end of its period and is spendable from
 * then on, as avalanchego's RewardValidatorTx hands the stake outputs back (into the UTXO set, beside
 * the reward) when the chain's time reaches the period's end. This world rewards every period at exactly its
 * end (ledger/staking.ts `closePeriod`), so `end` is when the stake comes back.
 */
export function utxoState(u: UtxoRec, t: number): UtxoState {
  if (t < u.createdAt) return 'unborn';
  if (u.spent && u.spent.at <= t) return 'spent';
  if (u.createdOn !== u.consumedOn) return 'atomic';
  if (u.stake && t < u.stake.start) return 'pendingStaked';
  if (u.stake && t < u.stake.end) return 'unlockedStaked';
  return 'unlockedUnstaked';
}

/** Whether a state is locked as stake (pending or in its period). */
export const isStaked = (state: UtxoState): boolean =>
  state === 'pendingStaked' || state === 'unlockedStaked';
