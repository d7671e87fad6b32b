import { secondsInDay, secondsInHour } from 'date-fns/constants';
import { RateLimiterDrizzle, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db, Queryable } from '@/db/client';
import { rateLimits } from '@/db/schema';
import { sha256Hex } from '@/server/platform/crypto';
import type { Env } from '@/server/platform/env';
import { AppError, isAppError } from '@/server/platform/errors';
import { recordRateLimited } from '@/server/platform/metrics/instruments';
import { CONTROL_CHARACTER } from '@/server/platform/storable-text';
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
 *   token requests (server/oidc);
 * - `client_auth_failures`, `client_auth_failures_all`: failed client authentications at the
 *   OpenID provider (a wrong client secret), per client and address, and per client from every
 *   address together;
 * - `hashed_answers`: custom answers a team's requests have hashed (scrypt), both modes together:
 *   the CPU a team may spend on them, whatever its request budgets;
 * - `passkey_ceremonies`: a case's passkey requests from its pages (options asked for, answers
 *   sent), so that one link cannot fill the challenges' table or hammer the checks.
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
  | 'oidc_token'
  | 'client_auth_failures'
  | 'client_auth_failures_all'
  | 'hashed_answers'
  | 'passkey_ceremonies';

/** What guards an account: wrong passwords, sign-in links mailed to it, an identity-provider client's secret. */
export type AccountGuard = 'password' | 'sign_in_link' | 'client_secret';

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
   * Where and how a statement of the caller's spends one point of `bucket` as `consume` would (the
   * API key's look-up spends its team's budget in its own round trip): the database the counters
   * are written to, the stored key's prefix, now and the end of a window that would start now.
   */
  spendIn: (bucket: RateLimitBucket) => BudgetSpend;
  /**
   * What `consume` answers, or throws, for a point spent that way: the limiter judges the counter
   * the statement left, which must be `rawKey`'s in `bucket` (`points`: the key's own budget).
   */
  settle: (
    bucket: RateLimitBucket,
    rawKey: string,
    points: number | null | undefined,
    counter: SpentCounter,
  ) => Promise<RateLimitResult>;
  /** Spends `count` points at once (work priced by its size), or none: throws RATE_LIMITED. */
  spend: (bucket: RateLimitBucket, key: string, count: number) => Promise<void>;
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
  /**
   * Counts one failure against an account (per account and client address, then per account from
   * every address), refusing with RATE_LIMITED when either budget is spent: for attempts whose
   * success is never refused (an identity-provider client's secret), only failures slow down.
   */
  failedAttempt: (guard: AccountGuard, who: AccountAttempt) => Promise<void>;
  attemptForAccount: <T>(
    guard: AccountGuard,
    who: AccountAttempt,
    run: () => Promise<T>,
    succeeded: (result: T) => boolean,
  ) => Promise<T>;
}

/**
 * A point of a budget spent by a statement of the caller's (the API key's look-up spends its team's;
 * `RateLimiters.spendIn` says where and under which prefix and window): `db` is where it runs.
 */
export interface BudgetSpend {
  db: Queryable;
  keyPrefix: string;
  nowIso: string;
  expireIso: string;
}

/** The counter a spend left: its stored key, points spent in the window, and the window's end. */
export interface SpentCounter {
  key: string;
  points: number;
  expire: Date;
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

/**
 * Custom answers one team may have hashed a minute (creations, batches, templates): about 15 s of
 * a core's time at ~25 ms each, so no team's bulk creation takes more than a quarter of a core.
 */
export const HASHED_ANSWERS_PER_MINUTE = 600;

export const RESEND_BUDGETS = {
  team: { points: 100, seconds: secondsInHour },
  recipient: { points: 10, seconds: secondsInDay },
};

const ACCOUNT_BUCKETS: Record<AccountGuard, { perAddress: RateLimitBucket; perAccount: RateLimitBucket }> = {
  password: { perAddress: 'password_failures', perAccount: 'account_password_failures' },
  sign_in_link: { perAddress: 'sign_in_links', perAccount: 'account_sign_in_links' },
  client_secret: { perAddress: 'client_auth_failures', perAccount: 'client_auth_failures_all' },
};

/**
 * Failed client authentications at the OpenID provider: 10 per client and address in 15 minutes
 * (an identity provider whose secret was rotated without a grace period gets there quickly, and
 * waits out the window), 100 per client from every address (its servers are many).
 */
export const CLIENT_AUTH_FAILURES_PER_ADDRESS = { points: 10, seconds: 15 * 60 };
export const CLIENT_AUTH_FAILURES = { points: 100, seconds: 15 * 60 };

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
    client_auth_failures: { ...CLIENT_AUTH_FAILURES_PER_ADDRESS, prefix: 'clientauth' },
    client_auth_failures_all: { ...CLIENT_AUTH_FAILURES, prefix: 'clientauth-all' },
    hashed_answers: { points: HASHED_ANSWERS_PER_MINUTE, seconds: 60, prefix: 'hashed_answers' },
    passkey_ceremonies: { ...PASSKEY_CEREMONIES_PER_CASE, prefix: 'passkey_ceremonies' },
  };
}

/**
 * A case's passkey requests (each ceremony is two: its options, then its answer) per ten minutes:
 * a subject who cancels the prompt a few times and tries again stays far below it.
 */
export const PASSKEY_CEREMONIES_PER_CASE = { points: 30, seconds: 10 * 60 };

/**
 * An account as its budgets know it: case-blind, and hashed when longer than an e-mail address
 * can be (such a name signs no one in, and a key is limited in size by its index).
 */
function accountKey(account: string): string {
  const normalized = account.trim().toLowerCase();
  return normalized.length <= 254 ? normalized : `sha256:${sha256Hex(normalized)}`;
}

/**
 * A key as it can be stored: one holding a control character or a lone surrogate (an account
 * name or a client id from a hostile request), which PostgreSQL refuses in text, by its hash.
 */
function storableKey(key: string): string {
  return key.isWellFormed() && !CONTROL_CHARACTER.test(key) ? key : `sha256:${sha256Hex(key.toWellFormed())}`;
}

/** The key a bucket counts under: addresses by their network (IPv6 /64), accounts case-blind. */
function normalizedKey(bucket: RateLimitBucket, rawKey: string): string {
  const key = storableKey(rawKey);
  if (bucket === 'address') return addressLimitKey(key);
  if (
    bucket === 'account_password_failures' ||
    bucket === 'account_sign_in_links' ||
    bucket === 'client_auth_failures_all' ||
    bucket === 'resends_recipient'
  ) {
    return accountKey(key);
  }
  return key;
}

/** An account and the client address attempting it, as one key. */
function accountAddressKey(who: AccountAttempt): string {
  return JSON.stringify([accountKey(storableKey(who.account)), addressLimitKey(who.address)]);
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
    case 'client_auth_failures':
      return `Too many failed client authentications for this client from your address; retry in ${retryAfter} s.`;
    case 'client_auth_failures_all':
      return `Too many failed client authentications for this client; retry in ${retryAfter} s.`;
    case 'passkey_ceremonies':
      return `This case has made ${points} passkey requests in the last ten minutes; retry in ${retryAfter} s.`;
    case 'hashed_answers':
      return `Your team has had ${points} custom answers hashed in the last minute (each costs real CPU time); retry in ${retryAfter} s.`;
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
  /** Counters already upserted by a caller's statement, by stored key: `_upsert` answers with them. */
  readonly #spent = new Map<string, SpentCounter>();

  constructor(options: ConstructorParameters<typeof RateLimiterDrizzle>[0] & { storeClient: Db }) {
    super(options);
    this.#db = options.storeClient;
  }

  /**
   * The library's own judgement (limits, remaining points, the window's end) of a point a caller's
   * statement spent: consume() asks `_upsert` for the counter, and gets the one given.
   */
  settle(key: string, counter: SpentCounter): Promise<RateLimiterRes> {
    const stored = this.getKey(key);
    if (counter.key !== stored) {
      throw new Error(`a spend counted under ${counter.key}, not ${stored}: the statement keys it otherwise`);
    }
    this.#spent.set(stored, counter);
    try {
      // consume() calls _upsert before it returns its promise: the counter is taken by then.
      return this.consume(key, 1);
    } finally {
      this.#spent.delete(stored);
    }
  }

  async _upsert(key: string, points: number, msDuration: number, forceExpire = false): Promise<unknown> {
    // A counter settle() was given (and takes back once consume() has asked for it).
    const spent = this.#spent.get(key);
    if (spent) return spent;
    // Stryker disable next-line all: equivalent for every budget here; forced expiry (block, set) and windowless budgets are never used, and both paths store the same counter.
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
    // What follows only saves building limiters: one built anew, or for the standard budget again,
    // counts in the same store under the same prefix with the same points. Mutants that only
    // change what is cached are equivalent.
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent (see above).
    if (points === null || points === undefined || points === standard.points) return standard;
    // Stryker disable next-line StringLiteral: equivalent (see above).
    const id = `${bucket}:${points}`;
    let limiter = withBudget.get(id);
    // Stryker disable next-line ConditionalExpression: equivalent (see above).
    if (!limiter) {
      limiter = new PreparedRateLimiterDrizzle({
        storeClient: db,
        schema: rateLimits,
        keyPrefix: standard.keyPrefix,
        points,
        duration: standard.duration,
      });
      // Stryker disable next-line CallExpression: equivalent (see above).
      withBudget.set(id, limiter);
    }
    return limiter;
  }

  /** Spends `count` points of `rawKey`'s budget in `bucket` (`points`: the key's own budget). */
  async function spendPoints(
    bucket: RateLimitBucket,
    rawKey: string,
    points: number | null | undefined,
    /** Points to spend, or the counter a caller's statement left spending one. */
    spend: number | SpentCounter,
  ): Promise<RateLimitResult> {
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
      const res = await (typeof spend === 'number'
        ? limiter.consume(key, spend)
        : limiter.settle(key, spend));
      return { headers: headersFor(res) };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        const headers = headersFor(rejection);
        headers['Retry-After'] = String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
        recordRateLimited(bucket);
        throw new AppError(
          'RATE_LIMITED',
          limitDetail(bucket, limiter.points, headers['Retry-After']),
          headers,
        );
      }
      throw rejection;
    }
  }

  const limiters: RateLimiters = {
    consume: (bucket, rawKey, points) => spendPoints(bucket, rawKey, points, 1),

    spendIn(bucket) {
      const limiter = byBucket[bucket];
      // The window's edges from the wall clock the library judges them by (see _upsert).
      const now = new Date();
      return {
        db,
        keyPrefix: `${limiter.keyPrefix}:`,
        nowIso: now.toISOString(),
        expireIso: new Date(now.getTime() + limiter.duration * 1000).toISOString(),
      };
    },

    settle: (bucket, rawKey, points, counter) => spendPoints(bucket, rawKey, points, counter),

    async spend(bucket, key, count) {
      if (count <= 0) return;
      try {
        await spendPoints(bucket, key, null, count);
      } catch (refusal) {
        // The store counts a refused spend too: give it back, so work refused costs nothing.
        // Stryker disable next-line ConditionalExpression: equivalent; any other refusal is the store failing, and giving the points back through the same store fails alike.
        if (isAppError(refusal) && refusal.appCode === 'RATE_LIMITED') {
          await byBucket[bucket].reward(normalizedKey(bucket, key), count);
        }
        throw refusal;
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

    failedAttempt(guard, who) {
      const { perAddress, perAccount } = ACCOUNT_BUCKETS[guard];
      return limiters.consumeAll([
        [perAddress, accountAddressKey(who)],
        [perAccount, who.account],
      ]);
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
