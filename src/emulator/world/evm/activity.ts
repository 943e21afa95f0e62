import { digest } from '../../rng.ts';
import type { EvmChainCore, Party } from './chain.ts';

/** Which of an address's transactions a listing wants. */
export type ActivityKind = 'native' | 'erc20';

/**
 * Per-address activity, computed lazily from the transaction model: nothing proportional to history
 * is stored. A wallet's candidates are its two slots per run (see TxModel), the whale's are two
 * residues per W, a genesis contract's are the transactions calling it (dense, scanned), a created
 * contract's is its creation; anything else has none.
 */
export interface Activity {
  /** Sequence numbers in [lo, hi) of `kind` activity of `party`, newest first. */
  seqsDesc(party: Party, kind: ActivityKind, lo: number, hi: number): Generator<number>;
  /** Native balance in wei after block `block` (consistent with the native listing's transactions). */
  nativeBalance(party: Party | undefined, block: number): bigint;
  /** Transactions sent by `party` before sequence number `end` (closed form for the whale). */
  sentCount(party: Party, end: number): number;
}

const WEI = 10n ** 18n;
/** Memoized (address, day) balance deltas; a bound keeps a long benchmark's memory flat. */
const MAX_DAY_DELTAS = 200_000;

export function createActivity(core: EvmChainCore, seed: number): Activity {
  const { model, clock } = core;
  const P = model.walletCount;
  const W = model.whaleEvery;
  const whale = model.whaleIndex;

  const involves = (x: number, kind: ActivityKind, s: number): boolean => {
    if (kind === 'native')
      return model.sender(s) === x || (model.kind(s) === 'native' && model.counterparty(s) === x);
    return (
      model.kind(s) === 'erc20' &&
      model.hasTransferLog(s) &&
      (model.sender(s) === x || model.counterparty(s) === x)
    );
  };

  function* walletDesc(x: number, kind: ActivityKind, lo: number, hi: number): Generator<number> {
    if (hi <= lo) return;
    if (x === whale) {
      for (let b = Math.floor((hi - 1) / W) * W; b + W > lo; b -= W) {
        for (const s of [b + W / 2, b]) if (s >= lo && s < hi && involves(x, kind, s)) yield s;
      }
      return;
    }
    for (let run = Math.floor((hi - 1) / P); run >= 0 && (run + 1) * P > lo; run--) {
      const a = model.sendSlot(run, x);
      const b = model.receiveSlot(run, x);
      const first = Math.max(a, b);
      const second = Math.min(a, b);
      if (first >= lo && first < hi && involves(x, kind, first)) yield first;
      if (second !== first && second >= lo && second < hi && involves(x, kind, second)) yield second;
    }
  }

  function* contractDesc(c: number, lo: number, hi: number): Generator<number> {
    for (let s = hi - 1; s >= lo; s--) if (model.contract(s) === c) yield s;
  }

  function* seqsDesc(party: Party, kind: ActivityKind, lo: number, hi: number): Generator<number> {
    if (party.type === 'wallet') yield* walletDesc(party.index, kind, lo, hi);
    else if (party.type === 'contract') {
      if (kind === 'native') yield* contractDesc(party.index, lo, hi);
    } else if (kind === 'native' && party.seq >= lo && party.seq < hi) yield party.seq;
  }

  const genesisBalance = (x: number): bigint =>
    x === whale
      ? 10_000_000n * WEI
      : (10_000n + BigInt(digest(seed, 'alloc', core.info.evmChainId, x).readUInt16LE(0))) * WEI;

  // The change to wallet x's balance from the transactions in [lo, hi).
  const delta = (x: number, lo: number, hi: number): bigint => {
    let sum = 0n;
    let hint: number | undefined;
    for (const s of walletDesc(x, 'native', lo, hi)) {
      const ok = !model.failed(s);
      if (model.sender(s) === x) {
        hint = clock.blockOfTx(s, hint);
        sum -= BigInt(model.gasUsed(s)) * BigInt(core.gasPriceWei(s, hint));
        if (ok) sum -= model.value(s);
      }
      if (ok && model.kind(s) === 'native' && model.counterparty(s) === x) sum += model.value(s);
    }
    return sum;
  };

  const dayDeltas = new Map<string, bigint>();
  const dayDelta = (x: number, day: number): bigint => {
    const key = `${x}:${day}`;
    let d = dayDeltas.get(key);
    if (d === undefined) {
      d = delta(x, clock.txStart(clock.firstBlockOfDay(day)), clock.txStart(clock.firstBlockOfDay(day + 1)));
      if (dayDeltas.size >= MAX_DAY_DELTAS) dayDeltas.clear();
      dayDeltas.set(key, d);
    }
    return d;
  };

  const whaleNet = createWhaleLedger(core);

  return {
    seqsDesc,
    nativeBalance(party, block) {
      if (party?.type !== 'wallet' || block < 0) return 0n;
      const x = party.index;
      if (x === whale) return genesisBalance(x) + whaleNet(clock.txStart(block + 1));
      const day = clock.dayOf(block);
      let balance = genesisBalance(x);
      for (let d = 0; d < day; d++) balance += dayDelta(x, d);
      return balance + delta(x, clock.txStart(clock.firstBlockOfDay(day)), clock.txStart(block + 1));
    },
    sentCount(party, end) {
      if (party.type === 'wallet' && party.index === whale) return Math.ceil(end / W);
      let n = 0;
      if (party.type !== 'wallet') return n;
      for (const s of walletDesc(party.index, 'native', 0, end)) if (model.sender(s) === party.index) n++;
      return n;
    },
  };
}

/**
 * The whale's net balance change (wei) from the transactions in [0, n), in O(n / createEvery) with a
 * small constant: its transactions take their facts from a periodic table (see TxModel), so the sum
 * is whole periods plus a prefix of the table, corrected at the contract creations that override the
 * table's kind. Everything is counted in Mwei (fees) and 10^14 wei (values), exact in doubles per
 * period, and combined as bigints.
 */
function createWhaleLedger(core: EvmChainCore): (n: number) => bigint {
  const { model } = core;
  const W = model.whaleEvery;
  const half = W / 2;
  const L = model.whalePeriod;
  const CE = model.createEvery;
  const whale = model.whaleIndex;
  const VALUE_UNIT = 10n ** 14n;
  const MWEI = 10n ** 6n;
  const valueUnits = (s: number) => Number(model.value(s) / VALUE_UNIT);
  const feeMwei = (s: number) => model.gasUsed(s) * (core.whalePriceMwei + model.tipMwei(s));
  const sentValue = (s: number) => (model.kind(s) === 'native' && !model.failed(s) ? valueUnits(s) : 0);
  const receivedValue = (s: number) =>
    model.kind(s) === 'native' && !model.failed(s) && model.counterparty(s) === whale ? valueUnits(s) : 0;

  // Table entry r of a side is read through a representative seq of that side that is no creation.
  const representative = (r: number, offset: number): number => {
    for (let t = 0; ; t++) {
      const s = (r + t * L) * W + offset;
      if (s % CE !== CE - 1) return s;
    }
  };
  // Prefix sums over the table: fee and value of sends, value of receipts.
  let tables: { fee: Float64Array; sent: Float64Array; received: Float64Array } | undefined;
  const build = () => {
    const fee = new Float64Array(L + 1);
    const sent = new Float64Array(L + 1);
    const received = new Float64Array(L + 1);
    for (let r = 0; r < L; r++) {
      const a = representative(r, 0);
      const b = representative(r, half);
      fee[r + 1] = (fee[r] as number) + feeMwei(a);
      sent[r + 1] = (sent[r] as number) + sentValue(a);
      received[r + 1] = (received[r] as number) + receivedValue(b);
    }
    return { fee, sent, received };
  };
  // Σ of table entries j mod L for j in [0, count).
  const periodic = (prefix: Float64Array, count: number): bigint =>
    BigInt(Math.floor(count / L)) * BigInt(prefix[L] as number) + BigInt(prefix[count % L] as number);

  return (n) => {
    if (n <= 0) return 0n;
    tables ??= build();
    const sends = Math.ceil(n / W);
    const receipts = n > half ? Math.ceil((n - half) / W) : 0;
    let feeMweiSum = periodic(tables.fee, sends);
    let valueUnitsSum = periodic(tables.received, receipts) - periodic(tables.sent, sends);
    // Creations replace the table's kind: swap the table entry for the actual facts.
    let feeFix = 0;
    let valueFix = 0;
    for (let s = CE - 1; s < n; s += CE) {
      const side = s % W;
      if (side === 0) {
        const r = (s / W) % L;
        feeFix += feeMwei(s) - ((tables.fee[r + 1] as number) - (tables.fee[r] as number));
        valueFix += (tables.sent[r + 1] as number) - (tables.sent[r] as number) - sentValue(s);
      } else if (side === half) {
        const r = ((s - half) / W) % L;
        valueFix += receivedValue(s) - ((tables.received[r + 1] as number) - (tables.received[r] as number));
      }
    }
    feeMweiSum += BigInt(feeFix);
    valueUnitsSum += BigInt(valueFix);
    return valueUnitsSum * VALUE_UNIT - feeMweiSum * MWEI;
  };
}
