import { defineRoutes } from '../http/route.ts';

export const evmRoutes = defineRoutes([]);
