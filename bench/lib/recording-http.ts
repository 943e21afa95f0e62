import { createRouter } from '../../src/emulator/http/route.ts';
import { computeUnitsOf } from '../../src/emulator/limits.ts';
import { allRoutes } from '../../src/emulator/routes/index.ts';
import type { HttpClient } from '../../src/extract/http.ts';

/** One HTTP attempt as the client saw it: when it left, when it was answered, and what it cost. */
export interface Attempt {
  /** performance.timeOrigin-based wall clock, in ms (Date.now() scale, sub-ms precision). */
  sentAt: number;
  answeredAt: number;
  /** 0 when the connection failed or the request was aborted. */
  status: number;
  /** Compute units the emulator charges for this route (charged only when it answers 2xx/4xx, not 429). */
  cost: number;
}

const router = createRouter(allRoutes);

/** The CU price of a request to the emulator, from its own route table (the same one it charges by). */
export function costOf(method: string, url: string): number {
  const match = router.match(method, new URL(url).pathname);
  if (match === undefined || match === 'method-not-allowed') return 0;
  return computeUnitsOf(match.route.service, method, match.route.path);
}

const wallNow = () => performance.timeOrigin + performance.now();

/**
 * Wraps an HttpClient so every attempt (retries included) is recorded. Refuses any host but 127.0.0.1:
 * benchmarks talk only to a local emulator.
 */
export function recordingHttp(inner: HttpClient): { http: HttpClient; attempts: Attempt[] } {
  const attempts: Attempt[] = [];
  const http: HttpClient = {
    async send(request) {
      const host = new URL(request.url).hostname;
      if (host !== '127.0.0.1' && host !== 'localhost')
        throw new Error(`benchmarks only talk to a local emulator; got ${request.url}`);
      const cost = costOf(request.method ?? 'GET', request.url);
      const sentAt = wallNow();
      try {
        const answer = await inner.send(request);
        attempts.push({ sentAt, answeredAt: wallNow(), status: answer.status, cost });
        return answer;
      } catch (error) {
        attempts.push({ sentAt, answeredAt: wallNow(), status: 0, cost });
        throw error;
      }
    },
    close: () => inner.close(),
  };
  return { http, attempts };
}
