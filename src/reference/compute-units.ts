import computeUnits from './compute-units.json' with { type: 'json' };

/**
 * The providers' published compute-unit prices and allowances (compute-units.json), read by both the
 * emulator (to charge) and the extractor (to budget): the one fact both sides must agree on.
 */
export type Service = 'data' | 'metrics' | 'rpc';
export type Tier = keyof typeof computeUnits.dataApi.tiers;
export const TIERS = Object.keys(computeUnits.dataApi.tiers) as Tier[];

export const DATA_TIERS = computeUnits.dataApi.tiers;
export const METRICS_TIER = computeUnits.metricsApi.tiers.free;

/** Routes absent from the published table: v1 metrics is priced like v2; anything else like a Medium route. */
const DEFAULT_CU: Record<Service, number> = { data: 20, metrics: 100, rpc: 0 };

const table = new Map<string, number>(
  [...computeUnits.dataApi.routes, ...computeUnits.metricsApi.routes].map((r) => [
    `${r.method} ${r.path}`,
    r.cu,
  ]),
);

/** CUs one request to a route costs, by its path template (e.g. `/v1/networks/{network}/rewards`). */
/** Whether the table prices this route (a route it does not know is charged the service's default). */
export const pricesRoute = (service: Service, method: string, pathTemplate: string): boolean =>
  service === 'rpc' || table.has(`${method} ${pathTemplate}`);

export function computeUnitsOf(service: Service, method: string, pathTemplate: string): number {
  if (service === 'rpc') return 0;
  return table.get(`${method} ${pathTemplate}`) ?? DEFAULT_CU[service];
}
