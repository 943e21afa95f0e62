import { timingSafeEqual } from 'node:crypto';
import { TIERS, type Tier } from './limits.ts';

/** An API key the emulator knows: its tier, and path prefixes it may not use (answered 403). */
export interface ApiKey {
  key: string;
  tier: Tier;
  deny: string[];
}

/** Where the CLI reads the `--keys` spec when the flag is absent, so keys need not sit on argv (ps). */
export const KEYS_ENV_VAR = 'AVALAKE_EMULATOR_KEYS';

/**
 * `KEY:TIER[:deny=/v1/prefix|/v1/other]` entries separated by commas, e.g.
 * `k1:pro,k2:free:deny=/v1/signatureAggregator`. Errors name the entry by its position and which part
 * is wrong, and quote nothing of it: a key written in the wrong place (`pro:KEY`) must not be echoed.
 */
export function parseKeysSpec(spec: string): ApiKey[] {
  if (spec.trim() === '') return [];
  return spec.split(',').map((entry, i) => {
    const where = `--keys: entry ${i + 1}`;
    const [key, tier, deny, ...rest] = entry.split(':');
    if (!key) throw new Error(`${where} has no key; expected KEY:TIER[:deny=/path|/path]`);
    if (tier === undefined || tier === '')
      throw new Error(`${where} has no tier; expected KEY:TIER with TIER one of ${TIERS.join(', ')}`);
    if (!(TIERS as string[]).includes(tier))
      throw new Error(`${where}: its tier (the second part) is not one of ${TIERS.join(', ')}`);
    if (deny !== undefined && !deny.startsWith('deny='))
      throw new Error(`${where}: its third part must be deny=/path[|/path]`);
    if (rest.length > 0)
      throw new Error(`${where} has ${3 + rest.length} parts; expected KEY:TIER[:deny=/path|/path]`);
    return { key, tier: tier as Tier, deny: deny ? deny.slice(5).split('|').filter(Boolean) : [] };
  });
}

/**
 * The configured key equal to `presented`, compared with timingSafeEqual over equal-length buffers
 * (a length mismatch is told apart at once, which reveals only the length). Never echoed: messages
 * say "the key".
 */
export function findKey(keys: readonly ApiKey[], presented: string): ApiKey | undefined {
  const given = Buffer.from(presented, 'utf8');
  let found: ApiKey | undefined;
  for (const k of keys) {
    const known = Buffer.from(k.key, 'utf8');
    if (known.length === given.length && timingSafeEqual(known, given) && !found) found = k;
  }
  return found;
}
