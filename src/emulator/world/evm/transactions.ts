import { hash32 } from '../../rng.ts';
import type { ContractInfo } from './addresses.ts';

export type TxKind = 'native' | 'erc20' | 'nft' | 'call' | 'create';

/** What a transaction does for ICM: sends message k, or delivers it (which ones: icm.ts IcmSlots). */
export interface IcmRole {
  k: number;
  side: 'send' | 'deliver';
}

/**
 * The facts of transaction `seq` of one chain, each a pure function of (chain seed, seq), cheap enough
 * for day scans of a hundred thousand transactions. Who sends is not drawn independently per
 * transaction: sequence numbers are cut into runs of P (the wallet count) and within run q a keyed
 * affine permutation r ↦ (a_q·r + c_q) mod P picks the sender of slot r (another one the counterparty).
 * Each wallet therefore sends exactly once per run, and the inverse permutation finds a wallet's slot
 * in O(1): per-address listings step from run to run instead of scanning blocks. The whale overrides
 * the sender of every W-th transaction and the counterparty of the one half-way between.
 *
 * The whale's transactions draw their facts (kind, failure, gas, tip, value, ...) from a table of
 * WHALE_PERIOD entries per side, indexed by (seq / W) mod WHALE_PERIOD, instead of from seq itself;
 * it is a legacy-transaction bot paying a fixed gas price above any base fee (see chain.ts). So the
 * sums over its history have a closed form (whole periods plus a prefix, see activity.ts): its
 * balance at any block costs O(1) rather than a walk of tens of millions of transactions. Contract
 * creations (every CE-th seq) still override the kind, wherever they fall.
 *
 * ICM sends and deliveries (see IcmSlots, which never picks the whale's slots nor creations) override
 * the rest: a successful call of the ICM contract by the slot's sender. Every fact derived from the
 * model (records, balances, listings, metrics) therefore sees the same transaction.
 */
export interface TxModel {
  /** Ordinary wallets (P); the whale's index is P. Contract c has address index P + 1 + c. */
  readonly walletCount: number;
  readonly whaleIndex: number;
  readonly whaleEvery: number;
  readonly createEvery: number;
  /** Entries of the whale's fact table per side (see above). */
  readonly whalePeriod: number;
  sender(seq: number): number;
  counterparty(seq: number): number;
  kind(seq: number): TxKind;
  /** Index into the chain's contracts for erc20/nft/call transactions, else -1. */
  contract(seq: number): number;
  failed(seq: number): boolean;
  gasUsed(seq: number): number;
  gasLimit(seq: number): number;
  /** Priority fee in Mwei (10^6 wei), on top of the block's base fee. */
  tipMwei(seq: number): number;
  /** Native value in wei (native transfers only; 0 otherwise). */
  value(seq: number): bigint;
  /** ERC-20 amount in the token's smallest unit (erc20 transactions only). */
  tokenAmount(seq: number): bigint;
  txType(seq: number): number;
  /** Strictly increasing per sender (not gap-free: the whale's overrides skip a wallet's slot). */
  nonce(seq: number): number;
  /** The transaction's ICM role, if it sends or delivers a message. */
  icmRole(seq: number): IcmRole | undefined;
  /** Whether the transaction emits a Transfer log (successful erc20 / nft transactions). */
  hasTransferLog(seq: number): boolean;
  /** The sequence numbers in run q where `wallet` is the permutation's sender / counterparty. */
  sendSlot(run: number, wallet: number): number;
  receiveSlot(run: number, wallet: number): number;
}

const GWEI_TIP_MWEI = { primary: 2_000, l1: 200 } as const;
/** Prime, and far from every createEvery, so a period's entries meet creations at every offset. */
export const WHALE_PERIOD = 4_093;

export function createTxModel(args: {
  chainSeed: number;
  walletCount: number;
  whaleEvery: number;
  createEvery: number;
  contracts: readonly ContractInfo[];
  primary: boolean;
  /** The ICM role of a transaction (none without it). */
  icmRole?: (seq: number) => IcmRole | undefined;
}): TxModel {
  const { chainSeed: cs, walletCount: P, whaleEvery: W, createEvery: CE, contracts } = args;
  const half = W / 2;
  const byKind = (k: ContractInfo['kind']) => contracts.flatMap((c, i) => (c.kind === k ? [i] : []));
  const tokens = byKind('erc20');
  const collections = byKind('erc721');
  const dapps = byKind('dapp');
  const maxTip = args.primary ? GWEI_TIP_MWEI.primary : GWEI_TIP_MWEI.l1;
  const icmContract = contracts.findIndex((c) => c.kind === 'icm');
  const icmRole = args.icmRole ?? (() => undefined);

  // Modular inverses mod P, for inverting the per-run permutations.
  const inverse = new Uint32Array(P);
  for (let a = 1; a < P; a++) inverse[a] = modPow(a, P - 2, P);

  // The hot loops walk runs in order; remembering the last run's parameters saves four hashes a call.
  let lastRun = -1;
  let aS = 1;
  let cS = 0;
  let aR = 1;
  let cR = 0;
  const params = (run: number) => {
    if (run === lastRun) return;
    lastRun = run;
    aS = 1 + (hash32(cs, run, 11) % (P - 1));
    cS = hash32(cs, run, 12) % P;
    aR = 1 + (hash32(cs, run, 13) % (P - 1));
    cR = hash32(cs, run, 14) % P;
  };

  // What a transaction's facts are drawn from: seq itself, or for the whale's transactions an entry
  // of its table (negative keys, which no seq takes).
  const L = WHALE_PERIOD;
  const key = (seq: number): number => {
    const r = seq % W;
    if (r === 0) return -1 - 2 * ((seq / W) % L);
    if (r === half) return -2 - 2 * (((seq - half) / W) % L);
    return seq;
  };

  const kind = (seq: number): TxKind => {
    if (seq % CE === CE - 1) return 'create';
    if (icmRole(seq)) return 'call';
    const u = hash32(cs, key(seq), 1) / 0x1_0000_0000;
    return u < 0.5 ? 'native' : u < 0.8 ? 'erc20' : u < 0.85 ? 'nft' : 'call';
  };
  const failed = (seq: number) => hash32(cs, key(seq), 3) < 0.03 * 0x1_0000_0000 && !icmRole(seq);
  const gasUsed = (seq: number): number => {
    const h = hash32(cs, key(seq), 4);
    switch (kind(seq)) {
      case 'native':
        return 21_000;
      case 'erc20':
        return 45_000 + (h % 20_000);
      case 'nft':
        return 60_000 + (h % 30_000);
      case 'call':
        return 80_000 + (h % 220_000);
      case 'create':
        return 400_000 + (h % 1_600_000);
    }
  };

  const contract = (seq: number): number => {
    const k = kind(seq);
    if (k === 'call' && icmRole(seq)) return icmContract;
    const pool = k === 'erc20' ? tokens : k === 'nft' ? collections : k === 'call' ? dapps : undefined;
    if (!pool) return -1;
    return pool[hash32(cs, key(seq), 2) % pool.length] as number;
  };

  return {
    walletCount: P,
    whaleIndex: P,
    whaleEvery: W,
    createEvery: CE,
    whalePeriod: L,
    sender(seq) {
      if (seq % W === 0) return P;
      const run = Math.floor(seq / P);
      params(run);
      return (aS * (seq - run * P) + cS) % P;
    },
    counterparty(seq) {
      if (seq % W === half) return P;
      const run = Math.floor(seq / P);
      params(run);
      return (aR * (seq - run * P) + cR) % P;
    },
    kind,
    contract,
    failed,
    gasUsed,
    gasLimit(seq) {
      const used = gasUsed(seq);
      return used === 21_000 ? used : used + (hash32(cs, key(seq), 5) % 40_000);
    },
    tipMwei: (seq) => hash32(cs, key(seq), 6) % maxTip,
    value(seq) {
      if (kind(seq) !== 'native') return 0n;
      return BigInt(1 + (hash32(cs, key(seq), 7) % 20_000)) * 10n ** 14n;
    },
    tokenAmount(seq) {
      const c = contracts[contract(seq)];
      const decimals = c?.decimals ?? 18;
      return BigInt(1 + (hash32(cs, key(seq), 8) % 1_000_000)) * 10n ** BigInt(Math.max(0, decimals - 2));
    },
    // The whale sends legacy (type 0) transactions at a fixed gas price.
    txType: (seq) => (seq % W === 0 || (kind(seq) === 'native' && hash32(cs, key(seq), 9) % 8 === 0) ? 0 : 2),
    nonce: (seq) => (seq % W === 0 ? seq / W : Math.floor(seq / P)),
    icmRole,
    hasTransferLog(seq) {
      const k = kind(seq);
      return (k === 'erc20' || k === 'nft') && !failed(seq);
    },
    sendSlot(run, wallet) {
      params(run);
      return run * P + (((inverse[aS] as number) * ((wallet - cS + P) % P)) % P);
    },
    receiveSlot(run, wallet) {
      params(run);
      return run * P + (((inverse[aR] as number) * ((wallet - cR + P) % P)) % P);
    },
  };
}

function modPow(base: number, exp: number, mod: number): number {
  let result = 1;
  let b = base % mod;
  let e = exp;
  while (e > 0) {
    if (e & 1) result = (result * b) % mod;
    b = (b * b) % mod;
    e >>= 1;
  }
  return result;
}
