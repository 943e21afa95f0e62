import { unit } from './rng.ts';

/** What can go wrong with one request. */
export type Fault =
  | { kind: 'status'; status: number; retryAfterSeconds?: number }
  | { kind: 'reset' }
  | { kind: 'truncate' }
  | { kind: 'slow'; delayMs: number };

interface FaultRule {
  probability: number;
  fault: Fault;
}

const STATUS_FAULTS = new Set([429, 500, 502, 503, 504]);
const DEFAULT_SLOW_MS = 3000;

/**
 * `429=0.1,500=0.02,502=0.01,503=0.02,504=0.01,reset=0.01,truncate=0.01,slow=0.02:3000`: each entry is a
 * kind and its probability per request. `slow` takes the delay in ms after a colon; `429` takes the
 * `retry-after` seconds after a colon (default 1).
 *
 * Note: an injected 429 models a proxy or load balancer in front of the service, not the service's own
 * limiter: it carries `retry-after` but no `ratelimit-*` headers and spends no compute units. The
 * limiter's own 429 (limits.ts) carries all four, so a client can tell the two apart and must cope
 * with both.
 */
export function parseFaultSpec(spec: string): FaultRule[] {
  if (spec.trim() === '' || spec === 'none') return [];
  const rules = spec.split(',').map((entry): FaultRule => {
    const m = /^\s*(\d{3}|reset|truncate|slow)=(\d*\.?\d+)(?::(\d+))?\s*$/.exec(entry);
    if (!m) {
      throw new Error(
        `--faults: cannot read "${entry}"; expected KIND=PROBABILITY[:N] with KIND one of 429, 500, 502, 503, 504, reset, truncate, slow (e.g. "500=0.02,slow=0.01:3000")`,
      );
    }
    const [, kind, p, extra] = m as unknown as [string, string, string, string | undefined];
    const probability = Number(p);
    if (probability > 1)
      throw new Error(`--faults: probability of ${kind} must be between 0 and 1, got ${p}`);
    if (kind === 'reset' || kind === 'truncate') return { probability, fault: { kind } };
    if (kind === 'slow')
      return { probability, fault: { kind: 'slow', delayMs: Number(extra ?? DEFAULT_SLOW_MS) } };
    const status = Number(kind);
    if (!STATUS_FAULTS.has(status))
      throw new Error(`--faults: status ${status} is not injectable; use 429, 500, 502, 503 or 504`);
    return {
      probability,
      fault: { kind: 'status', status, ...(status === 429 ? { retryAfterSeconds: Number(extra ?? 1) } : {}) },
    };
  });
  const total = rules.reduce((sum, r) => sum + r.probability, 0);
  if (total > 1) throw new Error(`--faults: probabilities add up to ${total}, more than 1`);
  return rules;
}

/**
 * Decides each request's fault from the seed, the request line and how many times that same request
 * was made before: a rerun against the same seed meets the same faults at the same attempts,
 * whatever the interleaving of concurrent requests.
 */
export function createFaultInjector(seed: number, rules: FaultRule[]) {
  const attempts = new Map<string, number>();
  return {
    decide(requestKey: string): Fault | undefined {
      if (rules.length === 0) return undefined;
      const attempt = attempts.get(requestKey) ?? 0;
      // Bounded: a very long walk forgets old request lines rather than growing without end.
      if (attempts.size > 200_000) attempts.clear();
      attempts.set(requestKey, attempt + 1);
      const draw = unit(seed, stringHash(requestKey), attempt, 0x0fa17);
      let edge = 0;
      for (const rule of rules) {
        edge += rule.probability;
        if (draw < edge) return rule.fault;
      }
      return undefined;
    },
  };
}

function stringHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
