import { createHash } from 'node:crypto';
import {
  ADDRESS_HRP,
  base58Decode,
  bech32AddressOf,
  bech32Decode,
  cb58Decode,
  isNodeId,
} from '../encoding.ts';
import { evmChainsOf } from '../world/chains.ts';
import { type Network, PRIMARY_CHAINS, PRIMARY_SUBNET_ID, type PrimaryChain } from '../world/networks.ts';
import {
  encodeBlock,
  type PBlock,
  type PrimaryNetwork,
  type StakeRec,
  type TxRec,
} from '../world/primary/index.ts';
import { goQuote, RpcArgumentError, type RpcContext, RpcError, type RpcMethod } from './jsonrpc.ts';

// platform.* as avalanchego answers them (pchain-rpc-and-warp.md): uint64 values as strings, optional
// fields omitted, errors worded as the node words them. Everything is read from the same primary network
// the Data API routes answer from, at the request's 'now'.

const primaryOf = (ctx: RpcContext): PrimaryNetwork => ctx.world.primary(ctx.network);

/** An ids.ID param: cb58 of 32 bytes, or the argument does not unmarshal. */
function idParam(value: unknown): string {
  if (typeof value !== 'string' || cb58Decode(value)?.length !== 32) throw new RpcArgumentError('bad id');
  return value;
}

const BASE58_DIGIT = /^[1-9A-HJ-NP-Za-km-z]$/;

/** mr-tron/base58's complaint about a character outside its alphabet (Go quotes it as a rune, `%q`). */
const base58DigitError = (ch: string): string =>
  (ch.codePointAt(0) as number) > 127
    ? 'High-bit set on invalid digit'
    : `Invalid base58 digit ('${ch === "'" || ch === '\\' ? `\\${ch}` : ch}')`;

/**
 * Why `ids.FromString` refuses a string, in the words of avalanchego's cb58 and hashing packages;
 * undefined when it is an id.
 */
function idParseError(text: string): string | undefined {
  const digit = [...text].find((ch) => !BASE58_DIGIT.test(ch));
  if (digit !== undefined) return `base58 decoding error: ${base58DigitError(digit)}`;
  if ((base58Decode(text)?.length ?? 0) < 4) return 'input string is smaller than the checksum size';
  const bytes = cb58Decode(text);
  if (!bytes) return 'invalid input checksum';
  if (bytes.length !== 32) return `invalid hash length: expected 32 bytes but got ${bytes.length}`;
  return undefined;
}

/**
 * The primary chain a name stands for in the node's chain manager: each chain's id and the aliases
 * avalanchego's genesis gives it (genesis/aliases.go). The node runs no other chain.
 */
function runningChainOf(network: Network, name: string): PrimaryChain | undefined {
  const ids = PRIMARY_CHAINS[network];
  const aliases = new Map<string, PrimaryChain>([
    ['P', 'p'],
    ['platform', 'p'],
    ['X', 'x'],
    ['avm', 'x'],
    ['C', 'c'],
    ['evm', 'c'],
    [ids.p, 'p'],
    [ids.x, 'x'],
    [ids.c, 'c'],
  ]);
  return aliases.get(name);
}

/**
 * An address of `platform.getBalance` as avalanchego's service parser reads it
 * (vms/components/avax/addresses.go): a cb58 short id, or `<chain>-<bech32>` where the chain is this
 * one by id or alias and the hrp the network's. Returns the bare bech32 form the world keys balances by.
 */
function pChainAddressOf(ctx: RpcContext, text: string): string {
  const refuse = (why: string) => new RpcError(`couldn't parse address ${goQuote(text)}: ${why}`);
  const shortId = cb58Decode(text);
  if (shortId?.length === 20) return bech32AddressOf(ctx.network, shortId);
  const separator = text.indexOf('-');
  if (separator < 0) throw refuse('no separator found in address');
  const alias = text.slice(0, separator);
  const decoded = bech32Decode(text.slice(separator + 1));
  // Note: btcutil words each bech32 fault its own way (length, charset, checksum); see
  // docs/emulator-vs-openapi.md R4.
  if (!decoded) throw refuse('invalid bech32 string');
  const chain = runningChainOf(ctx.network, alias);
  if (!chain) throw refuse(`there is no ID with alias ${alias}`);
  const hrp = ADDRESS_HRP[ctx.network];
  if (decoded.hrp !== hrp) throw refuse(`expected hrp ${goQuote(hrp)} but got ${goQuote(decoded.hrp)}`);
  if (decoded.bytes.length !== 20)
    throw refuse(`invalid hash length: expected 20 bytes but got ${decoded.bytes.length}`);
  const ids = PRIMARY_CHAINS[ctx.network];
  if (chain !== 'p')
    throw refuse(`mismatched chainIDs: expected ${goQuote(ids.p)} but got ${goQuote(ids[chain])}`);
  return bech32AddressOf(ctx.network, decoded.bytes);
}

/** A uint64 param, sent as a JSON number or a decimal string. */
function uint64Param(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  throw new RpcArgumentError('bad uint64');
}

const ENCODINGS = ['hex', 'hexc', 'hexnc', 'json'] as const;
function encodingParam(value: unknown): (typeof ENCODINGS)[number] {
  if (value === undefined || value === '') return 'hex';
  if (typeof value === 'string' && (ENCODINGS as readonly string[]).includes(value))
    return value as (typeof ENCODINGS)[number];
  throw new RpcArgumentError('bad encoding');
}

const owners = (addresses: readonly string[], hrpPrefix = 'P-') => ({
  locktime: '0',
  threshold: '1',
  addresses: addresses.map((a) => `${hrpPrefix}${a}`),
});

/** The unsigned transaction of a P-Chain tx as the node's json encoding shows it. */
function unsignedTx(ctx: RpcContext, tx: TxRec): Record<string, unknown> {
  const ids = PRIMARY_CHAINS[ctx.network];
  const networkID = ctx.network === 'mainnet' ? 1 : 5;
  const output = (u: { addresses: string[]; amount: bigint }) => ({
    assetID: ids.avaxAssetId,
    fxID: 'spdxUxVJQbX85MGxMHbKw1sHxMnSqJ3QBzDyDYEP3h6TLuxqQ',
    output: {
      addresses: u.addresses.map((a) => `P-${a}`),
      amount: Number(u.amount),
      locktime: 0,
      threshold: 1,
    },
  });
  const local = tx.emitted.filter((u) => u.consumedOn === 'p' && u.type === 'TRANSFER' && !u.rewardType);
  const base: Record<string, unknown> = {
    networkID,
    blockchainID: ids.p,
    outputs: local.map(output),
    inputs: tx.consumed.map((u) => ({
      txID: u.txHash,
      outputIndex: u.outputIndex,
      assetID: ids.avaxAssetId,
      fxID: 'spdxUxVJQbX85MGxMHbKw1sHxMnSqJ3QBzDyDYEP3h6TLuxqQ',
      input: { amount: Number(u.amount), signatureIndices: [0] },
    })),
    memo: '0x',
  };
  if (tx.type === 'RewardValidatorTx') return { txID: tx.rewards?.tx.hash };
  if (tx.type === 'ExportTx')
    return {
      ...base,
      destinationChain: ids[tx.destination ?? 'x'],
      exportedOutputs: tx.emitted.filter((u) => u.consumedOn !== 'p').map(output),
    };
  if (tx.type === 'ImportTx')
    return { ...base, sourceChain: ids[tx.source ?? 'x'], importedInputs: base.inputs, inputs: [] };
  if (tx.stake)
    return {
      ...base,
      validator: {
        nodeID: tx.stake.nodeId,
        start: tx.stake.start,
        end: tx.stake.end,
        weight: Number(tx.stake.amount),
      },
      ...(tx.stake.signer ? { subnetID: PRIMARY_SUBNET_ID, signer: tx.stake.signer } : {}),
      stake: tx.emitted.filter((u) => u.type === 'STAKE').map(output),
      rewardsOwner: { addresses: tx.stake.rewardAddresses.map((a) => `P-${a}`), locktime: 0, threshold: 1 },
      ...(tx.stake.kind === 'validator' ? { shares: tx.stake.feePpm } : {}),
    };
  if (tx.subnetPeriod)
    return {
      ...base,
      validator: {
        nodeID: tx.nodeId,
        start: tx.subnetPeriod.start,
        end: tx.subnetPeriod.end,
        weight: Number(tx.subnetPeriod.weight),
      },
      subnetID: tx.subnetId,
    };
  if (tx.blockchain)
    return {
      ...base,
      subnetID: tx.subnetId,
      chainName: tx.blockchain.name,
      vmID: tx.blockchain.vmId,
      fxIDs: [],
      genesisData: '0x',
    };
  if (tx.subnetId) return { ...base, subnetID: tx.subnetId };
  return base;
}

function blockResult(ctx: RpcContext, block: PBlock, encoding: (typeof ENCODINGS)[number]) {
  if (encoding === 'json')
    return {
      block: {
        parentID: block.parent,
        height: block.height,
        time: block.time,
        txs: block.txs.map((tx) => ({
          unsignedTx: unsignedTx(ctx, tx),
          credentials:
            tx.type === 'RewardValidatorTx'
              ? []
              : [
                  {
                    signatures: [`0x${createHash('sha256').update(tx.hash).digest('hex')}${'00'.repeat(33)}`],
                  },
                ],
          id: tx.hash,
        })),
        id: block.hash,
      },
      encoding,
    };
  const bytes = encodeBlock(block.type, block.parent, block.height, block.time, block.txs);
  const checksum =
    encoding === 'hexnc' ? '' : createHash('sha256').update(bytes).digest().subarray(-4).toString('hex');
  return { block: `0x${bytes.toString('hex')}${checksum}`, encoding };
}

function primaryValidator(
  s: StakeRec,
  current: readonly StakeRec[],
  withDelegators: boolean,
  node?: { uptime: string },
) {
  return {
    txID: s.tx.hash,
    startTime: String(s.start),
    endTime: String(s.end),
    weight: String(s.amount),
    nodeID: s.nodeId,
    validationRewardOwner: owners(s.rewardAddresses),
    delegationRewardOwner: owners(s.rewardAddresses),
    potentialReward: String(s.potentialReward),
    accruedDelegateeReward: '0',
    delegationFee: (s.feePpm / 10_000).toFixed(4),
    // A period cut short of the uptime it needed shows its own; the rest show their node's.
    uptime: s.uptime ?? node?.uptime ?? '100.0000',
    connected: true,
    ...(s.signer ? { signer: s.signer } : {}),
    delegatorCount: String(current.length),
    delegatorWeight: String(current.reduce((sum, d) => sum + d.amount, 0n)),
    ...(withDelegators
      ? {
          delegators: current.map((d) => ({
            txID: d.tx.hash,
            startTime: String(d.start),
            endTime: String(d.end),
            weight: String(d.amount),
            nodeID: d.nodeId,
            rewardOwner: owners(d.rewardAddresses),
            potentialReward: String(d.potentialReward),
          })),
        }
      : {}),
  };
}

/** The node's `platform.*` methods (§4.20), answered from the primary network of the world. */
export const platformMethods: Readonly<Record<string, RpcMethod>> = {
  'platform.getHeight': (_params, ctx) => ({ height: String(primaryOf(ctx).blockCount(ctx.now) - 1) }),

  'platform.getBalance': (params, ctx) => {
    const raw = params.addresses;
    if (raw !== undefined && (!Array.isArray(raw) || raw.some((a) => typeof a !== 'string')))
      throw new RpcArgumentError('addresses');
    const list = (raw ?? []) as string[];
    if (list.length === 0) throw new RpcError('no addresses provided');
    const addresses = list.map((a) => pChainAddressOf(ctx, a));
    // The node counts its UTXO set: the outputs whose utxoState is unlockedUnstaked (a stake sits in its
    // staking transaction until its period ends, an exported output in shared memory until imported).
    const { unlockedUnstaked } = primaryOf(ctx).balances('p', addresses, ctx.now);
    const asset = PRIMARY_CHAINS[ctx.network].avaxAssetId;
    const unlocked = String(unlockedUnstaked.amount);
    const map = (v: string) => (v === '0' ? {} : { [asset]: v });
    return {
      balance: unlocked,
      unlocked,
      lockedStakeable: '0',
      lockedNotStakeable: '0',
      balances: map(unlocked),
      unlockeds: map(unlocked),
      lockedStakeables: {},
      lockedNotStakeables: {},
      utxoIDs: unlockedUnstaked.utxos.map((u) => ({ txID: u.txHash, outputIndex: u.outputIndex })),
    };
  },

  'platform.getBlock': (params, ctx) => {
    const id = idParam(params.blockID);
    const encoding = encodingParam(params.encoding);
    const block = primaryOf(ctx).blockByHash(id, ctx.now);
    if (!block) throw new RpcError(`couldn't get block with id ${id}: not found`);
    return blockResult(ctx, block, encoding);
  },

  'platform.getBlockByHeight': (params, ctx) => {
    const height = uint64Param(params.height);
    const encoding = encodingParam(params.encoding);
    const block = primaryOf(ctx).block(height, ctx.now);
    if (!block) throw new RpcError(`couldn't get block at height ${height}: not found`);
    return blockResult(ctx, block, encoding);
  },

  'platform.getBlockchains': (_params, ctx) => {
    const ids = PRIMARY_CHAINS[ctx.network];
    const primary = primaryOf(ctx);
    const l1s = evmChainsOf(ctx.world.seed, ctx.network).filter(
      (c) => c.validatorSet !== 'primary' && primary.createdAt(c.blockchainId, ctx.now) !== undefined,
    );
    return {
      blockchains: [
        {
          id: ids.x,
          name: 'X-Chain',
          subnetID: PRIMARY_SUBNET_ID,
          vmID: 'jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq',
        },
        {
          id: ids.c,
          name: 'C-Chain',
          subnetID: PRIMARY_SUBNET_ID,
          vmID: 'mgj786NP7uDwBCcq6YwThhaN8FLyybkCa4zBWTQbNgmK6k9A6',
        },
        ...l1s.map((c) => ({ id: c.blockchainId, name: c.name, subnetID: c.subnetId, vmID: c.vmId })),
      ],
    };
  },

  'platform.getBlockchainStatus': (params, ctx) => {
    if (params.blockchainID !== undefined && typeof params.blockchainID !== 'string')
      throw new RpcArgumentError('blockchainID');
    const id = (params.blockchainID ?? '') as string;
    if (id === '') throw new RpcError("argument 'blockchainID' not given");
    // This node runs and validates the primary network only: its chains answer by id or alias. The L1
    // chains exist on its P-Chain, but it does not run them, so it looks them up by id alone.
    if (runningChainOf(ctx.network, id)) return { status: 'Validating' };
    const refused = idParseError(id);
    if (refused) throw new RpcError(`problem parsing blockchainID ${goQuote(id)}: ${refused}`);
    const known = evmChainsOf(ctx.world.seed, ctx.network).some((c) => c.blockchainId === id);
    return { status: known && primaryOf(ctx).createdAt(id, ctx.now) !== undefined ? 'Created' : 'Unknown' };
  },

  'platform.getCurrentSupply': (params, ctx) => {
    const subnetID = idParam(params.subnetID ?? PRIMARY_SUBNET_ID);
    // Only the primary network and permissionless subnets (TransformSubnetTx) have a supply; avalanchego's
    // state answers database.ErrNotFound for any other id, and this world has no permissionless subnet.
    if (subnetID !== PRIMARY_SUBNET_ID) throw new RpcError('fetching current supply failed: not found');
    const primary = primaryOf(ctx);
    const last = primary.block(primary.blockCount(ctx.now) - 1, ctx.now) as PBlock;
    return { supply: String(last.supply), height: String(last.height) };
  },

  'platform.getCurrentValidators': (params, ctx) => {
    const subnetID =
      params.subnetID === undefined || params.subnetID === '' ? PRIMARY_SUBNET_ID : idParam(params.subnetID);
    const rawIds = params.nodeIDs ?? [];
    if (!Array.isArray(rawIds) || rawIds.some((n) => typeof n !== 'string' || !isNodeId(n)))
      throw new RpcArgumentError('nodeIDs');
    const wanted = new Set(rawIds as string[]);
    const pick = (nodeId: string) => wanted.size === 0 || wanted.has(nodeId);
    const primary = primaryOf(ctx);
    const now = ctx.now;
    const chains = evmChainsOf(ctx.world.seed, ctx.network);
    const l1 = chains.find((c) => c.validatorSet === 'l1');
    const permissioned = chains.find((c) => c.validatorSet === 'permissioned');
    if (subnetID === PRIMARY_SUBNET_ID) {
      const nodes = new Map(primary.nodes().map((n) => [n.nodeId, n]));
      return {
        validators: primary
          .validators(now)
          .filter((s) => pick(s.nodeId))
          .map((s) =>
            primaryValidator(s, primary.currentDelegations(s, now), wanted.size === 1, nodes.get(s.nodeId)),
          ),
      };
    }
    if (subnetID === l1?.subnetId)
      return {
        validators: primary
          .l1Validators(now)
          .filter(({ validator, balance }) => balance > 0n && pick(validator.nodeId))
          .map(({ validator: v, balance }) => ({
            validationID: v.validationId,
            nodeID: v.nodeId,
            publicKey: v.publicKey,
            remainingBalanceOwner: owners([v.owner]),
            deactivationOwner: owners([v.owner]),
            startTime: String(v.registeredAt),
            weight: String(v.weight),
            minNonce: String(v.minNonce),
            balance: String(balance),
          })),
      };
    if (subnetID === permissioned?.subnetId)
      return {
        validators: primary
          .subnetValidators(subnetID, now)
          .filter((tx) => pick(tx.nodeId as string))
          .map((tx) => ({
            txID: tx.hash,
            startTime: String(tx.subnetPeriod?.start),
            endTime: String(tx.subnetPeriod?.end),
            weight: String(tx.subnetPeriod?.weight),
            nodeID: tx.nodeId as string,
          })),
      };
    return { validators: [] };
  },
};
