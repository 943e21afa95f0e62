import type { World } from '../world/index.ts';
import type { Network } from '../world/networks.ts';

// The JSON-RPC codec as avalanchego runs it: gorilla/rpc v2's json2 codec (v1.2.0) behind avalanchego's
// utils/json wrapper, which refuses upper-case method names and rewords argument errors.

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

const UPPERCASE_METHOD_MESSAGE = 'method must start with a non-uppercase letter';

/** JSON-RPC error codes as gorilla/rpc's json2 codec emits them (-32601..-32603 are never sent). */
export const RPC_CODES = { parse: -32700, invalidRequest: -32600, server: -32000 } as const;

/** A request id: any JSON value, copied back as sent (gorilla keeps it as a json.RawMessage). */
type Id = unknown;

export type Envelope =
  | { jsonrpc: '2.0'; result: unknown; id: Id }
  | { jsonrpc: '2.0'; error: { code: number; message: string; data: unknown }; id: Id };

export const rpcError = (code: number, message: string, id: Id, data: unknown = null): Envelope => ({
  jsonrpc: '2.0',
  error: { code, message, data },
  id,
});

/** Go's `%q` of a string; JSON's quoting differs from it only for control characters. */
export const goQuote = (text: string): string => JSON.stringify(text);

/**
 * The body as gorilla decodes it into its `serverRequest` struct: a member that is absent or null keeps
 * its zero value, so `params` and `id` are undefined for both.
 */
interface DecodedRequest {
  jsonrpc: string;
  method: string;
  params: unknown;
  id: Id;
}

type Decoded = { request: DecodedRequest; typeError?: string } | { syntaxError: string };

/**
 * Runs one JSON-RPC request body against a service's methods, the way avalanchego's codec does:
 * HTTP 200 always; `undefined` for a notification (no id, or id null), which gets no body.
 */
export function handleJsonRpc(
  rawBody: string,
  methods: Readonly<Record<string, RpcMethod>>,
  ctx: RpcContext,
): Envelope | undefined {
  const decoded = decodeRequest(rawBody);
  if ('syntaxError' in decoded) return rpcError(RPC_CODES.parse, decoded.syntaxError, null);
  const { request, typeError } = decoded;
  // A parse error is answered even to a notification: gorilla cannot tell that one was meant.
  if (typeError) return rpcError(RPC_CODES.parse, typeError, request.id ?? null, goStructOf(request));
  const envelope = answer(request, methods, ctx);
  return request.id === undefined ? undefined : envelope;
}

function answer(
  request: DecodedRequest,
  methods: Readonly<Record<string, RpcMethod>>,
  ctx: RpcContext,
): Envelope {
  const { id } = request;
  if (request.jsonrpc !== '2.0') return rpcError(RPC_CODES.invalidRequest, 'jsonrpc must be 2.0', id);
  const found = findMethod(request.method, methods);
  if (typeof found === 'string') return rpcError(RPC_CODES.server, found, id);
  const params = argumentsOf(request.params);
  if (!params) return rpcError(RPC_CODES.server, ARGUMENT_MESSAGE, id);
  try {
    return { jsonrpc: '2.0', result: found(params, ctx), id };
  } catch (error) {
    if (error instanceof RpcArgumentError) return rpcError(RPC_CODES.server, ARGUMENT_MESSAGE, id);
    if (error instanceof RpcError) return rpcError(RPC_CODES.server, error.message, id);
    throw error;
  }
}

/**
 * Decodes the body as Go's json.Decoder fills gorilla's request struct: a member of the wrong type is
 * skipped and the first such mismatch reported, the rest still decoded; a body of `null` decodes to
 * nothing at all.
 */
function decodeRequest(rawBody: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(rawBody);
  } catch (error) {
    return { syntaxError: goSyntaxMessage(rawBody, error as Error) };
  }
  const request: DecodedRequest = { jsonrpc: '', method: '', params: undefined, id: undefined };
  if (value === null) return { request };
  if (!isObject(value))
    return {
      request,
      typeError: `json: cannot unmarshal ${goJsonType(value)} into Go value of type json2.serverRequest`,
    };
  let typeError: string | undefined;
  for (const [key, member] of Object.entries(value)) {
    if (key === 'jsonrpc' || key === 'method') {
      if (typeof member === 'string') request[key] = member;
      else if (member !== null)
        typeError ??= `json: cannot unmarshal ${goJsonType(member)} into Go struct field serverRequest.${key} of type string`;
    } else if (key === 'params' || key === 'id') {
      request[key] = member ?? undefined;
    }
  }
  return typeError === undefined ? { request } : { request, typeError };
}

/**
 * json.Decoder's words for a body that is empty or cut short. Other syntax errors keep Node's wording
 * (docs/emulator-vs-openapi.md R3).
 */
function goSyntaxMessage(rawBody: string, error: Error): string {
  if (rawBody.trim() === '') return 'EOF';
  if (/unexpected end of JSON input/i.test(error.message)) return 'unexpected EOF';
  return error.message;
}

/** The type names Go's json package uses in its unmarshal errors. */
function goJsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

/** The partly decoded request as gorilla puts it in a parse error's `data`: its Go struct, marshalled. */
const goStructOf = (request: DecodedRequest) => ({
  jsonrpc: request.jsonrpc,
  method: request.method,
  params: request.params ?? null,
  id: request.id ?? null,
});

/**
 * The method a name resolves to, or the codec's error for it. avalanchego's wrapper refuses an upper-case
 * first letter after the dot (Go exports only upper-case methods, so the wrapper upper-cases it itself);
 * gorilla then wants exactly `service.method`.
 * Note: gorilla's messages quote the name after that upper-casing ("platform.Nope"); these quote it as
 * sent (docs/emulator-vs-openapi.md R5).
 */
function findMethod(name: string, methods: Readonly<Record<string, RpcMethod>>): RpcMethod | string {
  const afterDot = name.includes('.') ? name.slice(name.indexOf('.') + 1) : '';
  if (/^\p{Lu}/u.test(afterDot)) return UPPERCASE_METHOD_MESSAGE;
  const parts = name.split('.');
  if (parts.length !== 2) return `rpc: service/method request ill-formed: ${goQuote(name)}`;
  const service = `${parts[0]}.`;
  if (!Object.keys(methods).some((m) => m.startsWith(service)))
    return `rpc: can't find service ${goQuote(name)}`;
  return Object.hasOwn(methods, name)
    ? (methods[name] as RpcMethod)
    : `rpc: can't find method ${goQuote(name)}`;
}

/**
 * `params` as gorilla decodes it into the method's argument struct: absent or null is the zero struct;
 * an object fills it; an array is read by position, its first element filling the struct and the rest
 * dropped. Anything else does not decode.
 */
function argumentsOf(params: unknown): Record<string, unknown> | undefined {
  const value = Array.isArray(params) ? params[0] : params;
  if (value === undefined || value === null) return {};
  return isObject(value) ? value : undefined;
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
