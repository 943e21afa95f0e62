import { defineRoutes } from '../http/route.ts';

export const primaryRoutes = defineRoutes([]);
