import { createFetcher } from '../extract/fetcher.ts';
import { createHttpClient, type HttpClient } from '../extract/http.ts';
import { BaseUrlSchema, DEFAULT_URLS } from '../extract/pipeline.ts';
import { decodeHex, type UnsignedWarpMessage } from '../schemas/warp.ts';
import { createNodeReader } from '../warp/node.ts';
import type { Verification } from '../warp/verify.ts';
import type { WARP_NETWORKS } from './commands.js';
import { UsageError, wholeNumberArg } from './errors.ts';
import { VERSION } from './version.js';

// What `aggregate` and `verify-message` share: networks, hex arguments, the node, and how checks print.

export type WarpNetwork = (typeof WARP_NETWORKS)[number];
export const NETWORK_IDS: Record<WarpNetwork, number> = { mainnet: 1, fuji: 5, testnet: 5 };
/** The public API nodes; the emulator serves Fuji at `{url}/fuji`. */
export const DEFAULT_NODE_URLS: Record<WarpNetwork, string> = {
  mainnet: DEFAULT_URLS.node,
  fuji: 'https://api.avax-test.network',
  testnet: 'https://api.avax-test.network',
};
/** Node reads are free and idempotent, but a person is waiting: a couple of retries, not eight. */
const NODE_RETRIES = 2;

export function hexArg(name: string, value: string): Buffer {
  const bytes = decodeHex(value.trim());
  if (!bytes || bytes.length === 0)
    throw new UsageError(
      `${name}: expected hex bytes (an optional 0x prefix is allowed), got "${value.slice(0, 20)}…"`,
    );
  return bytes;
}

export function percentArg(name: string, value: string | number | undefined): number | undefined {
  return value === undefined ? undefined : wholeNumberArg(name, value, 100, 'an integer from 0 to 100');
}

export function heightArg(name: string, value: string | number | undefined): number | undefined {
  return value === undefined
    ? undefined
    : wholeNumberArg(name, value, Number.MAX_SAFE_INTEGER, 'a non-negative integer');
}

export function userAgentHttp(options: { apiKey?: string; keyedUrl?: string } = {}): HttpClient {
  return createHttpClient({
    userAgent: `avalake/${VERSION}`,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    ...(options.keyedUrl ? { keyedOrigins: [new URL(options.keyedUrl).origin] } : {}),
  });
}

/** Loads the signing subnet's current validators from the node, for verifyWarpMessage. */
export function nodeValidators(http: HttpClient, nodeUrl: string, signingSubnetId?: string) {
  const node = createNodeReader(createFetcher({ http, retries: NODE_RETRIES }), nodeUrl);
  return async (unsigned: UnsignedWarpMessage) => {
    const subnetId = signingSubnetId ?? (await node.subnetOf(unsigned.sourceChainId));
    if (!subnetId)
      throw new Error(
        `the node at ${nodeUrl} knows no blockchain ${unsigned.sourceChainId} (platform.getBlockchains); pass --signing-subnet`,
      );
    return { subnetId, validators: await node.validatorsOf(subnetId) };
  };
}

export function checkLines(v: Verification): string[] {
  return v.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
}

/** A base URL flag, held to the pipeline's rule (http(s), an optional path prefix, no query or fragment). */
export function checkUrl(name: string, value: string): string {
  const checked = BaseUrlSchema.safeParse(value);
  if (checked.success) return value;
  throw new UsageError(`${name}: expected ${checked.error.issues[0]?.message}, got "${value}"`);
}
