import type { Route } from '../http/route.ts';
import { aggregateRoutes } from './aggregate.ts';
import { evmRoutes } from './evm.ts';
import { metricsRoutes } from './metrics.ts';
import { primaryRoutes } from './primary.ts';
import { rpcRoutes } from './rpc.ts';

/** Every route of the three surfaces, served from one port. */
export const allRoutes: readonly Route[] = [
  ...primaryRoutes,
  ...evmRoutes,
  ...aggregateRoutes,
  ...metricsRoutes,
  ...rpcRoutes,
];
