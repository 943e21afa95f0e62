import type { World } from '../world/index.ts';
import type { Network } from '../world/networks.ts';

/** What a method sees: the node's network, the world, and emulator time in whole seconds. */
export interface RpcContext {
  network: Network;
  world: World;
  now: number;
}

/**
 * A platform method: takes the decoded `params` object, returns the `result`. Throw RpcError for what
 * avalanchego reports as a handler error, RpcArgumentError for params that do not decode.
 */
export type RpcMethod = (params: Record<string, unknown>, ctx: RpcContext) => unknown;

/** An error a handler returns: code -32000, the message as the node words it, data null. */
export class RpcError extends Error {
  override name = 'RpcError';
}

/** Params that do not fit the method's argument struct; avalanchego replaces the message with its own. */
export class RpcArgumentError extends Error {
  override name = 'RpcArgumentError';
}

export const ARGUMENT_MESSAGE =
  "couldn't unmarshal an argument. Ensure arguments are valid and properly formatted. See documentation for example calls";

/** JSON-RPC error codes as gorilla/rpc's json2 codec emits them (-32601..-32603 are never sent). */
export const RPC_CODES = { parse: -32700, invalidRequest: -32600, server: -32000 } as const;

type Id = string | number | null;

export interface RpcRequest {
  id?: Id;
  method: string;
  params: Record<string, unknown>;
}

export type Envelope =
  | { jsonrpc: '2.0'; result: unknown; id: Id }
  | { jsonrpc: '2.0'; error: { code: number; message: string; data: unknown }; id: Id };

export const rpcError = (code: number, message: string, id: Id, data: unknown = null): Envelope => ({
  jsonrpc: '2.0',
  error: { code, message, data },
  id,
});

/**
 * Runs one JSON-RPC request body against a service's methods, the way avalanchego's codec does:
 * HTTP 200 always, `undefined` for a notification (no id: no body).
 */
export function handleJsonRpc(
  rawBody: string,
  methods: Readonly<Record<string, RpcMethod>>,
  ctx: RpcContext,
): Envelope | undefined {
  let request: unknown;
  try {
    request = JSON.parse(rawBody);
  } catch (error) {
    return rpcError(RPC_CODES.parse, `unexpected end of JSON input: ${(error as Error).message}`, null);
  }
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return rpcError(RPC_CODES.parse, 'json: cannot unmarshal request: expected an object', null);
  }
  const r = request as Record<string, unknown>;
  const id = (typeof r.id === 'string' || typeof r.id === 'number' ? r.id : null) as Id;
  const isNotification = !('id' in r);
  if (r.jsonrpc !== '2.0') return rpcError(RPC_CODES.invalidRequest, 'jsonrpc must be 2.0', id);
  if (typeof r.method !== 'string')
    return rpcError(RPC_CODES.server, 'rpc: service/method request ill-formed: ""', id);

  const [service, name] = r.method.split('.');
  if (!service || !name || r.method.split('.').length !== 2)
    return rpcError(RPC_CODES.server, `rpc: service/method request ill-formed: "${r.method}"`, id);
  if (service !== 'platform') return rpcError(RPC_CODES.server, `rpc: can't find service "${r.method}"`, id);
  // Go exports only upper-case methods and gorilla upper-cases the first letter; a name sent
  // upper-case already is not a method of the lowerCamel API.
  const method = /^[a-z]/.test(name) ? methods[r.method] : undefined;
  if (!method && isNotification) return undefined;
  if (!method) return rpcError(RPC_CODES.server, `rpc: can't find method "${r.method}"`, id);

  let params: Record<string, unknown>;
  if (r.params === undefined || r.params === null) params = {};
  else if (Array.isArray(r.params) && r.params.length <= 1 && isObject(r.params[0] ?? {}))
    params = (r.params[0] ?? {}) as Record<string, unknown>;
  else if (isObject(r.params)) params = r.params;
  else return isNotification ? undefined : rpcError(RPC_CODES.server, ARGUMENT_MESSAGE, id);

  try {
    const result = method(params, ctx);
    return isNotification ? undefined : { jsonrpc: '2.0', result, id };
  } catch (error) {
    if (isNotification) return undefined;
    if (error instanceof RpcArgumentError) return rpcError(RPC_CODES.server, ARGUMENT_MESSAGE, id);
    if (error instanceof RpcError) return rpcError(RPC_CODES.server, error.message, id);
    throw error;
  }
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
