import { readdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { resolveExtractConfig } from '../../src/extract/config.ts';
import { defineStream, httpGet, pathOf } from '../../src/extract/stream.ts';
import { STREAMS } from '../../src/extract/streams/index.ts';
import { pricesRoute } from '../../src/reference/compute-units.ts';

/**
 * A stream writes its route once: the path is built from it, so the price (read from the route) and the
 * request cannot drift apart; and its partitions are typed, so a misspelled key does not compile. The
 * `@ts-expect-error` lines are checked by `tsc --noEmit` (CI): were they to compile, tsc would fail.
 */

it('builds the path from the route and its parameters, each encoded', () => {
  const request = httpGet({
    service: 'data',
    route: '/v1/chains/{chainId}/addresses/{address}/transactions:listErc20',
    params: { chainId: '43114', address: '0xab/cd' },
    query: {},
  });
  expect(pathOf(request)).toBe('/v1/chains/43114/addresses/0xab%2Fcd/transactions:listErc20');
  expect(() => pathOf({ ...request, params: { chainId: '43114' } })).toThrow('no value for {address}');
});

it('refuses, at compile time, a route parameter left out or misspelled, and a partition key misspelled', () => {
  const blocks = () =>
    httpGet({
      service: 'data',
      route: '/v1/chains/{chainId}/blocks',
      // @ts-expect-error: the route names {chainId}, not {chain}
      params: { chain: '43114' },
      query: {},
    });
  expect(blocks).toBeTypeOf('function');
  const stream = defineStream({
    name: 'typed',
    description: 'a stream of one partition kind',
    strategy: 'snapshot',
    schema: z.object({ id: z.string() }),
    primaryKey: ['id'],
    partitions: (p) => [{ network: p.network, collection: '0xc0' }],
    request: (_p, partition) =>
      httpGet({
        service: 'data',
        route: '/v1/chains/{chainId}/nfts/collections/{address}/tokens',
        // @ts-expect-error: the partitions have no `colection` (nor `chain`)
        params: { chainId: partition.chain, address: partition.colection },
        query: {},
      }),
    records: () => [],
  });
  expect(stream.name).toBe('typed');
});

it('every stream prices its requests by a route the compute-unit table knows', async () => {
  const { pipeline } = await resolveExtractConfig(
    { pipeline: 'pipelines/demo.json', streams: STREAMS.map((s) => s.name).join(',') },
    {},
  );
  let checked = 0;
  for (const stream of STREAMS) {
    // The route is what a request carries, whatever the partition: one request of any partition shows it.
    const partition = stream.partitions(pipeline)[0];
    if (!partition) continue;
    const request =
      stream.strategy === 'height-walk'
        ? stream.request(pipeline, partition, 1)
        : stream.strategy === 'snapshot'
          ? stream.request(pipeline, partition)
          : stream.request(pipeline, partition, undefined);
    if (request.kind !== 'http') continue;
    // The published table lacks the Metrics API's v1 routes, priced like v2 on purpose (compute-units.ts).
    const priced =
      pricesRoute(request.service, 'GET', request.route) ||
      (request.service === 'metrics' && request.route.startsWith('/v1/'));
    expect(priced, `${stream.name} ${request.route}`).toBe(true);
    expect(pathOf(request)).not.toMatch(/[{}]/);
    checked++;
  }
  expect(checked).toBeGreaterThan(15);
});

it('knows every stream file: each file of src/extract/streams defines streams that STREAMS holds', async () => {
  const folder = new URL('../../src/extract/streams/', import.meta.url);
  const files = readdirSync(folder).filter((f) => f.endsWith('.ts') && f !== 'index.ts' && f !== 'fields.ts');
  expect(files.length).toBeGreaterThan(20);
  for (const file of files) {
    const module = (await import(new URL(file, folder).href)) as Record<string, unknown>;
    const defined = Object.values(module).filter(
      (x): x is { name: string } => typeof x === 'object' && x !== null && 'strategy' in x && 'name' in x,
    );
    expect(defined.length, `${file} defines no stream`).toBeGreaterThan(0);
    for (const stream of defined)
      expect(
        STREAMS.map((s) => s.name),
        `${file}: import it in streams/index.ts`,
      ).toContain(stream.name);
  }
});
