import { z } from 'zod';
import { lake } from '../../schemas/lake.ts';
import { defineStream, httpGet } from '../stream.ts';
import { isNamed, listField, MAX_PAGE_SIZE } from './fields.ts';

/**
 * §4.8 X-Chain vertices, newest first. The listing takes no bound, so a run walks down to the newest
 * vertex of the last run. Vertices stopped with the X-Chain's move to linear blocks (Cortina); the
 * listing holds its DAG era.
 */
export const xChainVertices = defineStream({
  name: 'x_chain_vertices',
  description: 'X-Chain DAG vertices, newest first',
  inputs: 'the stream name in streams',
  strategy: 'newest-first',
  schema: z.object({
    vertexHash: z.string(),
    parentHashes: z.array(z.string()),
    vertexHeight: lake.int64(),
    vertexIndex: lake.int64(),
    vertexTimestamp: lake.timestamp(),
    txCount: lake.int32(),
    transactions: z.array(z.string()),
    vertexSizeBytes: lake.int64(),
  }),
  primaryKey: ['vertexHash'],
  timeOf: (vertex) => Number(vertex.vertexTimestamp),
  partitions: (p) => (isNamed(p, 'x_chain_vertices') ? [{ network: p.network }] : []),
  request: (p) =>
    httpGet({
      service: 'data',
      route: '/v1/networks/{network}/blockchains/{blockchainId}/vertices',
      params: { network: p.network, blockchainId: 'x-chain' },
      query: {},
    }),
  records: listField('vertices'),
  maxPageSize: MAX_PAGE_SIZE,
});
