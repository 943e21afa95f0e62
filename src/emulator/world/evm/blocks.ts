import { unit } from '../../rng.ts';

const DAY = 86_400;

/**
 * Where blocks and transactions sit in time, in O(1). Block n is sealed at genesis + n·blockSeconds,
 * where `genesis` is the chain's creation (its CreateChainTx on the P-Chain): the world's origin plus
 * `createdAfterGenesis`. Days are the world's UTC days, counted from the origin, so a chain created
 * at 04:00 has a short first day and its later days line up with every other chain's.
 * Transactions are numbered along the chain (sequence number `s`); the number sealed before block n is
 *
 *   txStart(n) = ⌊F(n)⌋ − ⌊F(0)⌋,   F(n) = Λ(n) + A·u(n)
 *
 * where Λ grows by the day's rate λ_d per block and u(n) ∈ [0, 1) is a hash. Because A ≤ every λ_d,
 * F is increasing, so block n holds txStart(n+1) − txStart(n) ≥ 0 transactions, any range's count is
 * a subtraction (the txCount metric, cumulativeTransactions) and a sequence number finds its block by
 * binary search. Only the per-day prefix of Λ is memoized: one number per day.
 */
export interface BlockClock {
  /** The world's first UTC midnight: day d starts at origin + d·86400. */
  readonly origin: number;
  /** When block 0 was sealed: the chain's creation. */
  readonly genesis: number;
  readonly blockSeconds: number;
  readonly blocksPerDay: number;
  timestampOf(block: number): number;
  /** The newest block sealed at `now` (-1 before genesis). */
  headAt(now: number): number;
  /** The first block sealed at or after `t`. */
  firstBlockAtOrAfter(t: number): number;
  /** Transactions sealed before `block`. */
  txStart(block: number): number;
  txCount(block: number): number;
  /** The world day (0 = the origin's day) block `block` belongs to. */
  dayOf(block: number): number;
  /** The first block of world day `day` (0 for the days up to the chain's creation). */
  firstBlockOfDay(day: number): number;
  /** The block holding transaction `seq`; `hint` (a nearby block) makes sequential walks cheap. */
  blockOfTx(seq: number, hint?: number): number;
}

export function createBlockClock(args: {
  chainSeed: number;
  /** The world's origin (UTC midnight). */
  origin: number;
  /** Seconds from the origin to block 0; a multiple of blockSeconds. */
  createdAfterGenesis: number;
  blockSeconds: number;
  txPerDay: number;
}): BlockClock {
  const { chainSeed, origin, blockSeconds, txPerDay } = args;
  const blocksPerDay = DAY / blockSeconds;
  if (args.createdAfterGenesis % blockSeconds !== 0)
    throw new Error(
      `createdAfterGenesis ${args.createdAfterGenesis} is not a multiple of the block time ${blockSeconds}`,
    );
  // Blocks are numbered from the chain's creation; the rate curve runs on "virtual" blocks counted
  // from the origin (block n is virtual block n + offset), so days follow the world's UTC days.
  const offset = args.createdAfterGenesis / blockSeconds;
  const genesis = origin + args.createdAfterGenesis;
  // Each day's rate is 75–125 % of the mean; A is the smallest possible rate, which keeps F increasing.
  const rateOf = (day: number) => ((0.75 + 0.5 * unit(chainSeed, day, 0x5d)) * txPerDay) / blocksPerDay;
  const amplitude = (0.75 * txPerDay) / blocksPerDay;
  const dayPrefix: number[] = [0];
  const rates: number[] = [];

  const lambda = (block: number): number => {
    const day = Math.floor(block / blocksPerDay);
    while (dayPrefix.length <= day) {
      const d = dayPrefix.length - 1;
      const r = rateOf(d);
      rates[d] = r;
      dayPrefix.push((dayPrefix[d] as number) + r * blocksPerDay);
    }
    if (rates[day] === undefined) rates[day] = rateOf(day);
    return (dayPrefix[day] as number) + (rates[day] as number) * (block - day * blocksPerDay);
  };
  const F = (virtual: number) => lambda(virtual) + amplitude * unit(chainSeed, virtual, 0xb1);
  const base = Math.floor(F(offset));
  const txStart = (block: number) => (block <= 0 ? 0 : Math.floor(F(block + offset)) - base);

  return {
    origin,
    genesis,
    blockSeconds,
    blocksPerDay,
    timestampOf: (block) => genesis + block * blockSeconds,
    headAt: (now) => Math.max(-1, Math.floor((Math.floor(now) - genesis) / blockSeconds)),
    firstBlockAtOrAfter: (t) => Math.max(0, Math.ceil((t - genesis) / blockSeconds)),
    txStart,
    txCount: (block) => txStart(block + 1) - txStart(block),
    dayOf: (block) => Math.floor((block + offset) / blocksPerDay),
    firstBlockOfDay: (day) => Math.max(0, day * blocksPerDay - offset),
    blockOfTx(seq, hint) {
      // Largest block b with txStart(b) <= seq: gallop from the hint, then bisect.
      let lo = 0;
      let hi: number;
      if (hint !== undefined && hint >= 0) {
        if (txStart(hint) <= seq) {
          if (seq < txStart(hint + 1)) return hint;
          let step = 1;
          lo = hint + 1;
          while (txStart(hint + step) <= seq) {
            lo = hint + step;
            step *= 2;
          }
          hi = hint + step;
        } else {
          let step = 1;
          hi = hint;
          while (hint - step > 0 && txStart(hint - step) > seq) {
            hi = hint - step;
            step *= 2;
          }
          lo = Math.max(0, hint - step);
        }
      } else {
        hi = Math.ceil((seq + 2) / amplitude) + 2;
      }
      // Invariant: txStart(lo) <= seq < txStart(hi).
      while (hi - lo > 1) {
        const mid = lo + Math.floor((hi - lo) / 2);
        if (txStart(mid) <= seq) lo = mid;
        else hi = mid;
      }
      return lo;
    },
  };
}
