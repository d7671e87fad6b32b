import { RateLimiterDrizzle, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '@/db/client';
import { rateLimits } from '@/db/schema';
import type { Env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';
import { addressLimitKey } from './address-key';
import { consumePoints } from './queries';

/**
 * - `read`, `write`: an API team's budgets (all its keys share them);
 * - `address`: unauthenticated API calls and failed API authentications, per client address;
 * - `console_user`: a signed-in console user's calls;
 * - `password_failures`: wrong passwords for one account (sign-in and current-password checks
 *   alike), whatever address they come from;
 * - `sign_in_links`: sign-in links mailed to one account;
 * - `resends_team`, `resends_recipient`: a case's links mailed again, per team (and mode) and per
 *   address mailed, so that resends cannot be turned on someone's inbox one case at a time.
 */
export type RateLimitBucket =
  | 'read'
  | 'write'
  | 'address'
  | 'console_user'
  | 'password_failures'
  | 'sign_in_links'
  | 'resends_team'
  | 'resends_recipient';

/**
 * Budgets per bucket and key. State lives in PostgreSQL (rate-limiter-flexible's drizzle store:
 * one atomic upsert per request), so every app process draws on the same budget.
 */
export interface RateLimiters {
  /** Spends one point; throws RATE_LIMITED (with Retry-After) when none is left. */
  consume: (bucket: RateLimitBucket, key: string) => Promise<RateLimitResult>;
  /**
   * Spends one point in each bucket, in order, or none: when one refuses, the points already
   * spent are given back, and its RATE_LIMITED is thrown.
   */
  consumeAll: (spends: ReadonlyArray<readonly [RateLimitBucket, string]>) => Promise<void>;
  /**
   * Spends a point before an attempt and gives it back when the attempt succeeds, so only
   * failures count, and parallel attempts can never exceed the budget between them.
   */
  attempt: <T>(
    bucket: RateLimitBucket,
    key: string,
    run: () => Promise<T>,
    succeeded: (result: T) => boolean,
  ) => Promise<T>;
}

export interface RateLimitResult {
  headers: Record<string, string>;
}

/** Console calls one signed-in user may make per minute: far above what clicking through pages needs. */
export const CONSOLE_CALLS_PER_MINUTE = 300;
/** Decisions: 5 failed password checks or sign-in links per account per 15 minutes. */
export const ACCOUNT_ATTEMPTS = { points: 5, seconds: 15 * 60 };
/** Decisions: a team resends at most 100 times an hour, an address is mailed again 10 times a day. */
export const RESEND_BUDGETS = {
  team: { points: 100, seconds: 60 * 60 },
  recipient: { points: 10, seconds: 24 * 60 * 60 },
};

function budgets(config: Env): Record<RateLimitBucket, { points: number; seconds: number; prefix: string }> {
  return {
    read: { points: config.RATE_LIMIT_READ_PER_MINUTE, seconds: 60, prefix: 'read' },
    write: { points: config.RATE_LIMIT_WRITE_PER_MINUTE, seconds: 60, prefix: 'write' },
    address: { points: config.RATE_LIMIT_READ_PER_MINUTE, seconds: 60, prefix: 'addr' },
    console_user: { points: CONSOLE_CALLS_PER_MINUTE, seconds: 60, prefix: 'console' },
    password_failures: { ...ACCOUNT_ATTEMPTS, prefix: 'pwfail' },
    sign_in_links: { ...ACCOUNT_ATTEMPTS, prefix: 'signlink' },
    resends_team: { ...RESEND_BUDGETS.team, prefix: 'resend_team' },
    resends_recipient: { ...RESEND_BUDGETS.recipient, prefix: 'resend_to' },
  };
}

/** The key a bucket counts under: addresses by their network (IPv6 /64), accounts case-blind. */
function normalizedKey(bucket: RateLimitBucket, key: string): string {
  if (bucket === 'address') return addressLimitKey(key);
  if (bucket === 'password_failures' || bucket === 'sign_in_links' || bucket === 'resends_recipient') {
    return key.trim().toLowerCase();
  }
  return key;
}

function limitDetail(bucket: RateLimitBucket, points: number, retryAfter: string): string {
  switch (bucket) {
    case 'password_failures':
      return `Too many wrong passwords for this account; try again in ${retryAfter} s.`;
    case 'sign_in_links':
      return `Too many sign-in links were asked for this account; try again in ${retryAfter} s.`;
    case 'resends_team':
      return `This team has sent links again ${points} times in the last hour; retry in ${retryAfter} s.`;
    case 'resends_recipient':
      return `This address has been sent links again ${points} times today; retry in ${retryAfter} s.`;
    case 'write':
      return `Rate limit of ${points} writes per minute exceeded; retry in ${retryAfter} s.`;
    default:
      return `Rate limit of ${points} requests per minute exceeded; retry in ${retryAfter} s.`;
  }
}

/**
 * rate-limiter-flexible's drizzle store with its increment built once (`consumePoints`): the
 * library's store builds that statement anew on every call, which cost about 6 % of the app's CPU
 * on a read. Same statement, same atomicity: an expired window restarts at the consumed points, a
 * live one adds them. `_upsert` is the method a store implements (the library's README, "Any new
 * limiter with storage"); forced expiry (`block`, `set`) stays the library's own.
 */
class PreparedRateLimiterDrizzle extends RateLimiterDrizzle {
  readonly #db: Db;

  constructor(options: ConstructorParameters<typeof RateLimiterDrizzle>[0] & { storeClient: Db }) {
    super(options);
    this.#db = options.storeClient;
  }

  async _upsert(key: string, points: number, msDuration: number, forceExpire = false): Promise<unknown> {
    if (forceExpire || msDuration <= 0) {
      const parent = RateLimiterDrizzle.prototype as unknown as {
        _upsert: (key: string, points: number, msDuration: number, forceExpire: boolean) => Promise<unknown>;
      };
      return parent._upsert.call(this, key, points, msDuration, forceExpire);
    }
    // The library measures a window's remaining time with its own Date.now(), so the window's
    // edges are set from the same wall clock, not the runtime's: the two must agree.
    const now = new Date();
    const expire = new Date(now.getTime() + msDuration);
    const [row] = await consumePoints(this.#db).execute({
      key,
      points,
      expire,
      nowIso: now.toISOString(),
      expireIso: expire.toISOString(),
    });
    return row;
  }
}

export function createRateLimiters(db: Db, config: Env): RateLimiters {
  const byBucket = Object.fromEntries(
    Object.entries(budgets(config)).map(([bucket, budget]) => [
      bucket,
      new PreparedRateLimiterDrizzle({
        storeClient: db,
        schema: rateLimits,
        keyPrefix: budget.prefix,
        points: budget.points,
        duration: budget.seconds,
      }),
    ]),
  ) as Record<RateLimitBucket, PreparedRateLimiterDrizzle>;

  const limiters: RateLimiters = {
    async consume(bucket, rawKey) {
      const limiter = byBucket[bucket];
      const key = normalizedKey(bucket, rawKey);
      const headersFor = (res: RateLimiterRes): Record<string, string> => {
        return {
          'X-RateLimit-Limit': String(limiter.points),
          'X-RateLimit-Remaining': String(res.remainingPoints),
          // Unix time (seconds) at which the current window ends and the budget is full again.
          'X-RateLimit-Reset': String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)),
        };
      };
      try {
        const res = await limiter.consume(key);
        return { headers: headersFor(res) };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          const headers = headersFor(rejection);
          headers['Retry-After'] = String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
          throw new AppError(
            'RATE_LIMITED',
            limitDetail(bucket, limiter.points, headers['Retry-After']),
            headers,
          );
        }
        throw rejection;
      }
    },

    async consumeAll(spends) {
      const spent: Array<readonly [RateLimitBucket, string]> = [];
      try {
        for (const spend of spends) {
          await limiters.consume(spend[0], spend[1]);
          spent.push(spend);
        }
      } catch (refusal) {
        for (const [bucket, key] of spent) await byBucket[bucket].reward(normalizedKey(bucket, key), 1);
        throw refusal;
      }
    },

    async attempt(bucket, rawKey, run, succeeded) {
      await limiters.consume(bucket, rawKey);
      const result = await run();
      if (succeeded(result)) await byBucket[bucket].reward(normalizedKey(bucket, rawKey), 1);
      return result;
    },
  };
  return limiters;
}
