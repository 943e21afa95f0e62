/** Where a request failed: enough for a user to find it, never the API key (it travels in a header only). */
export interface RequestLocation {
  stream?: string;
  partition?: string;
  /** Method and URL, without credentials. */
  request: string;
}

const where = (at: RequestLocation) =>
  [at.stream && `stream ${at.stream}`, at.partition && `partition ${at.partition}`, at.request]
    .filter(Boolean)
    .join(', ');

/** Worth another try: 429, 5xx, dropped connections, timeouts, bodies cut short or not JSON. */
export class RetryableError extends Error {
  override name = 'RetryableError';
  constructor(
    message: string,
    readonly at: RequestLocation,
    readonly detail: { status?: number; retryAfterMs?: number } = {},
    options?: { cause?: unknown },
  ) {
    super(`${message} (${where(at)})`, options);
  }
}

/** Will fail the same way every time: a 400/401/403/404. The message says what to fix. */
export class FinalError extends Error {
  override name = 'FinalError';
  constructor(
    message: string,
    readonly at: RequestLocation,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`${message} (${where(at)})`, options);
  }
}

/** A per-day (or other long-window) allowance is spent: the run stops cleanly and resumes later. */
export class QuotaExhaustedError extends Error {
  override name = 'QuotaExhaustedError';
  constructor(
    readonly host: string,
    readonly limitCu: number,
    readonly windowSeconds: number | undefined,
    readonly resetsAt: Date,
  ) {
    super(
      `the ${describeWindow(windowSeconds)} compute-unit quota of ${host} (${limitCu} CUs) is spent; it resets at ${resetsAt.toISOString()}`,
    );
  }
}

function describeWindow(seconds: number | undefined): string {
  if (seconds === undefined) return 'current';
  if (seconds === 86_400) return 'daily';
  if (seconds === 60) return 'per-minute';
  return `${seconds}-second`;
}

/** The service refused a page token (expired after 24 hours, or from another query): restart the window. */
export function isRejectedPageToken(error: unknown): boolean {
  return error instanceof FinalError && error.status === 400 && /pageToken/i.test(error.message);
}
