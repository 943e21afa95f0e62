import { TIERS, type Tier } from './limits.ts';

/** An API key the emulator knows: its tier, and path prefixes it may not use (answered 403). */
export interface ApiKey {
  key: string;
  tier: Tier;
  deny: string[];
}

/**
 * `KEY:TIER[:deny=/v1/prefix|/v1/other]` entries separated by commas, e.g.
 * `k1:pro,k2:free:deny=/v1/signatureAggregator`.
 */
export function parseKeysSpec(spec: string): ApiKey[] {
  if (spec.trim() === '') return [];
  return spec.split(',').map((entry) => {
    const [key, tier, deny] = entry.split(':');
    if (!key || !tier || !(TIERS as string[]).includes(tier)) {
      throw new Error(
        `--keys: cannot read "${entry}"; expected KEY:TIER[:deny=/path|/path] with TIER one of ${TIERS.join(', ')}`,
      );
    }
    if (deny !== undefined && !deny.startsWith('deny='))
      throw new Error(`--keys: in "${entry}", the third part must be deny=/path[|/path]`);
    return { key, tier: tier as Tier, deny: deny ? deny.slice(5).split('|').filter(Boolean) : [] };
  });
}

/** Keys are compared in constant time per candidate and never echoed back: messages say "the key". */
export function findKey(keys: readonly ApiKey[], presented: string): ApiKey | undefined {
  return keys.find((k) => k.key.length === presented.length && k.key === presented);
}
