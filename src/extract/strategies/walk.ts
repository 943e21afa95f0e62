import type { z } from 'zod';
import type { Reject } from '../../load/index.ts';
import type { Pipeline } from '../pipeline.ts';
import type { PageRequest, Partition, StreamDefinition } from '../stream.ts';

/**
 * One step of a walk: the records to append (checked), the rejects, and the checkpoint that holds once
 * they are committed. `checkpoint` undefined means "not a point to commit at" (the middle of a snapshot).
 */
export interface WalkStep {
  append: Record<string, unknown>[];
  rejects: Reject[];
  checkpoint: Record<string, unknown> | undefined;
  /** The newest record time (Unix seconds) this step reached, for streams whose records have one. */
  newestAt?: number;
}

/** The latest of some record times, undefined when none has one. */
export function newestOf(times: Iterable<number | undefined>): number | undefined {
  let newest: number | undefined;
  for (const t of times)
    if (t !== undefined && Number.isFinite(t) && (newest === undefined || t > newest)) newest = t;
  return newest;
}

/** A step's `newestAt`, present only when known. */
export const newestField = (newestAt: number | undefined) => (newestAt !== undefined ? { newestAt } : {});

export interface WalkContext<S extends z.ZodObject = z.ZodObject> {
  stream: StreamDefinition<S>;
  pipeline: Pipeline;
  partition: Partition;
  /** The partition's committed checkpoint, undefined before its first commit. */
  checkpoint: Readonly<Record<string, unknown>> | undefined;
  /** Fetches one page (retries, budget and errors handled); `pageToken` continues a listing. */
  fetchPage(request: PageRequest, pageToken?: string): Promise<unknown>;
}

export type Walk = AsyncGenerator<WalkStep, void, void>;

/** Checks one page's records against the stream's schema: the good ones parsed, the bad ones as rejects. */
export function checkRecords<S extends z.ZodObject>(stream: StreamDefinition<S>, body: unknown) {
  const valid: z.output<S>[] = [];
  const rejects: Reject[] = [];
  for (const raw of stream.records(body)) {
    const parsed = stream.schema.safeParse(raw);
    if (parsed.success) valid.push(parsed.data);
    else
      rejects.push({
        raw: JSON.stringify(raw) ?? 'undefined',
        reason: parsed.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; '),
      });
  }
  return { valid, rejects };
}

/** The `nextPageToken` of a Data/Metrics API page, if any. */
export function nextTokenOf(body: unknown): string | undefined {
  const token = (body as { nextPageToken?: unknown } | null)?.nextPageToken;
  return typeof token === 'string' && token !== '' ? token : undefined;
}
