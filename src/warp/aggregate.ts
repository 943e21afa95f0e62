import { createFetcher } from '../extract/fetcher.ts';
import type { HttpClient } from '../extract/http.ts';
import { computeUnitsOf } from '../reference/compute-units.ts';
import { decodeHex } from '../schemas/warp.ts';

/** The §4.19 body, camelCase as the Data API takes it; unset fields take the service's defaults. */
export interface AggregationBody {
  message?: string;
  justification?: string;
  signingSubnetId?: string;
  quorumPercentage?: number;
  quorumPercentageBuffer?: number;
  pChainHeight?: number;
}

/**
 * Few retries: a failed aggregation (503: validators unreachable) rarely heals within seconds, and the
 * user is waiting at a terminal.
 */
export const AGGREGATION_RETRIES = 2;
const AGGREGATION_PATH = '/v1/signatureAggregator/{network}/aggregateSignatures';

/** POSTs an aggregation request and returns the signed message bytes. Errors keep the server's reason. */
export async function requestAggregation(args: {
  http: HttpClient;
  baseUrl: string;
  network: string;
  body: AggregationBody;
  retries?: number;
}): Promise<Buffer> {
  // The shared fetcher words 5xx as "server error 503"; keep the ErrorBody text to say why.
  let lastFailure: string | undefined;
  const http: HttpClient = {
    async send(request) {
      const answer = await args.http.send(request);
      if (answer.status >= 300) lastFailure = answer.text;
      return answer;
    },
    close: () => args.http.close(),
  };
  const fetcher = createFetcher({ http, retries: args.retries ?? AGGREGATION_RETRIES });
  const path = AGGREGATION_PATH.replace('{network}', encodeURIComponent(args.network));
  const url = `${args.baseUrl.replace(/\/+$/, '')}${path}`;
  let answer: unknown;
  try {
    answer = await fetcher({
      url,
      method: 'POST',
      body: JSON.stringify(args.body),
      cost: computeUnitsOf('data', 'POST', AGGREGATION_PATH),
      at: { stream: 'aggregateSignatures' },
    });
  } catch (error) {
    const reason = reasonOf(lastFailure);
    const message = (error as Error).message;
    throw new Error(reason && !message.includes(reason) ? `${message}: ${reason}` : message, {
      cause: error,
    });
  }
  const hex = (answer as { signedMessage?: unknown }).signedMessage;
  const bytes = typeof hex === 'string' ? decodeHex(hex) : undefined;
  if (!bytes) throw new Error(`${url} answered without a hex signedMessage: ${JSON.stringify(answer)}`);
  return bytes;
}

function reasonOf(text: string | undefined): string | undefined {
  if (!text) return undefined;
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (Array.isArray(body.message)) return body.message.join('; ');
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not an ErrorBody: the raw text, shortened, says more than nothing.
  }
  return text.trim().slice(0, 300) || undefined;
}
