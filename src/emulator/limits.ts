import {
  computeUnitsOf,
  DATA_TIERS,
  METRICS_TIER,
  type Service,
  TIERS,
  type Tier,
} from '../reference/compute-units.ts';

export { computeUnitsOf, TIERS, type Tier };

export interface RateLimitConfig {
  enabled: boolean;
  /** Real seconds that count as the "minute" window (tests shorten it). */
  minuteSeconds: number;
  /** Real seconds that count as the "day" window. */
  daySeconds: number;
  /** Multiplies every allowance. */
  scale: number;
  /** Explicit allowances for every tier, overriding the published ones (benchmarks). */
  perMinute?: number;
  perDay?: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitConfig = {
  enabled: true,
  minuteSeconds: 60,
  daySeconds: 86_400,
  scale: 1,
};

/**
 * `off`, `on`, or comma-separated `key=value`: `minute=<s>` and `day=<s>` set the window lengths in real
 * seconds, `scale=<f>` multiplies the allowances, `perMinute=<CUs>` and `perDay=<CUs>` replace them.
 */
export function parseRateLimitSpec(spec: string): RateLimitConfig {
  if (spec === 'off') return { ...DEFAULT_RATE_LIMIT, enabled: false };
  if (spec === 'on' || spec === '') return { ...DEFAULT_RATE_LIMIT };
  const config: RateLimitConfig = { ...DEFAULT_RATE_LIMIT };
  for (const part of spec.split(',')) {
    const [key, value] = part.split('=').map((s) => s.trim());
    const n = Number(value);
    if (!value || !(n > 0)) {
      throw new Error(
        `--rate-limit: "${part}" needs a positive number, e.g. "minute=1,day=60,scale=0.1" or "off"`,
      );
    }
    if (key === 'minute') config.minuteSeconds = n;
    else if (key === 'day') config.daySeconds = n;
    else if (key === 'scale') config.scale = n;
    else if (key === 'perMinute') config.perMinute = Math.floor(n);
    else if (key === 'perDay') config.perDay = Math.floor(n);
    else
      throw new Error(
        `--rate-limit: unknown setting "${key}"; expected minute, day, scale, perMinute or perDay (or "off")`,
      );
  }
  return config;
}

export interface Charge {
  allowed: boolean;
  /** The ratelimit-* headers (and retry-after when refused), counted in compute units. */
  headers: Record<string, string>;
  /** Which allowance refused the request, for the 429 message. */
  exhausted?: 'minute' | 'day';
  resetSeconds: number;
}

interface Window {
  index: number;
  spent: number;
}

/**
 * Fixed windows per bucket (an API key, or everyone without one) and service, on the real clock: the
 * emulator's world clock may stand still, request pace may not. Refused requests cost nothing.
 */
export function createRateLimiter(config: RateLimitConfig, realNow: () => number = () => Date.now() / 1000) {
  const buckets = new Map<string, { minute: Window; day: Window }>();

  const allowance = (service: Service, tier: Tier) => {
    const published = service === 'metrics' ? METRICS_TIER : DATA_TIERS[tier];
    return {
      minute: Math.max(1, Math.floor((config.perMinute ?? published.perMinute) * config.scale)),
      day: Math.max(1, Math.floor((config.perDay ?? published.perDay) * config.scale)),
    };
  };

  return {
    charge(bucket: string, service: Service, tier: Tier, cost: number): Charge {
      if (!config.enabled || service === 'rpc') return { allowed: true, headers: {}, resetSeconds: 0 };
      const t = realNow();
      const limits = allowance(service, tier);
      const key = `${service}:${bucket}`;
      const minuteIndex = Math.floor(t / config.minuteSeconds);
      const dayIndex = Math.floor(t / config.daySeconds);
      let state = buckets.get(key);
      if (!state) {
        state = { minute: { index: minuteIndex, spent: 0 }, day: { index: dayIndex, spent: 0 } };
        buckets.set(key, state);
      }
      if (state.minute.index !== minuteIndex) state.minute = { index: minuteIndex, spent: 0 };
      if (state.day.index !== dayIndex) state.day = { index: dayIndex, spent: 0 };

      const minuteReset = Math.max(1, Math.ceil((minuteIndex + 1) * config.minuteSeconds - t));
      const dayReset = Math.max(1, Math.ceil((dayIndex + 1) * config.daySeconds - t));
      const dayShort = state.day.spent + cost > limits.day;
      const minuteShort = state.minute.spent + cost > limits.minute;
      const allowed = !dayShort && !minuteShort;
      if (allowed) {
        state.minute.spent += cost;
        state.day.spent += cost;
      }
      // Report the allowance closest to running out; the day one once it is the binding one.
      const dayBinds = dayShort || limits.day - state.day.spent < limits.minute - state.minute.spent;
      const [limit, spent, reset] = dayBinds
        ? [limits.day, state.day.spent, dayReset]
        : [limits.minute, state.minute.spent, minuteReset];
      const headers: Record<string, string> = {
        'ratelimit-policy': `${limits.minute};w=${config.minuteSeconds}, ${limits.day};w=${config.daySeconds}`,
        'ratelimit-limit': String(limit),
        'ratelimit-remaining': String(Math.max(0, limit - spent)),
        'ratelimit-reset': String(reset),
      };
      if (allowed) return { allowed, headers, resetSeconds: reset };
      headers['retry-after'] = String(reset);
      return { allowed, headers, exhausted: dayShort ? 'day' : 'minute', resetSeconds: reset };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
