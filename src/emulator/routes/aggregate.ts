import { decodeHex, parseWarpMessageInput, type UnsignedWarpMessage } from '../../schemas/warp.ts';
import { DEFAULT_QUORUM_PERCENTAGE } from '../../schemas/warp-validators.ts';
import { cb58Decode, cb58Encode } from '../encoding.ts';
import { badRequest } from '../http/errors.ts';
import { defineRoutes, type RequestContext } from '../http/route.ts';
import { aggregateSignatures } from '../warp/aggregate.ts';
import { evmChainsOf } from '../world/chains.ts';
import {
  NETWORK_ID,
  type Network,
  PRIMARY_CHAINS,
  PRIMARY_SUBNET_ID,
  parseNetwork,
} from '../world/networks.ts';

/** A checked §4.19 request, with the defaults of its table applied. */
export interface AggregationRequest {
  network: Network;
  /**
   * The unsigned Warp message to sign: from `message` (raw or SendWarpMessage log data), or from a
   * `justification` that carries one when `message` is absent.
   */
  message: UnsignedWarpMessage;
  justification?: Buffer;
  signingSubnetId: string;
  quorumPercentage: number;
  quorumPercentageBuffer: number;
  pChainHeight: number;
}

/** Every rule of the §4.19 body table, each failure a 400 naming the field. */
export function parseAggregationRequest(ctx: RequestContext): AggregationRequest {
  const network = parseNetwork(ctx.params.network ?? '');
  let body: unknown;
  try {
    body = JSON.parse(ctx.rawBody === '' ? 'null' : ctx.rawBody);
  } catch {
    throw badRequest('The request body must be a JSON object');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('The request body must be a JSON object with message or justification');
  const b = body as Record<string, unknown>;

  const errors: string[] = [];
  const hexField = (name: string): Buffer | undefined => {
    const v = b[name];
    if (v === undefined || v === null) return undefined;
    const bytes = typeof v === 'string' ? decodeHex(v) : undefined;
    if (!bytes || bytes.length === 0)
      errors.push(`${name} must be a hex string (an optional 0x prefix is allowed)`);
    return bytes;
  };
  const percentage = (name: string, fallback: number): number => {
    const v = b[name];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 100) {
      errors.push(`${name} must be an integer from 0 to 100`);
      return fallback;
    }
    return v;
  };

  const messageBytes = hexField('message');
  const justification = hexField('justification');
  if (b.message == null && b.justification == null)
    errors.push('Either message or justification must be provided');
  const quorumPercentage = percentage('quorumPercentage', DEFAULT_QUORUM_PERCENTAGE);
  const quorumPercentageBuffer = percentage('quorumPercentageBuffer', 0);
  if (quorumPercentage + quorumPercentageBuffer > 100)
    errors.push('quorumPercentage + quorumPercentageBuffer must not be greater than 100');
  let pChainHeight = 0;
  if (b.pChainHeight !== undefined && b.pChainHeight !== null) {
    if (typeof b.pChainHeight !== 'number' || !Number.isSafeInteger(b.pChainHeight) || b.pChainHeight < 0)
      errors.push('pChainHeight must be a non-negative integer');
    else pChainHeight = b.pChainHeight;
  }
  let signingSubnetId: string | undefined;
  if (b.signingSubnetId !== undefined && b.signingSubnetId !== null) {
    signingSubnetId = parseSubnetId(b.signingSubnetId);
    if (!signingSubnetId) errors.push('signingSubnetId must be a subnet id in hex (32 bytes) or cb58');
  }

  // Note: validators of this emulator need no justification, so beside a message it is checked and
  // ignored; alone, it must carry the unsigned message itself (the one form the emulator can sign).
  let message: UnsignedWarpMessage | undefined;
  const [field, bytes] = messageBytes ? ['message', messageBytes] : ['justification', justification];
  if (bytes) {
    const parsed = parseWarpMessageInput(bytes);
    if (typeof parsed === 'string')
      errors.push(
        field === 'message'
          ? `message ${parsed}`
          : `justification without a message must hold the unsigned Warp message to sign; it ${parsed}`,
      );
    else if (parsed.networkId !== NETWORK_ID[network])
      errors.push(
        `${field} is for network id ${parsed.networkId}, but ${network} is network id ${NETWORK_ID[network]}`,
      );
    else message = parsed;
  }
  if (errors.length > 0 || !message) throw badRequest(...errors);

  if (!signingSubnetId) {
    const source = message.sourceChainId;
    signingSubnetId = subnetOfBlockchain(ctx.world.seed, network, source);
    if (!signingSubnetId)
      throw badRequest(
        `signingSubnetId: the source chain ${source} is not a blockchain of ${network}; pass signingSubnetId`,
      );
  }
  return {
    network,
    message,
    ...(justification ? { justification } : {}),
    signingSubnetId,
    quorumPercentage,
    quorumPercentageBuffer,
    pChainHeight,
  };
}

function parseSubnetId(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const hex = decodeHex(value);
  if (hex?.length === 32) return cb58Encode(hex);
  return cb58Decode(value)?.length === 32 ? value : undefined;
}

function subnetOfBlockchain(seed: number, network: Network, blockchainId: string): string | undefined {
  const primary = PRIMARY_CHAINS[network];
  if (([primary.p, primary.x, primary.c] as string[]).includes(blockchainId)) return PRIMARY_SUBNET_ID;
  return evmChainsOf(seed, network).find((c) => c.blockchainId === blockchainId)?.subnetId;
}

export const aggregateRoutes = defineRoutes([
  {
    service: 'data',
    method: 'POST',
    path: '/v1/signatureAggregator/{network}/aggregateSignatures',
    status: 201,
    handle(ctx) {
      const request = parseAggregationRequest(ctx);
      const { signedMessage } = aggregateSignatures({ world: ctx.world, now: ctx.now, ...request });
      // Hex without 0x, as the OpenAPI example and icm-services return it.
      return { signedMessage: signedMessage.toString('hex') };
    },
  },
]);
