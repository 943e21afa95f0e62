/** How big the emulated world is: `small` for tests, `large` for ten-million-record walks. */
export type Scale = 'small' | 'medium' | 'large';
export const SCALES: readonly Scale[] = ['small', 'medium', 'large'];

export interface ScaleProfile {
  /** Days of history before the clock's starting day. */
  historyDays: number;
}

export const SCALE_PROFILES: Record<Scale, ScaleProfile> = {
  small: { historyDays: 30 },
  medium: { historyDays: 180 },
  large: { historyDays: 730 },
};

export function parseScale(value: string): Scale {
  if ((SCALES as readonly string[]).includes(value)) return value as Scale;
  throw new Error(`--scale: expected one of ${SCALES.join(', ')}, got "${value}"`);
}
