import { createHash } from 'node:crypto';
import type { Reject } from '../load/index.ts';

/**
 * The records a partition has already rejected, so that a record read again is not rejected again.
 *
 * Every walk reads some records a second time: a newest-first listing's first page, a cursor's boundary,
 * a snapshot's answer. A valid record read again is skipped by the walk's keys; a rejected one has none it
 * can trust, and was written to the rejects table every run it was read. Under cron, one bad record at the
 * top of a quiet listing then cost a rejects file and a commit every 15 minutes, for as long as it stayed
 * there. So the committed checkpoint carries hashes of the partition's latest rejects (their raw JSON:
 * the same text is the same record), and a reject whose hash is among them is dropped.
 *
 * The walks never see this key: the runner takes it off the checkpoint it hands them and puts it back
 * on each checkpoint it commits, with the rejects committed up to there.
 */
export const KNOWN_REJECTS = 'knownRejects';

/**
 * The most hashes a checkpoint keeps, those met longest ago dropped first: a reject read again moves to
 * the end, so one is written twice only if this many others came after it while it was still read.
 */
const KEEP = 256;

/** Characters of a hash kept (base64url, 72 bits): enough to tell a partition's rejects apart. */
const HASH_CHARS = 12;

const hashOf = (raw: string) => createHash('sha256').update(raw).digest('base64url').slice(0, HASH_CHARS);

export interface KnownRejects {
  /** The checkpoint as the walk sees it, without the known rejects. */
  readonly checkpoint: Record<string, unknown> | undefined;
  /** Of `rejects`, those not written before; they count as known from now on. */
  fresh(rejects: readonly Reject[]): Reject[];
  /** `checkpoint` (a walk's) carrying the rejects known so far. */
  attach(checkpoint: Record<string, unknown>): Record<string, unknown>;
}

/** The known rejects of a committed checkpoint (none for a full refresh, which reads and writes anew). */
export function knownRejectsOf(stored: Record<string, unknown> | undefined): KnownRejects {
  const { [KNOWN_REJECTS]: list, ...checkpoint } = stored ?? {};
  const known = new Set(Array.isArray(list) ? list.filter((h) => typeof h === 'string') : []);
  return {
    checkpoint: stored === undefined ? undefined : checkpoint,
    fresh(rejects) {
      if (rejects.length === 0) return [];
      const fresh = rejects.filter((reject) => {
        const hash = hashOf(reject.raw);
        const seen = known.delete(hash);
        known.add(hash);
        return !seen;
      });
      // A walk that rejects without end (a schema the source no longer follows) keeps memory bounded.
      if (known.size > 4 * KEEP)
        for (const hash of [...known].slice(0, known.size - KEEP)) known.delete(hash);
      return fresh;
    },
    attach(walked) {
      if (known.size === 0) return walked;
      const kept = [...known].slice(-KEEP);
      return { ...walked, [KNOWN_REJECTS]: kept };
    },
  };
}
