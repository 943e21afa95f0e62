/** The metrics service's time intervals and their UTC alignment (§2.16). */
export type TimeInterval = 'hour' | 'day' | 'week' | 'month';
export const TIME_INTERVALS: readonly TimeInterval[] = ['hour', 'day', 'week', 'month'];

const HOUR = 3_600;
const DAY = 86_400;

/** The start of the interval holding `t`: the hour; 0:00 UTC; Monday 0:00 UTC; the 1st 0:00 UTC. */
export function alignDown(t: number, interval: TimeInterval): number {
  switch (interval) {
    case 'hour':
      return Math.floor(t / HOUR) * HOUR;
    case 'day':
      return Math.floor(t / DAY) * DAY;
    case 'week': {
      // 1970-01-01 was a Thursday: day index + 3 counts days since a Monday.
      const day = Math.floor(t / DAY);
      return (day - ((day + 3) % 7)) * DAY;
    }
    case 'month': {
      const d = new Date(t * 1000);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
    }
  }
}

/** The start of the interval after the one starting at aligned `t` (or `count` intervals later). */
export function step(t: number, interval: TimeInterval, count = 1): number {
  switch (interval) {
    case 'hour':
      return t + count * HOUR;
    case 'day':
      return t + count * DAY;
    case 'week':
      return t + count * 7 * DAY;
    case 'month': {
      const d = new Date(t * 1000);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + count, 1) / 1000;
    }
  }
}
