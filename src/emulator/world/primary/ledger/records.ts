/** The record classes the ledger appends; each keeps its id, derived on first read (most of its cost). */
import { cb58Encode } from '../../../encoding.ts';
import { digest } from '../../../rng.ts';
import type { Network, PrimaryChain } from '../../networks.ts';
import { idOf } from '../actors.ts';
import type { Spend, StakeRec, TxRec, UtxoRec } from '../types.ts';

/** What every id of a network's records is derived from. */
export interface Ids {
  seed: number;
  network: Network;
}

/** A transaction; its id is derived from (chain, index) when first read. */
export class Tx implements TxRec {
  declare source?: PrimaryChain;
  declare destination?: PrimaryChain;
  declare stake?: StakeRec;
  declare rewards?: StakeRec;
  declare subnetId?: string;
  declare nodeId?: string;
  declare blockchain?: TxRec['blockchain'];
  declare l1?: TxRec['l1'];
  declare l1Burned?: bigint;
  declare subnetPeriod?: TxRec['subnetPeriod'];
  declare evmInputs?: TxRec['evmInputs'];
  declare evmOutputs?: TxRec['evmOutputs'];
  blockHash = '';
  consumed: UtxoRec[] = [];
  emitted: UtxoRec[] = [];
  burned = 0n;
  parties: string[] = [];
  private cachedHash: string | undefined = undefined;
  constructor(
    readonly ids: Ids,
    readonly chain: PrimaryChain,
    readonly index: number,
    public type: string,
    public time: number,
    public block: number,
  ) {}
  get hash(): string {
    this.cachedHash ??= cb58Encode(this.hashBytes());
    return this.cachedHash;
  }
  hashBytes(): Buffer {
    return digest(this.ids.seed, this.ids.network, 'tx', this.chain, this.index);
  }
}

/** An output; its id is derived from (txHash, outputIndex) when first read. */
export class Utxo implements UtxoRec {
  declare stake?: { start: number; end: number };
  declare rewardType?: UtxoRec['rewardType'];
  declare spent?: Spend;
  private cachedId: string | undefined = undefined;
  constructor(
    readonly seq: number,
    /** The transaction whose id names the output (the staking transaction for a reward). */
    readonly origin: Tx,
    readonly outputIndex: number,
    readonly createdOn: PrimaryChain,
    readonly consumedOn: PrimaryChain,
    readonly addresses: string[],
    readonly amount: bigint,
    readonly createdAt: number,
    readonly block: number,
    readonly type: 'STAKE' | 'TRANSFER',
  ) {}
  get txHash(): string {
    return this.origin.hash;
  }
  get id(): string {
    this.cachedId ??= idOf(
      this.origin.ids.seed,
      this.origin.ids.network,
      'utxo',
      this.txHash,
      this.outputIndex,
    );
    return this.cachedId;
  }
}

/** An output of the faucet's genesis allocation (outside the wallet pool, never listed). */
export class FaucetUtxo extends Utxo {
  override get txHash(): string {
    return idOf(this.origin.ids.seed, this.origin.ids.network, 'genesis', this.createdOn);
  }
  override get id(): string {
    return idOf(
      this.origin.ids.seed,
      this.origin.ids.network,
      'faucet-utxo',
      this.createdOn,
      this.origin.index,
    );
  }
}

/** The spend of an output by `tx`: its hash, time and block are the transaction's. */
export class SpendOf implements Spend {
  constructor(readonly tx: TxRec) {}
  get txHash(): string {
    return this.tx.hash;
  }
  get at(): number {
    return this.tx.time;
  }
  get block(): number {
    return this.tx.block;
  }
}
