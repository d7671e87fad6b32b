import { secondsInDay, secondsInHour } from 'date-fns/constants';
import { RateLimiterDrizzle, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '@/db/client';
import { rateLimits } from '@/db/schema';
import { sha256Hex } from '@/server/platform/crypto';
import type { Env } from '@/server/platform/env';
import { AppError } from '@/server/platform/errors';
import { addressLimitKey } from './address-key';
import { consumePoints } from './queries';

/**
 * - `read`, `write`: an API team's budgets (all its keys share them);
 * - `address`: unauthenticated API calls and failed API authentications, per client address;
 * - `console_user`: a signed-in console user's calls;
 * - `password_failures`, `account_password_failures`: wrong passwords for one account (sign-in
 *   and current-password checks alike), from one client address, and from all addresses together;
 * - `sign_in_links`, `account_sign_in_links`: sign-in links mailed to one account, asked for from
 *   one client address, and from all addresses together;
 * - `team_invitations`: invitations one team sends;
 * - `resends_team`, `resends_recipient`: a case's links mailed again, per team (and mode) and per
 *   address mailed, so that resends cannot be turned on someone's inbox one case at a time;
 * - `oidc_par`, `oidc_token`: an identity-provider client's pushed authorization requests and
 *   token requests (server/oidc).
 */
export type RateLimitBucket =
  | 'read'
  | 'write'
  | 'address'
  | 'console_user'
  | 'password_failures'
  | 'account_password_failures'
  | 'sign_in_links'
  | 'account_sign_in_links'
  | 'team_invitations'
  | 'resends_team'
  | 'resends_recipient'
  | 'oidc_par'
  | 'oidc_token';

/** What guards an account: wrong passwords, and sign-in links mailed to it. */
export type AccountGuard = 'password' | 'sign_in_link';

/** Who an account attempt is about: the account (its e-mail) and the client address it came from. */
export interface AccountAttempt {
  account: string;
  address: string;
}

/**
 * Budgets per bucket and key. State lives in PostgreSQL (rate-limiter-flexible's drizzle store:
 * one atomic upsert per request), so every app process draws on the same budget.
 */
export interface RateLimiters {
  /**
   * Spends one point; throws RATE_LIMITED (with Retry-After) when none is left. `points` sets
   * this key's own budget per window instead of the bucket's (a team's raised API budgets).
   */
  consume: (bucket: RateLimitBucket, key: string, points?: number | null) => Promise<RateLimitResult>;
  /**
   * Spends one point in each bucket, in order, or none: when one refuses, the points already
   * spent are given back, and its RATE_LIMITED is thrown.
   */
  consumeAll: (spends: ReadonlyArray<readonly [RateLimitBucket, string]>) => Promise<void>;
  /**
   * An attempt on an account (a password check, a sign-in link), limited twice: per account and
   * client address, and per account from all addresses together. A point of each is spent before
   * the attempt and both are given back when it succeeds, so only failures count, and parallel
   * attempts can never exceed the budgets between them. An address whose own budget is spent is
   * refused without spending the account's, so a guesser cannot drain the account's budget from
   * one address, and the owner's address keeps its own budget; a correct password is refused
   * like any other attempt once either budget is spent.
   */
  attemptForAccount: <T>(
    guard: AccountGuard,
    who: AccountAttempt,
    run: () => Promise<T>,
    succeeded: (result: T) => boolean,
  ) => Promise<T>;
}

export interface RateLimitResult {
  headers: Record<string, string>;
}

/** Console calls one signed-in user may make per minute: far above what clicking through pages needs. */
export const CONSOLE_CALLS_PER_MINUTE = 300;
/**
 * Decisions: 5 failed password checks (or sign-in links) per account and client address per 15
 * minutes, and 50 per account from all addresses together.
 */
export const ACCOUNT_ATTEMPTS_PER_ADDRESS = { points: 5, seconds: 15 * 60 };
export const ACCOUNT_ATTEMPTS = { points: 50, seconds: 15 * 60 };
/** Invitations one team may send per day (counted from the day's first). */
export const TEAM_INVITATIONS_PER_DAY = 20;
/** Decisions: a team resends at most 100 times an hour, an address is mailed again 10 times a day. */
/** What one identity-provider client may push (PAR) and redeem (token) a minute, each. */
export const OIDC_CLIENT_BUDGET = { points: 60, seconds: 60 };

export const RESEND_BUDGETS = {
  team: { points: 100, seconds: secondsInHour },
  recipient: { points: 10, seconds: secondsInDay },
};

const ACCOUNT_BUCKETS: Record<AccountGuard, { perAddress: RateLimitBucket; perAccount: RateLimitBucket }> = {
  password: { perAddress: 'password_failures', perAccount: 'account_password_failures' },
  sign_in_link: { perAddress: 'sign_in_links', perAccount: 'account_sign_in_links' },
};

function budgets(config: Env): Record<RateLimitBucket, { points: number; seconds: number; prefix: string }> {
  return {
    read: { points: config.RATE_LIMIT_READ_PER_MINUTE, seconds: 60, prefix: 'read' },
    write: { points: config.RATE_LIMIT_WRITE_PER_MINUTE, seconds: 60, prefix: 'write' },
    address: { points: config.RATE_LIMIT_READ_PER_MINUTE, seconds: 60, prefix: 'addr' },
    console_user: { points: CONSOLE_CALLS_PER_MINUTE, seconds: 60, prefix: 'console' },
    password_failures: { ...ACCOUNT_ATTEMPTS_PER_ADDRESS, prefix: 'pwfail' },
    account_password_failures: { ...ACCOUNT_ATTEMPTS, prefix: 'pwfail-all' },
    sign_in_links: { ...ACCOUNT_ATTEMPTS_PER_ADDRESS, prefix: 'signlink' },
    account_sign_in_links: { ...ACCOUNT_ATTEMPTS, prefix: 'signlink-all' },
    team_invitations: { points: TEAM_INVITATIONS_PER_DAY, seconds: secondsInDay, prefix: 'invite' },
    resends_team: { ...RESEND_BUDGETS.team, prefix: 'resend_team' },
    resends_recipient: { ...RESEND_BUDGETS.recipient, prefix: 'resend_to' },
    oidc_par: { ...OIDC_CLIENT_BUDGET, prefix: 'oidc_par' },
    oidc_token: { ...OIDC_CLIENT_BUDGET, prefix: 'oidc_token' },
  };
}

/**
 * An account as its budgets know it: case-blind, and hashed when longer than an e-mail address
 * can be (such a name signs no one in, and a key is limited in size by its index).
 */
function accountKey(account: string): string {
  const normalized = account.trim().toLowerCase();
  return normalized.length <= 254 ? normalized : `sha256:${sha256Hex(normalized)}`;
}

/** The key a bucket counts under: addresses by their network (IPv6 /64), accounts case-blind. */
function normalizedKey(bucket: RateLimitBucket, key: string): string {
  if (bucket === 'address') return addressLimitKey(key);
  if (
    bucket === 'account_password_failures' ||
    bucket === 'account_sign_in_links' ||
    bucket === 'resends_recipient'
  ) {
    return accountKey(key);
  }
  return key;
}

/** An account and the client address attempting it, as one key. */
function accountAddressKey(who: AccountAttempt): string {
  return JSON.stringify([accountKey(who.account), addressLimitKey(who.address)]);
}

function limitDetail(bucket: RateLimitBucket, points: number, retryAfter: string): string {
  switch (bucket) {
    case 'password_failures':
      return `Too many wrong passwords for this account from your address; try again in ${retryAfter} s.`;
    case 'account_password_failures':
      return `Too many wrong passwords for this account; try again in ${retryAfter} s.`;
    case 'sign_in_links':
      return `Too many sign-in links were asked for this account from your address; try again in ${retryAfter} s.`;
    case 'account_sign_in_links':
      return `Too many sign-in links were asked for this account; try again in ${retryAfter} s.`;
    case 'team_invitations':
      return `This team has sent ${points} invitations today; try again in ${retryAfter} s.`;
    case 'resends_team':
      return `This team has sent links again ${points} times in the last hour; retry in ${retryAfter} s.`;
    case 'resends_recipient':
      return `This address has been sent links again ${points} times today; retry in ${retryAfter} s.`;
    case 'write':
      return `Rate limit of ${points} writes per minute exceeded; retry in ${retryAfter} s.`;
    case 'oidc_par':
      return `This client has pushed ${points} authorization requests in the last minute; retry in ${retryAfter} s.`;
    case 'oidc_token':
      return `This client has asked for ${points} tokens in the last minute; retry in ${retryAfter} s.`;
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

  /**
   * A bucket's limiter with another budget: the same window and the same counters (keyPrefix), so
   * a team whose budget an operator changes keeps what it spent in the current minute. One per
   * budget in use, built on first use.
   */
  const withBudget = new Map<string, PreparedRateLimiterDrizzle>();
  function limiterFor(
    bucket: RateLimitBucket,
    points: number | null | undefined,
  ): PreparedRateLimiterDrizzle {
    const standard = byBucket[bucket];
    if (points === null || points === undefined || points === standard.points) return standard;
    const id = `${bucket}:${points}`;
    let limiter = withBudget.get(id);
    if (!limiter) {
      limiter = new PreparedRateLimiterDrizzle({
        storeClient: db,
        schema: rateLimits,
        keyPrefix: standard.keyPrefix,
        points,
        duration: standard.duration,
      });
      withBudget.set(id, limiter);
    }
    return limiter;
  }

  const limiters: RateLimiters = {
    async consume(bucket, rawKey, points) {
      const limiter = limiterFor(bucket, points);
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

    async attemptForAccount(guard, who, run, succeeded) {
      const { perAddress, perAccount } = ACCOUNT_BUCKETS[guard];
      const pairKey = accountAddressKey(who);
      // The address first: one whose own budget is spent is refused without spending the
      // account's; one refused by the account's budget has spent nothing of its own.
      await limiters.consumeAll([
        [perAddress, pairKey],
        [perAccount, who.account],
      ]);
      const result = await run();
      if (succeeded(result)) {
        await Promise.all([
          byBucket[perAddress].reward(pairKey, 1),
          byBucket[perAccount].reward(normalizedKey(perAccount, who.account), 1),
        ]);
      }
      return result;
    },
  };
  return limiters;
}
