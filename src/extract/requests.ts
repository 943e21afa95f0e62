import { partitionId } from '../load/index.ts';
import { computeUnitsOf } from '../reference/compute-units.ts';
import type { RateBudget } from './budget.ts';
import { FinalError } from './errors.ts';
import type { Fetcher } from './fetcher.ts';
import type { Pipeline } from './pipeline.ts';
import { type PageRequest, type Partition, pathOf, type StreamDefinition } from './stream.ts';

export interface SendPageArgs {
  request: PageRequest;
  /** Continues a Data or Metrics API listing. */
  pageToken?: string | undefined;
  pipeline: Pipeline;
  fetcher: Fetcher;
  budgetFor(origin: string): RateBudget;
  item: { stream: StreamDefinition; partition: Partition };
  signal: AbortSignal;
  /** The source's clock (ms) from the answer's `Date` header. */
  onDate?(ms: number): void;
}

/** JSON-RPC ids only need to be unique among a connection's requests in flight: one counter will do. */
let rpcId = 0;

/**
 * Turns a stream's page request into a request to its surface (a Data or Metrics API GET with its page
 * size and token, or a JSON-RPC call to the node) and sends it through the one fetcher.
 */
export async function sendPage(args: SendPageArgs): Promise<unknown> {
  const { request, pageToken, pipeline, fetcher, budgetFor, item, signal, onDate } = args;
  const at = { stream: item.stream.name, partition: partitionId(item.partition) };
  const common = { at, signal, ...(onDate ? { onDate } : {}) };
  const urls = pipeline.urls;
  if (request.kind === 'rpc') {
    const url = `${urls.node.replace(/\/+$/, '')}/ext/bc/P`;
    const id = ++rpcId;
    const body = (await fetcher({
      url,
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id, method: request.method, params: request.params }),
      cost: 0,
      ...common,
    })) as { result?: unknown; error?: { code: number; message: string } };
    if (body.error) {
      if (request.absent?.(body.error)) return null;
      throw new FinalError(
        `the node answered ${request.method} with error ${body.error.code}: ${body.error.message}`,
        { ...at, request: `POST ${url} ${request.method}` },
      );
    }
    return body.result;
  }
  const base = request.service === 'metrics' ? urls.metrics : urls.data;
  // Appended, not resolved (`new URL(path, base)` drops a base path): a proxy's prefix is kept, as the
  // node's is for `{node}/ext/bc/P`.
  const url = new URL(`${base.replace(/\/+$/, '')}${pathOf(request)}`);
  for (const [k, v] of Object.entries(request.query)) if (v !== undefined) url.searchParams.set(k, String(v));
  const pageSize = pipeline.pageSize[item.stream.name] ?? item.stream.maxPageSize;
  if (pageSize !== undefined) url.searchParams.set('pageSize', String(pageSize));
  if (pageToken) url.searchParams.set('pageToken', pageToken);
  return fetcher({
    url: url.toString(),
    cost: computeUnitsOf(request.service, 'GET', request.route),
    budget: budgetFor(`${url.origin}`),
    ...common,
  });
}
