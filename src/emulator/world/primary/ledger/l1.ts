/** Keeps when subnets and chains were created and the L1's validators, whose balances blocks report. */
import { cb58Encode } from '../../../encoding.ts';
import { digest, rng } from '../../../rng.ts';
import type { EvmChainInfo } from '../../chains.ts';
import type { Network } from '../../networks.ts';
import type { Wallet } from '../actors.ts';
import { lazyBlsSigner, withBlsSigner } from '../bls-keys.ts';
import { avax, DAY, L1_FEE_PER_SECOND, TX_FEE } from '../params.ts';
import type { L1ValidatorRec, TxRec } from '../types.ts';
import type { EventQueue } from './events.ts';
import type { Payments } from './payments.ts';
import type { Transactions } from './transactions.ts';
import type { UtxoBook } from './utxo-book.ts';

const INITIAL_L1_VALIDATORS = 3;
/** The first regular L1 step (registrations and top-ups) after the conversion. */
const FIRST_L1_STEP = 5;

export interface Subnets {
  /** When each L1 chain and subnet was created (CreateChainTx / CreateSubnetTx time). */
  readonly created: Map<string, number>;
  readonly l1Validators: L1ValidatorRec[];
  /** L1 validators with balance left at `t`, and the fees they have accrued since registering. */
  l1Load(t: number): { activeL1Validators: number; l1AccruedFees: number };
  createSubnet(time: number, chain: EvmChainInfo): void;
  createChain(time: number, chain: EvmChainInfo): void;
  /** The L1's validator set: its conversion, then registrations and balance top-ups every few days. */
  l1Step(time: number, step: number): void;
}

export function createSubnets(args: {
  seed: number;
  network: Network;
  /** The wallet that creates the subnets and chains and funds the L1's validators. */
  owner: Wallet;
  l1Chain: EvmChainInfo;
  book: UtxoBook;
  history: Transactions;
  payments: Payments;
  queue: EventQueue;
}): Subnets {
  const { seed, network, owner, l1Chain, book, history, payments, queue } = args;
  const created = new Map<string, number>();
  const l1Validators: L1ValidatorRec[] = [];
  /** When each L1 validator's balance runs out, given its deposits so far (parallel to l1Validators). */
  const l1EmptyAt: number[] = [];

  return {
    created,
    l1Validators,
    l1Load(time) {
      let active = 0;
      let fees = 0;
      for (let k = 0; k < l1Validators.length; k++)
        if ((l1Validators[k] as L1ValidatorRec).registeredAt <= time && time < (l1EmptyAt[k] as number)) {
          active++;
          fees += (time - (l1Validators[k] as L1ValidatorRec).registeredAt) * Number(L1_FEE_PER_SECOND);
        }
      return { activeL1Validators: active, l1AccruedFees: fees };
    },
    createSubnet(time, chain) {
      payments.ensure(owner.address, TX_FEE, time);
      const tx = history.begin('p', 'CreateSubnetTx', time);
      tx.subnetId = chain.subnetId;
      book.pay(tx, owner.address, 0n);
      created.set(chain.subnetId, time);
      history.commit(tx);
    },
    createChain(time, chain) {
      payments.ensure(owner.address, TX_FEE, time);
      const tx = history.begin('p', 'CreateChainTx', time);
      tx.subnetId = chain.subnetId;
      tx.blockchain = {
        id: chain.blockchainId,
        name: chain.name,
        vmId: chain.vmId,
        evmChainId: chain.evmChainId,
      };
      book.pay(tx, owner.address, 0n);
      created.set(chain.blockchainId, time);
      history.commit(tx);
    },
    l1Step(time, step) {
      const r = rng(seed, network, 'l1', step);
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
      const register = (vals: L1ValidatorRec[]) => {
        for (const v of vals) {
          l1Validators.push(v);
          l1EmptyAt.push(v.registeredAt);
        }
      };
      const l1Tx = (type: string, vals: L1ValidatorRec[], deposit: bigint, change = false) => {
        payments.ensure(owner.address, deposit * BigInt(vals.length) + TX_FEE, time);
        const tx = history.begin('p', type, time);
        tx.subnetId = l1Chain.subnetId;
        book.pay(tx, owner.address, deposit * BigInt(vals.length));
        for (const v of vals) {
          v.deposits.push({ at: time, amount: deposit, txHash: tx.hash });
          const total = v.deposits.reduce((s, d) => s + d.amount, 0n);
          l1EmptyAt[l1Validators.indexOf(v)] =
            v.registeredAt + Number((total + L1_FEE_PER_SECOND - 1n) / L1_FEE_PER_SECOND);
        }
        tx.l1 = { validators: vals, ...(change ? { balanceChange: deposit } : {}) };
        tx.l1Burned = deposit * BigInt(vals.length);
        return tx;
      };
      if (step < FIRST_L1_STEP) {
        const vals = Array.from({ length: INITIAL_L1_VALIDATORS }, (_, k) => newL1Validator(k));
        register(vals);
        const tx = l1Tx('ConvertSubnetToL1Tx', vals, avax(network === 'mainnet' ? 10 : 5));
        tx.l1 = {
          ...tx.l1,
          validators: vals,
          managerAddress: `0x${digest(seed, network, 'manager').subarray(0, 20).toString('hex')}`,
          chainId: l1Chain.blockchainId,
        } as TxRec['l1'];
        history.commit(tx);
      } else if (step % 4 === 1) {
        // Every fourth step registers a validator; the others top one up.
        const v = newL1Validator(l1Validators.length);
        register([v]);
        history.commit(l1Tx('RegisterL1ValidatorTx', [v], avax(network === 'mainnet' ? 8 : 4)));
      } else {
        const v = r.pick(l1Validators);
        history.commit(l1Tx('IncreaseL1ValidatorBalanceTx', [v], avax(r.int(1, 4)), true));
      }
      queue.push(time + r.int(2 * DAY, 6 * DAY), { kind: 'l1', step: Math.max(step, FIRST_L1_STEP - 1) + 1 });
    },
  };
}

/** An L1 validator's remaining balance at `t`: its deposits so far less the continuous fee. */
export function l1Balance(v: L1ValidatorRec, t: number): bigint {
  const deposited = v.deposits.filter((d) => d.at <= t).reduce((s, d) => s + d.amount, 0n);
  const left = deposited - BigInt(Math.max(0, t - v.registeredAt)) * L1_FEE_PER_SECOND;
  return left > 0n ? left : 0n;
}
