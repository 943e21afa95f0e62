import type { PrimaryChain } from '../networks.ts';

export type RewardType = 'VALIDATOR' | 'DELEGATOR' | 'VALIDATOR_FEE';

/** A spend of a UTXO: the consuming transaction and when it was accepted. */
export interface Spend {
  readonly txHash: string;
  readonly at: number;
  readonly block: number;
}

/**
 * One output. Its home chain (where it is listed and spent) is `consumedOn`; an exported output has
 * `createdOn` set to the exporting chain and sits in the home chain's atomic memory until imported.
 */
export interface UtxoRec {
  /** Derived from txHash and outputIndex when first read (ids are most of a record's cost). */
  readonly id: string;
  /** Creation order across the network: the tie-breaker of every UTXO ordering. */
  seq: number;
  readonly txHash: string;
  outputIndex: number;
  createdOn: PrimaryChain;
  consumedOn: PrimaryChain;
  addresses: string[];
  amount: bigint;
  createdAt: number;
  block: number;
  type: 'STAKE' | 'TRANSFER';
  stake?: { start: number; end: number };
  rewardType?: RewardType;
  spent?: Spend;
}

/** A staking period: a validator's own stake or a delegation, and what came of it. */
export interface StakeRec {
  kind: 'validator' | 'delegator';
  nodeId: string;
  tx: TxRec;
  start: number;
  end: number;
  amount: bigint;
  /** Delegation fee in parts per million of the delegators' rewards (the validator's setting). */
  feePpm: number;
  rewardAddresses: string[];
  potentialReward: bigint;
  /**
   * A validation period's uptime, in percent, when it fell short of MIN_UPTIME_PERCENT (the period and its
   * delegations are then not rewarded); undefined for a period the node kept up (its node's uptime shows).
   */
  uptime?: string;
  /** The validator a delegation is made to. */
  validator?: StakeRec;
  /** A validation's delegations, in acceptance order. */
  delegators?: StakeRec[];
  /** The RewardValidatorTx that closed the period (at `end`). */
  rewardTx?: TxRec;
  /**
   * The reward UTXOs paid for the period. A delegation's VALIDATOR_FEE is among them, but made by its
   * validator's RewardValidatorTx at the validator's end, later than the delegation's own reward.
   */
  rewardUtxos: UtxoRec[];
  /** BLS key of a permissionless validator. */
  signer?: { publicKey: string; proofOfPossession: string };
  /** Permissioned-subnet validation riding on this primary period (AddSubnetValidatorTx). */
  subnetTx?: TxRec;
}

export interface EvmLeg {
  address: string;
  amount: bigint;
}

export interface L1ValidatorRec {
  validationId: string;
  validationIdHex: string;
  nodeId: string;
  subnetId: string;
  weight: number;
  publicKey: string;
  proofOfPossession: string;
  owner: string;
  registeredAt: number;
  /** Balance deposits: the initial one and every IncreaseL1ValidatorBalanceTx, in time order. */
  deposits: { at: number; amount: bigint; txHash: string }[];
  minNonce: number;
}

/** One transaction of the P-, X- or C-Chain (atomic side). */
export interface TxRec {
  chain: PrimaryChain;
  /** Position in its chain's listing: transactions are appended in time order. */
  index: number;
  /** Derived from (chain, index) when first read. */
  readonly hash: string;
  type: string;
  time: number;
  /** P-Chain block height, X-Chain vertex height or C-Chain block height. */
  block: number;
  blockHash: string;
  consumed: UtxoRec[];
  emitted: UtxoRec[];
  burned: bigint;
  source?: PrimaryChain;
  destination?: PrimaryChain;
  stake?: StakeRec;
  /** RewardValidatorTx: the period it closes. */
  rewards?: StakeRec;
  subnetId?: string;
  nodeId?: string;
  blockchain?: { id: string; name: string; vmId: string; evmChainId: string };
  l1?: { validators: L1ValidatorRec[]; balanceChange?: bigint; managerAddress?: string; chainId?: string };
  l1Burned?: bigint;
  subnetPeriod?: { start: number; end: number; weight: bigint };
  evmInputs?: EvmLeg[];
  evmOutputs?: EvmLeg[];
  /** Every address the transaction touches (inputs, outputs, reward owners, EVM legs). */
  parties: string[];
}

export type BlockType = 'BanffStandardBlock' | 'BanffProposalBlock' | 'BanffCommitBlock';

export interface PBlock {
  height: number;
  hash: string;
  parent: string;
  time: number;
  type: BlockType;
  txs: TxRec[];
  proposer: string;
  /** Supply after this block (initial supply plus every reward minted so far). */
  supply: bigint;
  activeL1Validators: number;
  l1AccruedFees: number;
  /** Size of the block's bytes (ledger/transactions.ts encodeBlock). */
  size: number;
}

export interface Vertex {
  index: number;
  height: number;
  hash: string;
  parents: string[];
  time: number;
  txs: TxRec[];
}
