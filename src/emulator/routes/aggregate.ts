import { defineRoutes } from '../http/route.ts';

export const aggregateRoutes = defineRoutes([]);
