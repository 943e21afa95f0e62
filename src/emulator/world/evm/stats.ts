// The metrics vocabulary is reference data both sides share.
import type { ChainMetric } from '../../../reference/metrics.ts';
import type { EvmChainCore } from './chain.ts';
import { step, type TimeInterval } from './intervals.ts';

export { CHAIN_METRICS, type ChainMetric, DAY_ONLY_METRICS } from '../../../reference/metrics.ts';

/** One day of one chain, from a scan of its blocks (the day so far, for the current day). */
export interface DayStats {
  day: number;
  /** Unix seconds of the day's 0:00 UTC. */
  start: number;
  /** Blocks scanned: [firstBlock, endBlock). */
  firstBlock: number;
  endBlock: number;
  txCount: number;
  gasUsed: number;
  /** Σ gasUsed × gasPrice in wei. */
  fees: bigint;
  /** Σ gasPrice (wei) over the day's transactions, for avgGasPrice. */
  sumGasPrice: number;
  maxGasPrice: number;
  maxBlockGas: number;
  maxBlockTxs: number;
  /** Contracts created. */
  creations: number;
  /** Bitsets over the chain's address space (wallets, whale, genesis contracts). */
  addresses: Uint32Array;
  senders: Uint32Array;
  deployers: Uint32Array;
  /** Per hour of the day: gas used, distinct addresses (created contracts included), distinct senders. */
  hourGas: number[];
  hourAddresses: number[];
  hourSenders: number[];
}

export interface ChainStats {
  dayStats(day: number, asOf: number): DayStats;
  /** The value of `metric` for the interval starting at aligned `t`, as known at `asOf`. */
  value(metric: ChainMetric, interval: TimeInterval, t: number, asOf: number): number;
}

const DAY = 86_400;
/** Complete days kept; a few KB each, so all of a large world's history fits comfortably. */
const MAX_MEMO_DAYS = 20_000;

export function createChainStats(core: EvmChainCore): ChainStats {
  const { clock, model } = core;
  const size = model.whaleIndex + 1 + core.contracts.length;
  const words = Math.ceil(size / 32);
  const contractSlot = (c: number) => model.whaleIndex + 1 + c;
  const set = (bits: Uint32Array, i: number) => {
    bits[i >>> 5] = (bits[i >>> 5] as number) | (1 << (i & 31));
  };
  const count = (bits: Uint32Array) => {
    let n = 0;
    for (let v of bits) {
      v -= (v >>> 1) & 0x55555555;
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      n += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    return n;
  };

  /** The address indexes a transaction touches (from/to of the transaction and of its Transfer log). */
  const touch = (s: number, visit: (i: number) => void) => {
    visit(model.sender(s));
    const k = model.kind(s);
    if (k === 'native') visit(model.counterparty(s));
    else if (k !== 'create') {
      visit(contractSlot(model.contract(s)));
      if (model.hasTransferLog(s)) visit(model.counterparty(s));
    }
  };

  const scan = (day: number, endBlock: number): DayStats => {
    const firstBlock = clock.firstBlockOfDay(day);
    const end = Math.min(endBlock, clock.firstBlockOfDay(day + 1));
    const st: DayStats = {
      day,
      start: clock.origin + day * DAY,
      firstBlock,
      endBlock: end,
      txCount: 0,
      gasUsed: 0,
      fees: 0n,
      sumGasPrice: 0,
      maxGasPrice: 0,
      maxBlockGas: 0,
      maxBlockTxs: 0,
      creations: 0,
      addresses: new Uint32Array(words),
      senders: new Uint32Array(words),
      deployers: new Uint32Array(words),
      hourGas: new Array(24).fill(0),
      hourAddresses: new Array(24).fill(0),
      hourSenders: new Array(24).fill(0),
    };
    const hourAddr = new Uint32Array(words);
    const hourSend = new Uint32Array(words);
    let hour = 0;
    let hourCreations = 0;
    const closeHour = () => {
      st.hourAddresses[hour] = count(hourAddr) + hourCreations;
      st.hourSenders[hour] = count(hourSend);
      hourAddr.fill(0);
      hourSend.fill(0);
      hourCreations = 0;
    };
    const visit = (i: number) => {
      set(st.addresses, i);
      set(hourAddr, i);
    };
    let s = clock.txStart(firstBlock);
    for (let b = firstBlock; b < end; b++) {
      // By time, not by block count: a chain created mid-day starts its first day at a later hour.
      const h = Math.floor((clock.timestampOf(b) - st.start) / 3_600);
      if (h !== hour) {
        closeHour();
        hour = h;
      }
      const next = clock.txStart(b + 1);
      if (next === s) continue;
      let blockGas = 0;
      let blockFees = 0;
      for (; s < next; s++) {
        const gas = model.gasUsed(s);
        const price = core.gasPriceWei(s, b);
        blockGas += gas;
        // gas × price in Mwei stays exact in a double for a block; the day's sum is a bigint.
        blockFees += gas * (price / 1e6);
        st.sumGasPrice += price;
        if (price > st.maxGasPrice) st.maxGasPrice = price;
        const sender = model.sender(s);
        set(st.senders, sender);
        set(hourSend, sender);
        touch(s, visit);
        if (model.kind(s) === 'create') {
          st.creations++;
          hourCreations++;
          set(st.deployers, sender);
        }
      }
      const txs = next - clock.txStart(b);
      st.txCount += txs;
      st.gasUsed += blockGas;
      st.hourGas[hour] = (st.hourGas[hour] as number) + blockGas;
      st.fees += BigInt(blockFees) * 1_000_000n;
      if (blockGas > st.maxBlockGas) st.maxBlockGas = blockGas;
      if (txs > st.maxBlockTxs) st.maxBlockTxs = txs;
    }
    closeHour();
    return st;
  };

  const complete = new Map<number, DayStats>();
  let partial: DayStats | undefined;
  const dayStats = (day: number, asOf: number): DayStats => {
    const endBlock = clock.headAt(asOf) + 1;
    const dayEnd = clock.firstBlockOfDay(day + 1);
    if (endBlock >= dayEnd) {
      let st = complete.get(day);
      if (!st) {
        st = scan(day, endBlock);
        if (complete.size >= MAX_MEMO_DAYS) complete.clear();
        complete.set(day, st);
      }
      return st;
    }
    if (partial?.day !== day || partial.endBlock !== Math.min(endBlock, dayEnd))
      partial = scan(day, endBlock);
    return partial;
  };

  // First touches of each address (and first deployments of each sender), discovered in sequence
  // order and kept as ascending lists: the whole address space is seen within the first few runs,
  // so cumulative distinct counts cost a binary search instead of a scan of history.
  const firstSeen = makeFirstTouches(size, (s, mark) => touch(s, mark));
  const firstDeployed = makeFirstTouches(model.whaleIndex + 1, (k, mark) =>
    mark(model.sender(k * model.createEvery + model.createEvery - 1)),
  );

  /** Days (indexes) of the interval [t, next) that have begun by asOf. */
  const daysOf = (t: number, next: number, asOf: number): number[] => {
    const from = Math.max(0, Math.floor((t - clock.origin) / DAY));
    const to = Math.floor((Math.min(next, asOf + 1) - 1 - clock.origin) / DAY);
    const days: number[] = [];
    for (let d = from; d <= to; d++) days.push(d);
    return days;
  };

  const value = (metric: ChainMetric, interval: TimeInterval, t: number, asOf: number): number => {
    const next = step(t, interval);
    const head = clock.headAt(asOf);
    const lo = clock.firstBlockAtOrAfter(Math.max(t, clock.genesis));
    const hi = Math.min(clock.firstBlockAtOrAfter(next), head + 1);
    const txsBefore = (block: number) => clock.txStart(Math.max(0, block));
    if (metric === 'txCount') return hi > lo ? txsBefore(hi) - txsBefore(lo) : 0;
    if (metric === 'cumulativeTxCount') return txsBefore(hi);
    if (metric === 'cumulativeContracts') return Math.floor(txsBefore(hi) / model.createEvery);
    if (metric === 'cumulativeAddresses')
      return firstSeen.before(txsBefore(hi)) + Math.floor(txsBefore(hi) / model.createEvery);
    if (metric === 'cumulativeDeployers') {
      const creations = Math.floor(txsBefore(hi) / model.createEvery);
      return firstDeployed.before(creations);
    }
    const days = daysOf(t, next, asOf).map((d) => dayStats(d, asOf));
    if (interval === 'hour') {
      const st = days[0];
      if (!st) return 0;
      const h = Math.floor((t - st.start) / 3_600);
      if (metric === 'gasUsed') return st.hourGas[h] ?? 0;
      if (metric === 'activeAddresses') return st.hourAddresses[h] ?? 0;
      if (metric === 'activeSenders') return st.hourSenders[h] ?? 0;
    }
    const union = (pick: (st: DayStats) => Uint32Array) => {
      const bits = new Uint32Array(words);
      for (const st of days) {
        const b = pick(st);
        for (let i = 0; i < words; i++) bits[i] = (bits[i] as number) | (b[i] as number);
      }
      return count(bits);
    };
    const sum = (pick: (st: DayStats) => number) => days.reduce((acc, st) => acc + pick(st), 0);
    const st = days[0];
    switch (metric) {
      case 'gasUsed':
        return sum((x) => x.gasUsed);
      case 'activeAddresses':
        return union((x) => x.addresses) + sum((x) => x.creations);
      case 'activeSenders':
        return union((x) => x.senders);
      case 'contracts':
        return sum((x) => x.creations);
      case 'deployers':
        return union((x) => x.deployers);
      case 'feesPaid':
        return Number(days.reduce((acc, x) => acc + x.fees, 0n));
      case 'avgGps':
      case 'avgTps': {
        if (!st) return 0;
        const span = (st.endBlock - st.firstBlock) * clock.blockSeconds;
        return (metric === 'avgGps' ? st.gasUsed : st.txCount) / span;
      }
      case 'maxGps':
        return st ? st.maxBlockGas / clock.blockSeconds : 0;
      case 'maxTps':
        return st ? st.maxBlockTxs / clock.blockSeconds : 0;
      case 'avgGasPrice':
        return st && st.txCount > 0 ? st.sumGasPrice / st.txCount : 0;
      case 'maxGasPrice':
        return st ? st.maxGasPrice : 0;
    }
    return 0;
  };

  return { dayStats, value };
}

/**
 * The sequence positions at which each of `size` keys is first marked, discovered lazily in order.
 * `before(n)` counts keys first marked at a position below n.
 */
function makeFirstTouches(size: number, visitAt: (position: number, mark: (key: number) => void) => void) {
  const marked = new Uint8Array(size);
  const firsts: number[] = [];
  let scanned = 0;
  return {
    before(n: number): number {
      while (scanned < n && firsts.length < size) {
        const position = scanned;
        visitAt(position, (key) => {
          if (!marked[key]) {
            marked[key] = 1;
            firsts.push(position);
          }
        });
        scanned++;
      }
      let lo = 0;
      let hi = firsts.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((firsts[mid] as number) < n) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    },
  };
}
