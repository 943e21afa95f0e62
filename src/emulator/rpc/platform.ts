import type { RpcMethod } from './jsonrpc.ts';

/** The node's `platform.*` methods (§4.20), answered from the primary network of the world. */
export const platformMethods: Readonly<Record<string, RpcMethod>> = {};
