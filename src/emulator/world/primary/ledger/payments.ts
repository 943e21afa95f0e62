/** Funding, transfers, exports and imports; keeps only the faucet's address (outputs are the UTXO book's). */
import type { Rng } from '../../../rng.ts';
import type { Network } from '../../networks.ts';
import { idOf, type Wallet } from '../actors.ts';
import { avax, DAY, TX_FEE } from '../params.ts';
import type { UtxoRec } from '../types.ts';
import type { EventQueue } from './events.ts';
import { FaucetUtxo, SpendOf } from './records.ts';
import type { Transactions } from './transactions.ts';
import type { UtxoBook } from './utxo-book.ts';

export interface Payments {
  /** A BaseTx from the faucet (outside the wallet pool) that funds `address`. */
  fund(chain: 'p' | 'x', address: string, amount: bigint, time: number): void;
  /** Tops `address` up from the faucet when it holds less than `need` on the P-Chain. */
  ensure(address: string, need: bigint, time: number): void;
  /** A BaseTx between two wallets drawn from `r` (none if the sender is short). */
  transfer(chain: 'p' | 'x', time: number, r: Rng): void;
  /** An ExportTx from one chain to another's atomic memory; its ImportTx is scheduled. */
  atomic(time: number, r: Rng): void;
  /** The ImportTx of an exported output, to `wallet` on the output's home chain. */
  importUtxo(time: number, u: UtxoRec, wallet: Wallet): void;
}

export function createPayments(args: {
  seed: number;
  network: Network;
  genesis: number;
  wallets: readonly Wallet[];
  book: UtxoBook;
  history: Transactions;
  queue: EventQueue;
}): Payments {
  const { seed, network, genesis, wallets, book, history, queue } = args;
  // Funding comes from an address outside the pool, so its outputs are never listed.
  const faucetAddress = idOf(seed, network, 'faucet');

  const fund = (chain: 'p' | 'x', address: string, amount: bigint, time: number) => {
    const tx = history.begin(chain, 'BaseTx', time);
    const faucet = new FaucetUtxo(
      book.nextSeq(),
      tx,
      tx.index,
      chain,
      chain,
      [faucetAddress],
      amount + TX_FEE,
      genesis,
      0,
      'TRANSFER',
    );
    faucet.spent = new SpendOf(tx);
    tx.consumed.push(faucet);
    book.out(tx, chain, address, amount);
    tx.burned = TX_FEE;
    history.commit(tx);
  };

  return {
    fund,
    ensure(address, need, time) {
      if (book.spendable('p', address) < need) fund('p', address, need * 2n, time);
    },
    transfer(chain, time, r) {
      const from = r.pick(wallets);
      const to = r.pick(wallets);
      const amount = avax(network === 'mainnet' ? r.int(1, 500) : r.int(1, 20) / 10);
      const tx = history.begin(chain, 'BaseTx', time);
      if (!book.pay(tx, from.address, amount)) return;
      book.out(tx, chain, to.address, amount);
      history.commit(tx);
    },
    atomic(time, r) {
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
      const tx = history.begin(from, 'ExportTx', time);
      tx.source = from;
      tx.destination = to;
      if (from === 'c') {
        tx.evmInputs = [{ address: wallet.evmAddress, amount: amount + TX_FEE }];
        tx.burned = TX_FEE;
      } else if (!book.pay(tx, wallet.address, amount)) return;
      const exported = book.out(tx, to, wallet.address, amount);
      history.commit(tx);
      const delay = r.chance(0.7) ? r.int(30, 3600) : r.int(DAY, 3 * DAY);
      const at = time + delay;
      queue.push(to === 'c' ? history.onCChainBlock(at) : at, {
        kind: 'import',
        utxo: exported,
        owner: wallet,
      });
    },
    importUtxo(time, u, wallet) {
      const tx = history.begin(u.consumedOn, 'ImportTx', time);
      tx.source = u.createdOn;
      tx.destination = u.consumedOn;
      book.spend(tx, [u]);
      tx.burned = TX_FEE;
      if (u.consumedOn === 'c') tx.evmOutputs = [{ address: wallet.evmAddress, amount: u.amount - TX_FEE }];
      else book.out(tx, u.consumedOn, wallet.address, u.amount - TX_FEE);
      history.commit(tx);
    },
  };
}
