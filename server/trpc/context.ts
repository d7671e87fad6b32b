import type { Db } from '@/db/client';
import { type Clock, systemClock } from '../lib/clock';
import { type Env, env } from '../lib/env';
import { createRateLimiters, type RateLimiters } from '../rate-limits/limiters';
import type { Runtime } from '../runtime';

/**
 * What every procedure sees. Built once per request by the REST facade (and later the console
 * route); `responseHeaders` carries headers a procedure adds (rate limits, replays) back out.
 */
export interface RequestContext {
  db: Db;
  env: Env;
  clock: Clock;
  rateLimiters: RateLimiters;
  requestHeaders: Headers;
  responseHeaders: Headers;
  /** The caller's address as the nearest proxy (Next's server) saw it. */
  clientAddress: string;
  /**
   * Aborts when the client disconnects (the request's own signal: trpc-to-openapi calls the
   * procedures without it).
   */
  clientGone: AbortSignal;
}

/**
 * Limiters are built here, in the route's bundle, not at boot: Next bundles instrumentation and
 * each route separately, and an AppError class from another bundle would fail `instanceof` in
 * this bundle's error table.
 */
const limiterCache = new WeakMap<Db, RateLimiters>();

export function createRequestContext(runtime: Runtime, request: Request): RequestContext {
  const limiterDb = runtime.rateLimitDatabase.db;
  let rateLimiters = limiterCache.get(limiterDb);
  if (!rateLimiters) {
    rateLimiters = createRateLimiters(limiterDb, env());
    limiterCache.set(limiterDb, rateLimiters);
  }
  return {
    db: runtime.database.db,
    env: env(),
    clock: systemClock,
    rateLimiters,
    requestHeaders: request.headers,
    responseHeaders: new Headers(),
    clientAddress: clientAddress(request.headers),
    clientGone: request.signal,
  };
}

/**
 * Next's server appends the socket's address to X-Forwarded-For, so the last entry is the one a
 * client cannot forge (earlier entries are whatever the client sent).
 */
function clientAddress(headers: Headers): string {
  const forwarded = headers.get('x-forwarded-for');
  const last = forwarded?.split(',').at(-1)?.trim();
  return last || 'unknown';
}
