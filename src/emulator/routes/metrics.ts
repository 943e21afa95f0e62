import { defineRoutes } from '../http/route.ts';

export const metricsRoutes = defineRoutes([]);
