import type { Fetcher } from '../extract/fetcher.ts';
import type { WarpValidatorInput } from '../schemas/warp-validators.ts';

// The validator set a Warp signature is checked against, read from a node's P-Chain RPC (§4.20).

/** The P-Chain's id, which is also the primary network's subnet id. */
export const PRIMARY_SUBNET_ID = '11111111111111111111111111111111LpoYY';

export interface SubnetValidators {
  subnetId: string;
  validators: WarpValidatorInput[];
}

interface RpcValidator {
  nodeID: string;
  weight: string;
  delegatorWeight?: string;
  /** L1 validators carry the key itself. */
  publicKey?: string;
  /** Primary-network validators registered with a key. */
  signer?: { publicKey: string };
}

export interface NodeReader {
  /** The subnet that validates `blockchainId` (the P-, X- and C-Chain: the primary network). */
  subnetOf(blockchainId: string): Promise<string | undefined>;
  /** Current validators of `subnetId` with the weights and BLS keys Warp uses. */
  validatorsOf(subnetId: string): Promise<WarpValidatorInput[]>;
}

/** JSON-RPC calls to `{nodeUrl}/ext/bc/P`; a JSON-RPC error becomes an Error with the node's message. */
export function createNodeReader(fetcher: Fetcher, nodeUrl: string): NodeReader {
  const url = `${nodeUrl.replace(/\/+$/, '')}/ext/bc/P`;
  let id = 0;
  const call = async <T>(method: string, params: Record<string, unknown>): Promise<T> => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params });
    const answer = (await fetcher({ url, method: 'POST', body, cost: 0, at: { stream: method } })) as {
      result?: T;
      error?: { message?: string };
    };
    if (answer.error || answer.result === undefined)
      throw new Error(`${method} at ${url} failed: ${answer.error?.message ?? 'no result'}`);
    return answer.result;
  };
  const current = (params: Record<string, unknown>) =>
    call<{ validators: RpcValidator[] }>('platform.getCurrentValidators', params).then((r) => r.validators);

  return {
    async subnetOf(blockchainId) {
      if (blockchainId === PRIMARY_SUBNET_ID) return PRIMARY_SUBNET_ID;
      const { blockchains } = await call<{ blockchains: { id: string; subnetID: string }[] }>(
        'platform.getBlockchains',
        {},
      );
      return blockchains.find((b) => b.id === blockchainId)?.subnetID;
    },
    async validatorsOf(subnetId) {
      if (subnetId === PRIMARY_SUBNET_ID)
        // Warp weighs a primary-network validator with the stake delegated to it.
        return (await current({})).map((v) => ({
          nodeId: v.nodeID,
          weight: BigInt(v.weight) + BigInt(v.delegatorWeight ?? '0'),
          ...(v.signer ? { publicKey: v.signer.publicKey } : {}),
        }));
      const validators = await current({ subnetID: subnetId });
      // A permissioned subnet's validators sign with the key of their primary-network registration.
      const missing = validators.filter((v) => !v.publicKey).map((v) => v.nodeID);
      const primaryKeys = new Map<string, string>();
      if (missing.length > 0)
        for (const v of await current({ nodeIDs: missing }))
          if (v.signer) primaryKeys.set(v.nodeID, v.signer.publicKey);
      return validators.map((v) => {
        const publicKey = v.publicKey ?? primaryKeys.get(v.nodeID);
        return { nodeId: v.nodeID, weight: BigInt(v.weight), ...(publicKey ? { publicKey } : {}) };
      });
    },
  };
}
