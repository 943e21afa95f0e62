import { defineRoutes, type RequestContext, rawReply } from '../http/route.ts';
import { handleJsonRpc } from '../rpc/jsonrpc.ts';
import { platformMethods } from '../rpc/platform.ts';
import type { Network } from '../world/networks.ts';

/**
 * The node's P-Chain endpoint. A node serves one network: `/ext/bc/P` is a mainnet node;
 * `/fuji/ext/bc/P` (or `/testnet/ext/bc/P`) is a Fuji node on the same port, so a pipeline's
 * node URL for Fuji is `http://HOST:PORT/fuji`.
 */
const nodeOf = (network: Network) => (ctx: RequestContext) => {
  // gorilla/rpc answers an unknown content type with 415 and plain text, before any JSON-RPC.
  const contentType = (ctx.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json')
    return rawReply(
      415,
      `rpc: unrecognized Content-Type: ${contentType ?? ''}\n`,
      'text/plain; charset=utf-8',
    );
  const envelope = handleJsonRpc(ctx.rawBody, platformMethods, { network, world: ctx.world, now: ctx.now });
  return rawReply(200, envelope ?? '');
};

export const rpcRoutes = defineRoutes([
  { service: 'rpc', method: 'POST', path: '/ext/bc/P', handle: nodeOf('mainnet') },
  { service: 'rpc', method: 'POST', path: '/fuji/ext/bc/P', handle: nodeOf('fuji') },
  { service: 'rpc', method: 'POST', path: '/testnet/ext/bc/P', handle: nodeOf('fuji') },
]);
