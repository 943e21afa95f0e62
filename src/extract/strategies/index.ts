import type { StreamDefinition } from '../stream.ts';
import { walkCursor } from './cursor.ts';
import { expectedHeightPages, walkHeights } from './height-walk.ts';
import { walkNewestFirst } from './newest-first.ts';
import { walkSnapshot } from './snapshot.ts';
import type { Walk, WalkContext } from './walk.ts';

export { isUnchangedAnswer, SNAPSHOT_AT, SNAPSHOT_PARTITION } from './snapshot.ts';
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

/**
 * Whether a partition has work left from an earlier run: never read, or stopped mid-walk (a window of
 * pages in progress, as the cursor and newest-first walks keep it, or a resumable snapshot's reading).
 */
export function isUnfinished(checkpoint: Readonly<Record<string, unknown>> | undefined): boolean {
  return checkpoint === undefined || checkpoint.window !== undefined || checkpoint.reading !== undefined;
}

/** How many requests a walk will make, when its strategy can tell from the first answer (for an ETA). */
export function expectedPages(
  stream: StreamDefinition,
  checkpoint: Readonly<Record<string, unknown>> | undefined,
  firstAnswer: unknown,
): number | undefined {
  return stream.strategy === 'height-walk' ? expectedHeightPages(stream, checkpoint, firstAnswer) : undefined;
}
