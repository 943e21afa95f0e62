import type { Clock } from '../clock.ts';
import type { Scale, ScaleProfile } from './scale.ts';

/**
 * What a sub-world (the EVM chains, a primary network) is built from. A leaf module of its own, so
 * the sub-worlds read it without importing the world that builds them.
 */
export interface WorldBase {
  readonly seed: number;
  readonly scale: Scale;
  readonly profile: ScaleProfile;
  readonly clock: Clock;
  readonly genesis: number;
}
