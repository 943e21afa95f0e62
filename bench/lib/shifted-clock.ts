/**
 * Moves this process's clock (`Date`, `Date.now()`) by an offset, as `faketime` would: the aging bench
 * moves the emulator's world 15 minutes a run without waiting for them, and avalake must see the same
 * time as the node it reads, or a snapshot stamped with the wall clock disagrees with a world that ran
 * ahead of it (validations that ended in the world's time, still active at the wall clock's). Durations
 * measured with `performance.now()` are not affected.
 */
const RealDate = Date;
let offsetMs = 0;

class ShiftedDate extends RealDate {
  constructor(...args: ConstructorParameters<typeof Date> | []) {
    if (args.length === 0) super(RealDate.now() + offsetMs);
    else super(...(args as ConstructorParameters<typeof Date>));
  }

  static override now(): number {
    return RealDate.now() + offsetMs;
  }
}

export function shiftClock(byMs: number): void {
  offsetMs = byMs;
  globalThis.Date = ShiftedDate as DateConstructor;
}
