/**
 * The emulator's notion of "now", in Unix seconds. The world is a function of it: records whose time
 * has come exist, delegations move from pending to active to completed, page tokens expire.
 */
export interface Clock {
  /** Current emulator time in Unix seconds (may be fractional under `speed:`). */
  now(): number;
  /** Moves time forward by `seconds` (any mode). */
  advance(seconds: number): void;
  /** Jumps to an absolute time, never backwards. */
  set(unixSeconds: number): void;
  readonly spec: string;
}

export function parseClockSpec(
  spec: string,
): { mode: 'real' } | { mode: 'fixed'; at: number } | { mode: 'speed'; factor: number } {
  if (spec === 'real') return { mode: 'real' };
  const fixed = /^fixed:(\d+)$/.exec(spec);
  if (fixed) return { mode: 'fixed', at: Number(fixed[1]) };
  const speed = /^speed:(\d+(?:\.\d+)?)$/.exec(spec);
  if (speed && Number(speed[1]) > 0) return { mode: 'speed', factor: Number(speed[1]) };
  throw new Error(
    `--clock: expected "real", "fixed:<unix seconds>" or "speed:<factor>" (e.g. fixed:1767225600, speed:60), got "${spec}"`,
  );
}

export function createClock(spec = 'real', wallNow: () => number = () => Date.now() / 1000): Clock {
  const parsed = parseClockSpec(spec);
  const wallStart = wallNow();
  const start = parsed.mode === 'fixed' ? parsed.at : wallStart;
  const factor = parsed.mode === 'speed' ? parsed.factor : parsed.mode === 'real' ? 1 : 0;
  let offset = 0;
  const now = () => start + (wallNow() - wallStart) * factor + offset;
  return {
    spec,
    now,
    advance(seconds) {
      if (!(seconds >= 0)) throw new Error(`clock.advance: seconds must be >= 0, got ${seconds}`);
      offset += seconds;
    },
    set(unixSeconds) {
      const delta = unixSeconds - now();
      if (delta < 0)
        throw new Error(`clock.set: time only moves forward (now ${now()}, asked ${unixSeconds})`);
      offset += delta;
    },
  };
}
