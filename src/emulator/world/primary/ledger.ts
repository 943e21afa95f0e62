import { createHash } from 'node:crypto';
import { cb58Decode, cb58Encode } from '../../encoding.ts';
import { digest, hash32, type Rng, rng } from '../../rng.ts';
import type { EvmChainInfo } from '../chains.ts';
import type { Network, PrimaryChain } from '../networks.ts';
import { idOf, type NodeInfo, type Wallet } from './actors.ts';
import { lazyBlsSigner, withBlsSigner } from './bls-keys.ts';
import {
  DAY,
  L1_FEE_PER_SECOND,
  NANO,
  type PrimarySizes,
  REWARD_RATE_BPS,
  STAKING,
  TX_FEE,
  YEAR,
} from './params.ts';
import type { BlockType, L1ValidatorRec, PBlock, StakeRec, TxRec, UtxoRec, Vertex } from './types.ts';

/**
 * The primary network's history, simulated one UTC day at a time in event order. A day is simulated
 * whole the first time anything at or before its end is asked for; later days only append, so every
 * array below grows at its end and an index into it is a stable position. Records dated after 'now'
 * exist here but every view hides them (see views.ts).
 */
export interface Ledger {
  readonly txs: Record<PrimaryChain, TxRec[]>;
  /** UTXOs by home chain (where they are spent), in creation order. */
  readonly utxos: Record<PrimaryChain, UtxoRec[]>;
  readonly blocks: PBlock[];
  readonly vertices: Vertex[];
  /** Validation periods and delegations in the order their transactions were accepted. */
  readonly stakes: StakeRec[];
  /** Reward UTXOs in creation order, each with the period it rewards. */
  readonly rewards: { utxo: UtxoRec; stake: StakeRec }[];
  readonly l1Validators: L1ValidatorRec[];
  /** Transaction indexes per address and chain, ascending. */
  txIndexesOf(address: string, chain: PrimaryChain): readonly number[];
  utxosOf(address: string, chain: PrimaryChain): readonly UtxoRec[];
  /** Validation periods of a node, oldest first. */
  periodsOf(nodeId: string): readonly StakeRec[];
  blockByHash(hash: string): PBlock | undefined;
  /** When each L1 chain and subnet was created (CreateChainTx / CreateSubnetTx time). */
  readonly created: Map<string, number>;
  /** Simulates through the end of the UTC day holding `t`. */
  extendTo(t: number): void;
}

export interface LedgerOptions {
  seed: number;
  network: Network;
  genesis: number;
  sizes: PrimarySizes;
  wallets: readonly Wallet[];
  nodes: readonly NodeInfo[];
  chains: readonly EvmChainInfo[];
}

type Event =
  | { kind: 'validator'; node: NodeInfo; round: number }
  | { kind: 'reward'; stake: StakeRec }
  | { kind: 'delegate' | 'pTransfer' | 'xTransfer' | 'atomic'; day: number; slot: number }
  | { kind: 'import'; utxo: UtxoRec; owner: Wallet }
  | { kind: 'l1'; step: number };

interface Queued {
  time: number;
  seq: number;
  event: Event;
}

const C_CHAIN_FIRST_HEIGHT = 50_000_000;
const PERMISSIONED_NODES = 3;
const INITIAL_L1_VALIDATORS = 3;

export function createLedger(o: LedgerOptions): Ledger {
  const { seed, network, genesis, wallets, nodes } = o;
  const rules = STAKING[network];
  const avax = (whole: number): bigint => BigInt(Math.round(whole * 1000)) * (NANO / 1000n);
  const l1Chain = o.chains.find((c) => c.validatorSet === 'l1') as EvmChainInfo;
  const permissioned = o.chains.find((c) => c.validatorSet === 'permissioned') as EvmChainInfo;
  const owner = wallets[0] as Wallet;

  const txs: Record<PrimaryChain, TxRec[]> = { p: [], x: [], c: [] };
  const utxos: Record<PrimaryChain, UtxoRec[]> = { p: [], x: [], c: [] };
  const blocks: PBlock[] = [];
  const vertices: Vertex[] = [];
  const stakes: StakeRec[] = [];
  const rewards: { utxo: UtxoRec; stake: StakeRec }[] = [];
  const l1Validators: L1ValidatorRec[] = [];
  const created = new Map<string, number>();
  const txIndex = new Map<string, number[]>();
  const utxoIndex = new Map<string, UtxoRec[]>();
  const spendable = new Map<string, UtxoRec[]>();
  const periods = new Map<string, StakeRec[]>();
  const blocksByHash = new Map<string, PBlock>();
  let utxoSeq = 0;
  // Funding comes from an address outside the pool, so its outputs are never listed.
  const faucetAddress = idOf(seed, network, 'faucet');
  let supply = rules.initialSupplyAvax * NANO;

  // ---- the event queue: a binary heap on (time, seq) ----
  const heap: Queued[] = [];
  let queued = 0;
  const before = (a: Queued, b: Queued) => a.time < b.time || (a.time === b.time && a.seq < b.seq);
  const push = (time: number, event: Event) => {
    heap.push({ time, seq: queued++, event });
    for (let i = heap.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (!before(heap[i] as Queued, heap[up] as Queued)) break;
      [heap[i], heap[up]] = [heap[up] as Queued, heap[i] as Queued];
      i = up;
    }
  };
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

  // ---- transactions and outputs ----
  const begin = (chain: PrimaryChain, type: string, time: number): TxRec => {
    const index = txs[chain].length;
    const block =
      chain === 'p'
        ? blocks.length
        : chain === 'x'
          ? vertices.length
          : C_CHAIN_FIRST_HEIGHT + Math.floor((time - genesis) / 2);
    return {
      chain,
      index,
      hash: idOf(seed, network, 'tx', chain, index),
      type,
      time,
      block,
      blockHash: '',
      consumed: [],
      emitted: [],
      burned: 0n,
      parties: [],
    };
  };

  const spend = (tx: TxRec, taken: UtxoRec[]) => {
    for (const u of taken) {
      u.spent = { txHash: tx.hash, at: tx.time, block: tx.block };
      tx.consumed.push(u);
    }
  };

  /** Takes the oldest spendable outputs of `address` on `chain` worth at least `need`; undefined if short. */
  const take = (chain: PrimaryChain, address: string, need: bigint): UtxoRec[] | undefined => {
    const pool = spendable.get(`${chain}:${address}`) ?? [];
    let sum = 0n;
    let n = 0;
    while (sum < need && n < pool.length) sum += (pool[n++] as UtxoRec).amount;
    return sum < need ? undefined : pool.splice(0, n);
  };
  const sum = (list: readonly UtxoRec[]) => list.reduce((s, u) => s + u.amount, 0n);

  const out = (
    tx: TxRec,
    home: PrimaryChain,
    address: string,
    amount: bigint,
    extra: Partial<Pick<UtxoRec, 'type' | 'stake' | 'rewardType' | 'txHash' | 'outputIndex'>> = {},
  ): UtxoRec => {
    const txHash = extra.txHash ?? tx.hash;
    const outputIndex = extra.outputIndex ?? tx.emitted.length;
    const u: UtxoRec = {
      id: idOf(seed, network, 'utxo', txHash, outputIndex),
      seq: utxoSeq++,
      txHash,
      outputIndex,
      createdOn: tx.chain,
      consumedOn: home,
      addresses: [address],
      amount,
      createdAt: tx.time,
      block: tx.block,
      type: extra.type ?? 'TRANSFER',
      ...(extra.stake ? { stake: extra.stake } : {}),
      ...(extra.rewardType ? { rewardType: extra.rewardType } : {}),
    };
    tx.emitted.push(u);
    utxos[home].push(u);
    listOf(utxoIndex, `${home}:${address}`).push(u);
    if (u.type === 'TRANSFER' && home === tx.chain) listOf(spendable, `${home}:${address}`).push(u);
    return u;
  };

  const commit = (tx: TxRec): TxRec => {
    const parties = new Set(tx.parties);
    for (const u of [...tx.consumed, ...tx.emitted]) for (const a of u.addresses) parties.add(a);
    for (const leg of [...(tx.evmInputs ?? []), ...(tx.evmOutputs ?? [])]) parties.add(leg.address);
    tx.parties = [...parties];
    for (const a of tx.parties) {
      const list = listOf(txIndex, `${tx.chain}:${a}`);
      if (list.at(-1) !== tx.index) list.push(tx.index);
    }
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
      tx.blockHash = `0x${digest(seed, network, 'c-block', tx.block).toString('hex')}`;
    }
    return tx;
  };

  const activeL1At = (t: number) => l1Validators.filter((v) => v.registeredAt <= t && l1Balance(v, t) > 0n);

  const addBlock = (time: number, blockTxs: TxRec[], type: BlockType) => {
    const height = blocks.length;
    const parent = blocks.at(-1)?.hash ?? cb58Encode(Buffer.alloc(32));
    const bytes = encodeBlock(type, parent, height, time, blockTxs);
    const hash = cb58Encode(createHash('sha256').update(bytes).digest());
    const active = activeL1At(time);
    const block: PBlock = {
      height,
      hash,
      parent,
      time,
      type,
      txs: blockTxs,
      proposer: proposerAt(time, height),
      supply,
      activeL1Validators: active.length,
      l1AccruedFees: active.reduce((s, v) => s + (time - v.registeredAt) * Number(L1_FEE_PER_SECOND), 0),
      size: bytes.length,
    };
    for (const tx of blockTxs) tx.blockHash = hash;
    blocks.push(block);
    blocksByHash.set(hash, block);
  };

  const currentPeriod = (node: NodeInfo, t: number): StakeRec | undefined => {
    const s = periods.get(node.nodeId)?.at(-1);
    return s && s.start <= t && t < s.end ? s : undefined;
  };
  const proposerAt = (t: number, height: number): string => {
    const active = nodes.filter((n) => currentPeriod(n, t));
    const pool = active.length > 0 ? active : nodes;
    return (pool[hash32(seed, height, 7) % pool.length] as NodeInfo).nodeId;
  };

  /** A BaseTx from the faucet (outside the wallet pool) that funds `address`. */
  const fund = (chain: 'p' | 'x', address: string, amount: bigint, time: number) => {
    const tx = begin(chain, 'BaseTx', time);
    const faucet: UtxoRec = {
      id: idOf(seed, network, 'faucet-utxo', chain, tx.index),
      seq: utxoSeq++,
      txHash: idOf(seed, network, 'genesis', chain),
      outputIndex: tx.index,
      createdOn: chain,
      consumedOn: chain,
      addresses: [faucetAddress],
      amount: amount + TX_FEE,
      createdAt: genesis,
      block: 0,
      type: 'TRANSFER',
    };
    spend(tx, [faucet]);
    out(tx, chain, address, amount);
    tx.burned = TX_FEE;
    commit(tx);
  };
  /** Tops `address` up from the faucet when it holds less than `need` on the P-Chain. */
  const ensure = (address: string, need: bigint, time: number) => {
    if (sum(spendable.get(`p:${address}`) ?? []) < need) fund('p', address, need * 2n, time);
  };

  /** Pays `amount` plus the fee from `address` on `chain` (change back to it); undefined if short. */
  const pay = (tx: TxRec, address: string, amount: bigint): boolean => {
    const taken = take(tx.chain, address, amount + TX_FEE);
    if (!taken) return false;
    spend(tx, taken);
    tx.burned = TX_FEE;
    const change = sum(taken) - amount - TX_FEE;
    if (change > 0n) out(tx, tx.chain, address, change);
    return true;
  };

  const reward = (amount: bigint, start: number, end: number) =>
    (amount * REWARD_RATE_BPS * BigInt(end - start)) / (10_000n * BigInt(YEAR));

  // ---- events ----
  const stakeValidator = (time: number, node: NodeInfo, round: number) => {
    const r = rng(seed, network, 'validator', node.index, round);
    const start = time + r.int(60, 3600);
    const end = start + r.int(rules.validatorDays[0] * DAY, rules.validatorDays[1] * DAY);
    const amount = avax(r.int(rules.validatorStakeAvax[0], rules.validatorStakeAvax[1]));
    ensure(node.owner, amount + 2n * TX_FEE, time);
    const tx = begin('p', node.legacyTx ? 'AddValidatorTx' : 'AddPermissionlessValidatorTx', time);
    tx.nodeId = node.nodeId;
    pay(tx, node.owner, amount);
    const stake: StakeRec = {
      kind: 'validator',
      nodeId: node.nodeId,
      tx,
      start,
      end,
      amount,
      feePpm: node.feePpm,
      rewardAddresses: [node.owner],
      potentialReward: reward(amount, start, end),
      rewardUtxos: [],
      ...(node.legacyTx ? {} : { signer: node.signer }),
    };
    out(tx, 'p', node.owner, amount, { type: 'STAKE', stake: { start, end } });
    tx.stake = stake;
    commit(tx);
    stakes.push(stake);
    listOf(periods, node.nodeId).push(stake);
    push(end, { kind: 'reward', stake });
    const harborAt = created.get(permissioned.subnetId);
    if (node.index < PERMISSIONED_NODES && harborAt !== undefined && harborAt <= time) {
      ensure(owner.address, TX_FEE, time);
      const sub = begin('p', 'AddSubnetValidatorTx', time);
      sub.nodeId = node.nodeId;
      sub.subnetId = permissioned.subnetId;
      sub.subnetPeriod = { start, end, weight: 100n };
      sub.parties.push(owner.address);
      pay(sub, owner.address, 0n);
      stake.subnetTx = commit(sub);
    }
  };

  const closePeriod = (time: number, stake: StakeRec) => {
    const tx = begin('p', 'RewardValidatorTx', time);
    tx.rewards = stake;
    tx.nodeId = stake.nodeId;
    stake.rewardTx = tx;
    const base = stake.tx.emitted.length;
    const pay = (address: string, amount: bigint, rewardType: UtxoRec['rewardType']) => {
      if (amount <= 0n) return;
      const u = out(tx, 'p', address, amount, {
        rewardType,
        txHash: stake.tx.hash,
        outputIndex: base + stake.rewardUtxos.length,
      });
      stake.rewardUtxos.push(u);
      rewards.push({ utxo: u, stake });
      supply += amount;
    };
    if (stake.kind === 'validator')
      pay(stake.rewardAddresses[0] as string, stake.potentialReward, 'VALIDATOR');
    else {
      const fee = (stake.potentialReward * BigInt(stake.feePpm)) / 1_000_000n;
      pay(stake.rewardAddresses[0] as string, stake.potentialReward - fee, 'DELEGATOR');
      pay(stake.validator?.rewardAddresses[0] as string, fee, 'VALIDATOR_FEE');
    }
    // The stake comes back spendable when its period closes.
    for (const u of stake.tx.emitted)
      if (u.type === 'STAKE') listOf(spendable, `p:${u.addresses[0]}`).push(u);
    tx.parties.push(...stake.rewardAddresses);
    commit(tx);
    if (stake.kind === 'validator') {
      const node = nodes.find((n) => n.nodeId === stake.nodeId) as NodeInfo;
      const round = (periods.get(node.nodeId) ?? []).length;
      push(time + rng(seed, network, 'restake', node.index, round).int(300, 7200), {
        kind: 'validator',
        node,
        round,
      });
    }
  };

  const delegate = (time: number, r: Rng) => {
    const wallet = r.pick(wallets);
    const start = time + r.int(6 * 3600, 36 * 3600);
    const candidates = nodes
      .map((n) => periods.get(n.nodeId)?.at(-1))
      .filter((s): s is StakeRec => !!s && s.start <= start && s.end >= start + DAY);
    if (candidates.length === 0) return;
    const validator = r.pick(candidates);
    const end = Math.min(
      validator.end,
      start + r.int(rules.delegatorDays[0] * DAY, rules.delegatorDays[1] * DAY),
    );
    const amount = avax(r.int(rules.delegatorStakeAvax[0], rules.delegatorStakeAvax[1]));
    const node = nodes.find((n) => n.nodeId === validator.nodeId) as NodeInfo;
    const tx = begin('p', node.legacyTx ? 'AddDelegatorTx' : 'AddPermissionlessDelegatorTx', time);
    tx.nodeId = validator.nodeId;
    if (!pay(tx, wallet.address, amount)) return;
    const stake: StakeRec = {
      kind: 'delegator',
      nodeId: validator.nodeId,
      tx,
      start,
      end,
      amount,
      feePpm: validator.feePpm,
      rewardAddresses: [wallet.address],
      potentialReward: reward(amount, start, end),
      validator,
      rewardUtxos: [],
    };
    out(tx, 'p', wallet.address, amount, { type: 'STAKE', stake: { start, end } });
    tx.stake = stake;
    commit(tx);
    stakes.push(stake);
    push(end, { kind: 'reward', stake });
  };

  const transfer = (chain: 'p' | 'x', time: number, r: Rng) => {
    const from = r.pick(wallets);
    const to = r.pick(wallets);
    const amount = avax(network === 'mainnet' ? r.int(1, 500) : r.int(1, 20) / 10);
    const tx = begin(chain, 'BaseTx', time);
    if (!pay(tx, from.address, amount)) return;
    out(tx, chain, to.address, amount);
    commit(tx);
  };

  const atomic = (time: number, r: Rng) => {
    const [from, to] = r.pick([
      ['p', 'x'],
      ['x', 'p'],
      ['p', 'c'],
      ['c', 'p'],
      ['x', 'c'],
      ['c', 'x'],
    ] as const);
    const wallet = r.pick(wallets);
    const amount = avax(network === 'mainnet' ? r.int(1, 200) : r.int(1, 30) / 10);
    const tx = begin(from, 'ExportTx', time);
    tx.source = from;
    tx.destination = to;
    if (from === 'c') {
      tx.evmInputs = [{ address: wallet.evmAddress, amount: amount + TX_FEE }];
      tx.burned = TX_FEE;
    } else if (!pay(tx, wallet.address, amount)) return;
    const exported = out(tx, to, wallet.address, amount);
    commit(tx);
    const delay = r.chance(0.7) ? r.int(30, 3600) : r.int(DAY, 3 * DAY);
    push(time + delay, { kind: 'import', utxo: exported, owner: wallet });
  };

  const importUtxo = (time: number, u: UtxoRec, wallet: Wallet) => {
    const tx = begin(u.consumedOn, 'ImportTx', time);
    tx.source = u.createdOn;
    tx.destination = u.consumedOn;
    spend(tx, [u]);
    tx.burned = TX_FEE;
    if (u.consumedOn === 'c') tx.evmOutputs = [{ address: wallet.evmAddress, amount: u.amount - TX_FEE }];
    else out(tx, u.consumedOn, wallet.address, u.amount - TX_FEE);
    commit(tx);
  };

  /** The L1 and permissioned-subnet lifecycle: subnets, chains, conversion, registrations, top-ups. */
  const l1Step = (time: number, step: number) => {
    const r = rng(seed, network, 'l1', step);
    ensure(owner.address, TX_FEE, time);
    const chainTx = (chain: EvmChainInfo) => {
      const tx = begin('p', 'CreateChainTx', time);
      tx.subnetId = chain.subnetId;
      tx.blockchain = {
        id: chain.blockchainId,
        name: chain.name,
        vmId: chain.vmId,
        evmChainId: chain.evmChainId,
      };
      pay(tx, owner.address, 0n);
      created.set(chain.blockchainId, time);
      commit(tx);
    };
    const subnetTx = (chain: EvmChainInfo) => {
      const tx = begin('p', 'CreateSubnetTx', time);
      tx.subnetId = chain.subnetId;
      pay(tx, owner.address, 0n);
      created.set(chain.subnetId, time);
      commit(tx);
    };
    const newL1Validator = (k: number): L1ValidatorRec => {
      const v = rng(seed, network, 'l1-validator', k);
      const id = digest(seed, network, 'validation', k);
      const fields = {
        validationId: cb58Encode(id),
        validationIdHex: `0x${id.toString('hex')}`,
        nodeId: `NodeID-${cb58Encode(digest(seed, network, 'l1-node', k).subarray(0, 20))}`,
        subnetId: l1Chain.subnetId,
        weight: v.int(10, 100),
        owner: owner.address,
        registeredAt: time,
        deposits: [] as L1ValidatorRec['deposits'],
        minNonce: 0,
      };
      return withBlsSigner(fields, lazyBlsSigner(seed, network, 'l1-validator', k));
    };
    const l1Tx = (type: string, vals: L1ValidatorRec[], deposit: bigint, change = false) => {
      ensure(owner.address, deposit * BigInt(vals.length) + TX_FEE, time);
      const tx = begin('p', type, time);
      tx.subnetId = l1Chain.subnetId;
      pay(tx, owner.address, deposit * BigInt(vals.length));
      for (const v of vals) v.deposits.push({ at: time, amount: deposit, txHash: tx.hash });
      tx.l1 = { validators: vals, ...(change ? { balanceChange: deposit } : {}) };
      tx.l1Burned = deposit * BigInt(vals.length);
      return tx;
    };
    switch (step) {
      case 0:
        subnetTx(permissioned);
        break;
      case 1:
        chainTx(permissioned);
        break;
      case 2:
        subnetTx(l1Chain);
        break;
      case 3:
        chainTx(l1Chain);
        break;
      case 4: {
        const vals = Array.from({ length: INITIAL_L1_VALIDATORS }, (_, k) => newL1Validator(k));
        const tx = l1Tx('ConvertSubnetToL1Tx', vals, avax(network === 'mainnet' ? 10 : 5));
        tx.l1 = {
          ...tx.l1,
          validators: vals,
          managerAddress: `0x${digest(seed, network, 'manager').subarray(0, 20).toString('hex')}`,
          chainId: l1Chain.blockchainId,
        } as TxRec['l1'];
        l1Validators.push(...vals);
        commit(tx);
        break;
      }
      default: {
        // Every fourth step registers a validator; the others top one up.
        if (step % 4 === 1) {
          const v = newL1Validator(l1Validators.length);
          l1Validators.push(v);
          commit(l1Tx('RegisterL1ValidatorTx', [v], avax(network === 'mainnet' ? 8 : 4)));
        } else {
          const v = r.pick(l1Validators);
          commit(l1Tx('IncreaseL1ValidatorBalanceTx', [v], avax(r.int(1, 4)), true));
        }
      }
    }
    const next = step < 4 ? time + 3600 : time + r.int(2 * DAY, 6 * DAY);
    push(next, { kind: 'l1', step: step + 1 });
  };

  const run = (q: Queued) => {
    const e = q.event;
    switch (e.kind) {
      case 'validator':
        return stakeValidator(q.time, e.node, e.round);
      case 'reward':
        return closePeriod(q.time, e.stake);
      case 'import':
        return importUtxo(q.time, e.utxo, e.owner);
      case 'l1':
        return l1Step(q.time, e.step);
      default: {
        const r = rng(seed, network, e.kind, e.day, e.slot);
        if (e.kind === 'delegate') return delegate(q.time, r);
        if (e.kind === 'atomic') return atomic(q.time, r);
        return transfer(e.kind === 'pTransfer' ? 'p' : 'x', q.time, r);
      }
    }
  };

  const scheduleDay = (day: number) => {
    const dayStart = genesis + day * DAY;
    const r = rng(seed, network, 'day', day);
    const interval = Math.floor(DAY / o.sizes.delegationsPerDay);
    for (let slot = 0; slot < o.sizes.delegationsPerDay; slot++)
      push(dayStart + slot * interval + r.int(0, interval >> 1), { kind: 'delegate', day, slot });
    const spread = (kind: 'pTransfer' | 'xTransfer' | 'atomic', count: number) => {
      for (let slot = 0; slot < count; slot++) push(dayStart + r.int(0, DAY - 1), { kind, day, slot });
    };
    spread('pTransfer', o.sizes.pTransfersPerDay);
    spread('xTransfer', o.sizes.xTransfersPerDay);
    spread('atomic', o.sizes.atomicPerDay);
  };

  // Genesis: block 0, every wallet funded on P and X, nodes' first stakes and the subnet lifecycle queued.
  addBlock(genesis, [], 'BanffStandardBlock');
  for (const w of wallets) {
    fund('p', w.address, avax(rules.walletFundingAvax), genesis + 60 + w.index * 60);
    fund('x', w.address, avax(rules.walletFundingAvax / 4), genesis + 90 + w.index * 60);
  }
  for (const node of nodes) push(genesis + 1800 + node.joinOffset, { kind: 'validator', node, round: 0 });
  push(genesis + 3600, { kind: 'l1', step: 0 });
  let nextDay = 0;

  return {
    txs,
    utxos,
    blocks,
    vertices,
    stakes,
    rewards,
    l1Validators,
    created,
    txIndexesOf: (address, chain) => txIndex.get(`${chain}:${address}`) ?? [],
    utxosOf: (address, chain) => utxoIndex.get(`${chain}:${address}`) ?? [],
    periodsOf: (nodeId) => periods.get(nodeId) ?? [],
    blockByHash: (hash) => blocksByHash.get(hash),
    extendTo(t) {
      while (genesis + nextDay * DAY <= t) {
        const dayEnd = genesis + (nextDay + 1) * DAY;
        scheduleDay(nextDay);
        while (heap.length > 0 && (heap[0] as Queued).time < dayEnd) run(pop());
        nextDay++;
      }
    },
  };
}

/** An L1 validator's remaining balance at `t`: its deposits so far less the continuous fee. */
export function l1Balance(v: L1ValidatorRec, t: number): bigint {
  const deposited = v.deposits.filter((d) => d.at <= t).reduce((s, d) => s + d.amount, 0n);
  const left = deposited - BigInt(Math.max(0, t - v.registeredAt)) * L1_FEE_PER_SECOND;
  return left > 0n ? left : 0n;
}

/** The block's bytes: codec version, type id, parent id, height, time, then its transaction ids. */
export function encodeBlock(
  type: BlockType,
  parent: string,
  height: number,
  time: number,
  txs: readonly TxRec[],
): Buffer {
  const typeId = { BanffProposalBlock: 29, BanffCommitBlock: 31, BanffStandardBlock: 32 }[type];
  const head = Buffer.alloc(2 + 4 + 8 + 32 + 8 + 4);
  head.writeUInt16BE(0, 0);
  head.writeUInt32BE(typeId, 2);
  head.writeBigUInt64BE(BigInt(time), 6);
  (cb58Decode(parent) ?? Buffer.alloc(32)).copy(head, 14);
  head.writeBigUInt64BE(BigInt(height), 46);
  head.writeUInt32BE(txs.length, 54);
  return Buffer.concat([head, ...txs.map((tx) => cb58Decode(tx.hash) ?? Buffer.alloc(32))]);
}

function listOf<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (!list) {
    list = [];
    map.set(key, list);
  }
  return list;
}
