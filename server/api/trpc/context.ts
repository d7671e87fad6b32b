import type { Db } from '@/db/client';
import type { MessageLocale } from '@/server/i18n/translator';
import { CLIENT_ADDRESS_HEADER } from '@/server/platform/client-address-header';
import type { Clock } from '@/server/platform/clock';
import type { Env } from '@/server/platform/env';
import type { JobProducer } from '@/server/platform/jobs/producers';
import type { Runtime } from '@/server/platform/runtime';
import { createRateLimiters, type RateLimiters } from '@/server/rate-limits/limiters';

/**
 * What every procedure sees. Built once per request by the REST facade (and later the console
 * route); `responseHeaders` carries headers a procedure adds (rate limits, replays) back out.
 */
export interface RequestContext {
  db: Db;
  env: Env;
  clock: Clock;
  /** Queues the jobs a change causes, in its transaction. */
  jobs: JobProducer;
  /** Where the subject's pages are served (VERIFY_URL_BASE): case links point there. */
  pageBase: string;
  /** DEFAULT_LOCALE: the mails' language when neither the case nor the team names one. */
  defaultLocale: MessageLocale;
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
 * Limiters are built here, once per database handle, rather than at boot: they are plain
 * objects of the route's bundle, like the procedures that use them.
 */
const limiterCache = new WeakMap<Db, RateLimiters>();

/** What a context is made from: a fetch `Request` is one (Next's routes), or the REST facade's own. */
export interface IncomingRequest {
  headers: Headers;
  /** Aborts when the client disconnects. */
  signal: AbortSignal;
}

/** The process's rate limiters, made once on the runtime's counters' database. */
export function runtimeRateLimiters(runtime: Runtime): RateLimiters {
  const limiterDb = runtime.rateLimitDatabase.db;
  let rateLimiters = limiterCache.get(limiterDb);
  if (!rateLimiters) {
    rateLimiters = createRateLimiters(limiterDb, runtime.env);
    limiterCache.set(limiterDb, rateLimiters);
  }
  return rateLimiters;
}

export function createRequestContext(runtime: Runtime, request: IncomingRequest): RequestContext {
  const rateLimiters = runtimeRateLimiters(runtime);
  return {
    db: runtime.database.db,
    env: runtime.env,
    clock: runtime.clock,
    jobs: runtime.jobProducer,
    pageBase: runtime.env.VERIFY_URL_BASE,
    defaultLocale: runtime.env.DEFAULT_LOCALE,
    rateLimiters,
    requestHeaders: request.headers,
    responseHeaders: new Headers(),
    clientAddress: request.headers.get(CLIENT_ADDRESS_HEADER) ?? 'unknown',
    clientGone: request.signal,
  };
}
