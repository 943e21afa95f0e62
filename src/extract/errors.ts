/** A mistake in the configuration: one clear line for the user, exit 2, nothing written. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

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

/**
 * The source handed a walk a page token it had already followed in the same pass: its listing loops
 * (a fault of the service, or of a proxy or cache in front of it). Final: reading on would ask for the
 * same pages until the day's allowance is spent. The partition fails; what it read before is committed.
 */
export class ListingLoopError extends Error {
  override name = 'ListingLoopError';
  constructor(pages: number) {
    super(
      `the source gave, after ${pages} pages of this listing, a page token the walk had already followed: ` +
        'the listing loops, so the walk stops here (what it read before is kept); if it goes on, look at ' +
        'the service or the proxy in front of it',
    );
  }
}

/**
 * The service refused a walk's page token again after each of `passes` passes from the top: not a token
 * that expired, but tokens it does not take at all (a proxy that mangles them, a changed token format).
 */
export class RefusedTokensError extends Error {
  override name = 'RefusedTokensError';
  constructor(passes: number, cause: unknown) {
    super(
      `the service refused this listing's page token again after ${passes} passes from its first page, ` +
        `so the walk stops here (what it read before is kept): ${(cause as Error).message}`,
      { cause },
    );
  }
}

/** A per-day (or other long-window) allowance is spent: the run stops cleanly and resumes later. */
export class QuotaExhaustedError extends Error {
  override name = 'QuotaExhaustedError';
  constructor(
    readonly host: string,
    /** Undefined where the host only said to wait (a 429's `retry-after`, no `ratelimit-*` headers). */
    readonly limitCu: number | undefined,
    readonly windowSeconds: number | undefined,
    readonly resetsAt: Date,
    /** Set where the host answered nothing but 429s, each asking for a short wait, for this long. */
    readonly limitedForMs?: number,
  ) {
    super(
      limitedForMs !== undefined
        ? `${host} has answered nothing but 429 for ${Math.round(limitedForMs / 1000)} s, longer than a run waits for its allowance: its quota is taken as spent`
        : limitCu === undefined
          ? `${host} answers 429 and asks to wait until ${resetsAt.toISOString()}: its quota is spent`
          : `the ${describeWindow(windowSeconds)} compute-unit quota of ${host} (${limitCu} CUs) is spent; it resets at ${resetsAt.toISOString()}`,
    );
  }
}

function describeWindow(seconds: number | undefined): string {
  if (seconds === undefined) return 'current';
  if (seconds === 86_400) return 'daily';
  if (seconds === 60) return 'per-minute';
  return `${seconds}-second`;
}

/**
 * A host given up on for the rest of the run: every connection to it failed before any HTTP answer
 * (refused, name not resolved, timed out, TLS failed) and none ever succeeded, so the URL is wrong or the
 * service is not there; or its requests connected and got no answer again and again, for a minute and
 * more, whether or not it answered earlier (a hung service or proxy); or, after it answered, its
 * connections failed for a minute and more (it went away). Final, and shared by every request
 * to that host, so such a run ends in a minute or two instead of retrying each partition.
 */
export class DeadHostError extends Error {
  override name = 'DeadHostError';
  constructor(
    /** `scheme://host:port`, never a path or query (nor a key: keys travel in headers). */
    readonly origin: string,
    /** The connection error's code: ECONNREFUSED, ENOTFOUND, EAI_AGAIN, a TLS or certificate code, a timeout. */
    readonly code: string,
    readonly attempts: number,
    readonly seconds: number,
    /** `answered`: the host had answered earlier in this run (then it hung or went away). */
    options?: { cause?: unknown; answered?: boolean },
  ) {
    const { what, advice } = describeConnectionFailure(code);
    const subject = NO_ANSWER.has(code) ? 'requests to' : 'connection to';
    // A host that answered earlier is there and its URL right: it stopped answering, or went away.
    const [earlier, fix] = options?.answered
      ? [', though it answered earlier in this run', NO_ANSWER.has(code) ? HUNG_ADVICE : GONE_ADVICE]
      : ['', advice];
    super(
      `${subject} ${origin} failed (${what}; ${attempts} attempts in ${seconds.toFixed(1)} s, none answered${earlier}): ${fix}`,
      options,
    );
  }
}

const HUNG_ADVICE = 'it stopped answering (a hung service or proxy accepts and never answers)';
const GONE_ADVICE =
  'it went away during the run for more than a minute (stopped, moved, or cut off by a firewall or the network)';

/** TLS and certificate failures: `ERR_SSL_WRONG_VERSION_NUMBER`, `CERT_HAS_EXPIRED`, `EPROTO`, … */
const TLS = /^ERR_(SSL|TLS)_|CERT|^UNABLE_TO_(GET|VERIFY)|^EPROTO$/;

const REFUSED_OR_UNRESOLVED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/**
 * No connection within the time allowed (a firewall dropping packets, no host at that address). It counts
 * toward a dead host like a refusal (see the fetcher): before the host's first answer over as many
 * attempts, at 10 s each most of a minute rather than the hour of full retries a black hole would cost;
 * after it, by the slower rule of requests unanswered. A connection that gets no answer counts too, but by a rule of its own (timeoutOf).
 */
const SILENT = new Set(['UND_ERR_CONNECT_TIMEOUT']);

/**
 * A request that got no whole answer in the time allowed: connected, then nothing (a hung service, a
 * proxy holding the connection), or a body that stalled or trickled past the request's deadline. Such
 * requests in a row, with no answer between them, declare a host dead even where it answered earlier,
 * over more attempts and a longer span than refusals (the fetcher's DEAD_HOST_TIMEOUTS): a slow service
 * gets a minute and more to answer once, and any answer starts the count over.
 */
export function timeoutOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && NO_ANSWER.has(code) ? code : undefined;
}

const NO_ANSWER = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'AVALAKE_REQUEST_DEADLINE']);

/**
 * The code of an error that happened before the host answered anything: refused, unresolved, unroutable,
 * timed out, or a failed TLS handshake (a bad certificate, or https to a plain-HTTP port). Undefined for
 * everything else, resets included: a flapping host is not a dead one.
 */
export function connectionFailureOf(error: unknown, depth = 0): string | undefined {
  if (!(error instanceof Error) || depth > 4) return undefined;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string') {
    if (REFUSED_OR_UNRESOLVED.has(code) || SILENT.has(code)) return code;
    if (TLS.test(code)) return code;
  }
  // Happy eyeballs (IPv6 and IPv4 both tried) reports an AggregateError; undici may wrap the socket's error.
  const inner = [
    ...(error instanceof AggregateError ? (error.errors as unknown[]) : []),
    (error as { cause?: unknown }).cause,
  ];
  for (const e of inner) {
    const found = connectionFailureOf(e, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** What the code means, and what to check. */
function describeConnectionFailure(code: string): { what: string; advice: string } {
  if (TLS.test(code))
    return {
      what: `the TLS handshake failed, ${code}`,
      advice: 'is the scheme (http or https) right, and the host’s certificate valid?',
    };
  const advice = 'is the service up, and is the URL right?';
  if (code === 'ECONNREFUSED') return { what: 'connection refused, ECONNREFUSED', advice };
  if (code === 'ENOTFOUND' || code.startsWith('EAI_'))
    return { what: `the host name does not resolve, ${code}`, advice };
  if (code === 'UND_ERR_CONNECT_TIMEOUT')
    return {
      what: `no connection within the time allowed, ${code}`,
      advice: 'is the host up, is the URL right, and does a firewall let the connection through?',
    };
  if (NO_ANSWER.has(code))
    return {
      what: `connected, but no whole answer within the time allowed, ${code}`,
      advice:
        'is the service answering (a hung service or proxy accepts and never answers), and is the URL right?',
    };
  return { what: `no route to the host, ${code}`, advice };
}

/** The service refused a page token (expired after 24 hours, or from another query): restart the window. */
export function isRejectedPageToken(error: unknown): boolean {
  return error instanceof FinalError && error.status === 400 && /pageToken/i.test(error.message);
}
