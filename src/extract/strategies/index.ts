import type { StreamDefinition } from '../stream.ts';
import { walkCursor } from './cursor.ts';
import { walkHeights } from './height-walk.ts';
import { walkNewestFirst } from './newest-first.ts';
import { walkSnapshot } from './snapshot.ts';
import type { Walk, WalkContext } from './walk.ts';

export { SNAPSHOT_AT, SNAPSHOT_PARTITION } from './snapshot.ts';
export type { Walk, WalkContext, WalkStep } from './walk.ts';

/** The paginator of a stream's strategy: one mechanism per strategy, shared by every stream. */
export function walkOf(stream: StreamDefinition, ctx: WalkContext, runStartedAt: number): Walk {
  switch (stream.strategy) {
    case 'cursor':
      return walkCursor(ctx);
    case 'newest-first':
      return walkNewestFirst(ctx);
    case 'snapshot':
      return walkSnapshot(ctx, runStartedAt);
    case 'height-walk':
      return walkHeights(ctx);
  }
}
