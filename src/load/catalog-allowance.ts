import type pg from 'pg';

/**
 * A host's compute-unit allowance as every worker of the catalog spends it: one window, one count, so N
 * workers together stay under a key's limit instead of each spending what the headers said was left.
 */
export interface SharedAllowance {
  /**
   * Takes `cost` units from the current window (a new window starts full): `taken`; or how long until
   * the next window; or `unknown` before any answer told the allowance.
   */
  take(origin: string, cost: number): Promise<AllowanceTake>;
  /** What an answer's `ratelimit-*` headers said (a 429: nothing left in this window). */
  learn(origin: string, seen: AllowanceSeen): Promise<void>;
}

export type AllowanceTake =
  | { kind: 'taken' }
  | { kind: 'wait'; ms: number; limit: number; windowSeconds: number }
  | { kind: 'unknown' };

export interface AllowanceSeen {
  limit: number;
  remaining: number;
  resetSeconds: number;
  windowSeconds: number;
}

/** The allowance kept in `avalake.allowances`, one row per host, in the database's clock. */
export function allowanceOf(pool: pg.Pool): SharedAllowance {
  return {
    async take(origin, cost) {
      // A window whose reset has passed starts again full; its next reset is a whole number of windows on.
      const taken = await pool.query(
        `update avalake.allowances a set
           remaining = (case when a.reset_at <= clock_timestamp() then a.lim else a.remaining end) - $2,
           reset_at = case when a.reset_at <= clock_timestamp()
             then a.reset_at + make_interval(secs => a.window_seconds *
               (floor(extract(epoch from clock_timestamp() - a.reset_at) / a.window_seconds) + 1))
             else a.reset_at end
         where a.origin = $1
           and (case when a.reset_at <= clock_timestamp() then a.lim else a.remaining end) >= $2
         returning 1`,
        [origin, cost],
      );
      if (taken.rowCount === 1) return { kind: 'taken' };
      const { rows } = await pool.query<{ ms: number; lim: number; window_seconds: number }>(
        `select greatest(0, extract(epoch from reset_at - clock_timestamp()) * 1000)::float8 as ms, lim, window_seconds
         from avalake.allowances where origin = $1`,
        [origin],
      );
      const row = rows[0];
      return row
        ? { kind: 'wait', ms: row.ms, limit: row.lim, windowSeconds: row.window_seconds }
        : { kind: 'unknown' };
    },

    async learn(origin, seen) {
      // Within one window the lower count wins: the shared count already holds what is in flight.
      await pool.query(
        `insert into avalake.allowances as a (origin, lim, remaining, reset_at, window_seconds)
         values ($1, $2, $3, clock_timestamp() + make_interval(secs => $4), $5)
         on conflict (origin) do update set
           lim = excluded.lim,
           window_seconds = excluded.window_seconds,
           remaining = case when abs(extract(epoch from a.reset_at - excluded.reset_at)) < 1.5
             then least(a.remaining, excluded.remaining) else excluded.remaining end,
           reset_at = excluded.reset_at`,
        [origin, seen.limit, seen.remaining, seen.resetSeconds, seen.windowSeconds],
      );
    },
  };
}
