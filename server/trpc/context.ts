import type { Db } from '@/db/client';
import { CLIENT_ADDRESS_HEADER } from '../http/client-address';
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
  /** The caller's address, as the web process established it (socket, or trusted proxies). */
  clientAddress: string;
  /**
   * Aborts when the client disconnects (the request's own signal: trpc-to-openapi calls the
   * procedures without it).
   */
  clientGone: AbortSignal;
}

/**
 * Limiters are built here, in the route's bundle, not at boot: Next bundles the web process's own modules and
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
    clientAddress: request.headers.get(CLIENT_ADDRESS_HEADER) ?? 'unknown',
    clientGone: request.signal,
  };
}
