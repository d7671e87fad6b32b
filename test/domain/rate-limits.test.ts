/**
 * The service's budgets (server/rate-limits) against a real PostgreSQL, where every process counts
 * them: a budget spent point by point and refused past its end with the headers and the reason a
 * client reads, a team's own budget, work spent whole or not at all, attempts on an account where
 * only failures count and the guessing address is refused first, and keys as they are stored.
 */
import { createHash } from 'node:crypto';
import { and, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimits } from '@/db/schema';
import { parseEnv } from '@/server/platform/env';
import { isAppError } from '@/server/platform/errors';
import { enableMetrics } from '@/server/platform/metrics/instruments';
import {
  ACCOUNT_ATTEMPTS_PER_ADDRESS,
  CLIENT_AUTH_FAILURES_PER_ADDRESS,
  createRateLimiters,
  HASHED_ANSWERS_PER_MINUTE,
  type RateLimiters,
} from '@/server/rate-limits/limiters';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;
let limiters: RateLimiters;

beforeAll(async () => {
  database = await createTestDatabase();
  limiters = createRateLimiters(
    database.db,
    parseEnv({ NODE_ENV: 'test', RATE_LIMIT_READ_PER_MINUTE: '3', RATE_LIMIT_WRITE_PER_MINUTE: '2' }),
  );
});

afterAll(async () => {
  await database?.close();
});

async function refused(run: () => Promise<unknown>) {
  const error = await run().then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!isAppError(error)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

const stored = async (fragment: string) =>
  database.db
    .select()
    .from(rateLimits)
    .where(and(like(rateLimits.key, `%${fragment}%`)));

describe('budgets', () => {
  it('judge a point spent by a statement of its own as consume would, under the key the limiter stores', async () => {
    // The API key's look-up spends its team's budget in its own round trip (keyLookupSpending):
    // the limiter says where and under which prefix, then judges the counter the statement left.
    const spend = limiters.spendIn('write');
    expect(spend.keyPrefix).toBe('write:');
    const windowMs = new Date(spend.expireIso).getTime() - new Date(spend.nowIso).getTime();
    expect(windowMs).toBe(60_000);
    const expire = new Date(Date.now() + 30_000);
    const within = await limiters.settle('write', 'team-s', null, { key: 'write:team-s', points: 2, expire });
    expect(within.headers['X-RateLimit-Limit']).toBe('2');
    expect(within.headers['X-RateLimit-Remaining']).toBe('0');
    expect(Number(within.headers['X-RateLimit-Reset'])).toBe(Math.ceil(expire.getTime() / 1000));
    // Past the budget (the configured 2, or the team's own 5): refused as consume refuses.
    const over = await refused(() =>
      limiters.settle('write', 'team-s', null, { key: 'write:team-s', points: 3, expire }),
    );
    expect(over.appCode).toBe('RATE_LIMITED');
    expect(Number(over.headers['Retry-After'])).toBeGreaterThanOrEqual(29);
    expect(
      (await limiters.settle('write', 'team-s', 5, { key: 'write:team-s', points: 3, expire })).headers[
        'X-RateLimit-Remaining'
      ],
    ).toBe('2');
    // A counter of another key (a statement keying the budget otherwise) is a fault, not a spend.
    await expect(
      limiters.settle('write', 'team-s', null, { key: 'write:team-t', points: 1, expire }),
    ).rejects.toThrow(/not write:team-s/);
    // Nothing was written by judging: the counters are the statement's. A consume after it
    // counts in the store again, not on the counter a settle was given.
    expect(await stored('team-s')).toEqual([]);
    expect((await limiters.consume('write', 'team-s')).headers['X-RateLimit-Remaining']).toBe('1');
    expect((await stored('team-s')).map((row) => [row.key, row.points])).toEqual([['write:team-s', 1]]);
  });

  it('spends a point a request with the rate-limit headers, and refuses past the budget saying which', async () => {
    const windowEnd = Math.ceil((Date.now() + 60_000) / 1000);
    const first = await limiters.consume('read', 'team-a');
    expect(first.headers['X-RateLimit-Limit']).toBe('3');
    expect(first.headers['X-RateLimit-Remaining']).toBe('2');
    expect(Math.abs(Number(first.headers['X-RateLimit-Reset']) - windowEnd)).toBeLessThanOrEqual(2);
    expect((await limiters.consume('read', 'team-a')).headers['X-RateLimit-Remaining']).toBe('1');
    expect((await limiters.consume('read', 'team-a')).headers['X-RateLimit-Remaining']).toBe('0');
    const error = await refused(() => limiters.consume('read', 'team-a'));
    expect(error.appCode).toBe('RATE_LIMITED');
    expect(error.detail).toMatch(/^Rate limit of 3 requests per minute exceeded; retry in \d+ s\.$/);
    expect(Number(error.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(Number(error.headers['Retry-After'])).toBeLessThanOrEqual(60);
    expect(error.headers['X-RateLimit-Limit']).toBe('3');
    expect(error.headers['X-RateLimit-Remaining']).toBe('0');
    // Another key, and another bucket, have budgets of their own.
    expect((await limiters.consume('read', 'team-b')).headers['X-RateLimit-Remaining']).toBe('2');
    expect((await limiters.consume('write', 'team-a')).headers['X-RateLimit-Remaining']).toBe('1');
    await limiters.consume('write', 'team-a');
    // Each refusal is counted where an operator watches (vouch_rate_limited_total, by budget).
    const refusals = async () =>
      (await enableMetrics('web').getSingleMetric('vouch_rate_limited_total')?.get())?.values.find(
        (value) => value.labels.budget === 'write',
      )?.value ?? 0;
    const before = await refusals();
    expect((await refused(() => limiters.consume('write', 'team-a'))).detail).toMatch(
      /^Rate limit of 2 writes per minute exceeded; retry in \d+ s\.$/,
    );
    expect(await refusals()).toBe(before + 1);
  });

  it('takes a team’s own budget instead of the configured one, counting in the same window', async () => {
    expect((await limiters.consume('read', 'team-c', 5)).headers).toMatchObject({
      'X-RateLimit-Limit': '5',
      'X-RateLimit-Remaining': '4',
    });
    // Back to the default: the point already spent still counts.
    expect((await limiters.consume('read', 'team-c')).headers['X-RateLimit-Remaining']).toBe('1');
    expect((await limiters.consume('read', 'team-c', null)).headers['X-RateLimit-Remaining']).toBe('0');
    expect((await limiters.consume('read', 'team-c', 5)).headers['X-RateLimit-Remaining']).toBe('1');
  });

  it('spends work whole or not at all: a refused spend costs nothing', async () => {
    await limiters.spend('hashed_answers', 'team-d', 0);
    expect(await stored('team-d')).toEqual([]);
    await limiters.spend('hashed_answers', 'team-d', HASHED_ANSWERS_PER_MINUTE - 10);
    const error = await refused(() => limiters.spend('hashed_answers', 'team-d', 11));
    expect(error.detail).toMatch(
      new RegExp(`^Your team has had ${HASHED_ANSWERS_PER_MINUTE} custom answers hashed in the last minute`),
    );
    const [row] = await stored('team-d');
    expect(row?.points).toBe(HASHED_ANSWERS_PER_MINUTE - 10);
    await limiters.spend('hashed_answers', 'team-d', 10);
    expect((await stored('team-d'))[0]?.points).toBe(HASHED_ANSWERS_PER_MINUTE);
  });

  it('spends in several buckets or none: a refusal gives back what was spent before it', async () => {
    for (let i = 0; i < 5; i++) await limiters.consume('team_invitations', 'team-e');
    for (let i = 0; i < 15; i++) await limiters.consume('team_invitations', 'team-e');
    await expect(
      limiters.consumeAll([
        ['resends_team', 'team-e'],
        ['team_invitations', 'team-e'],
      ]),
    ).rejects.toMatchObject({ appCode: 'RATE_LIMITED' });
    const [resends] = await stored('resend_team:team-e');
    expect(resends?.points ?? 0).toBe(0);
    await limiters.consumeAll([['resends_team', 'team-e']]);
    expect((await stored('resend_team:team-e'))[0]?.points).toBe(1);
  });
});

describe('attempts on an account', () => {
  it('count failures only, per account and address: the guessing address is refused, a right password too, another address is not', async () => {
    const who = { account: 'Owner@Acme.test', address: '198.51.100.7' };
    for (let i = 0; i < ACCOUNT_ATTEMPTS_PER_ADDRESS.points; i++) {
      expect(
        await limiters.attemptForAccount(
          'password',
          who,
          async () => false,
          (ok) => ok,
        ),
      ).toBe(false);
    }
    const error = await refused(() =>
      limiters.attemptForAccount(
        'password',
        who,
        async () => true,
        (ok) => ok,
      ),
    );
    expect(error.detail).toMatch(
      /^Too many wrong passwords for this account from your address; try again in \d+ s\.$/,
    );
    // The account is counted case-blind, from any spelling.
    await expect(
      limiters.attemptForAccount(
        'password',
        { ...who, account: 'owner@acme.TEST' },
        async () => true,
        (ok) => ok,
      ),
    ).rejects.toMatchObject({ appCode: 'RATE_LIMITED' });
    // Another address: its own budget; a success gives both points back.
    const elsewhere = { ...who, address: '203.0.113.9' };
    expect(
      await limiters.attemptForAccount(
        'password',
        elsewhere,
        async () => true,
        (ok) => ok,
      ),
    ).toBe(true);
    expect(
      await limiters.attemptForAccount(
        'password',
        elsewhere,
        async () => true,
        (ok) => ok,
      ),
    ).toBe(true);
    const rows = await stored('owner@acme.test');
    expect(rows.find((row) => row.key.startsWith('pwfail-all'))?.points).toBe(
      ACCOUNT_ATTEMPTS_PER_ADDRESS.points,
    );
  });

  it('an IPv6 address is limited per /64', async () => {
    const a = { account: 'six@acme.test', address: '2001:db8:1:2::1' };
    const b = { account: 'six@acme.test', address: '2001:db8:1:2:ffff::9' };
    for (let i = 0; i < ACCOUNT_ATTEMPTS_PER_ADDRESS.points; i++) {
      await limiters.attemptForAccount(
        'sign_in_link',
        i % 2 ? a : b,
        async () => false,
        (ok) => ok,
      );
    }
    const error = await refused(() =>
      limiters.attemptForAccount(
        'sign_in_link',
        a,
        async () => false,
        (ok) => ok,
      ),
    );
    expect(error.detail).toMatch(/^Too many sign-in links were asked for this account from your address/);
    expect(
      await limiters.attemptForAccount(
        'sign_in_link',
        { ...a, address: '2001:db8:1:3::1' },
        async () => false,
        (ok) => ok,
      ),
    ).toBe(false);
  });

  it('failures of a client secret: per client and address, then 429 naming the client', async () => {
    const who = { account: 'vouch_client_x', address: '192.0.2.1' };
    for (let i = 0; i < CLIENT_AUTH_FAILURES_PER_ADDRESS.points; i++)
      await limiters.failedAttempt('client_secret', who);
    const error = await refused(() => limiters.failedAttempt('client_secret', who));
    expect(error.detail).toMatch(
      /^Too many failed client authentications for this client from your address; retry in \d+ s\.$/,
    );
    await limiters.failedAttempt('client_secret', { ...who, address: '192.0.2.2' });
  });

  it('stores a key holding NUL or a lone surrogate by its hash (PostgreSQL refuses them in text)', async () => {
    await limiters.failedAttempt('client_secret', { account: 'a\u0000b', address: '192.0.2.3' });
    await limiters.consume('address', '192.0.2.4');
    await limiters.attemptForAccount(
      'password',
      { account: '\ud800@x.test', address: '192.0.2.5' },
      async () => false,
      (ok) => ok,
    );
    const keys = (await database.db.select().from(rateLimits)).map((row) => row.key);
    expect(keys.filter((key) => key.includes('\u0000') || !key.isWellFormed())).toEqual([]);
    expect(keys.some((key) => /^clientauth-all:sha256:[0-9a-f]{64}$/.test(key))).toBe(true);
  });
});

/** Every budget as decisions fix it: its counters' prefix, size, window and what a refusal says. */
const EVERY_BUDGET = [
  ['read', 'read', 3, 60, 'Rate limit of 3 requests per minute exceeded; retry in N s.'],
  ['write', 'write', 2, 60, 'Rate limit of 2 writes per minute exceeded; retry in N s.'],
  ['address', 'addr', 3, 60, 'Rate limit of 3 requests per minute exceeded; retry in N s.'],
  ['console_user', 'console', 300, 60, 'Rate limit of 300 requests per minute exceeded; retry in N s.'],
  [
    'password_failures',
    'pwfail',
    5,
    900,
    'Too many wrong passwords for this account from your address; try again in N s.',
  ],
  [
    'account_password_failures',
    'pwfail-all',
    50,
    900,
    'Too many wrong passwords for this account; try again in N s.',
  ],
  [
    'sign_in_links',
    'signlink',
    5,
    900,
    'Too many sign-in links were asked for this account from your address; try again in N s.',
  ],
  [
    'account_sign_in_links',
    'signlink-all',
    50,
    900,
    'Too many sign-in links were asked for this account; try again in N s.',
  ],
  ['team_invitations', 'invite', 20, 86_400, 'This team has sent 20 invitations today; try again in N s.'],
  [
    'resends_team',
    'resend_team',
    100,
    3_600,
    'This team has sent links again 100 times in the last hour; retry in N s.',
  ],
  [
    'resends_recipient',
    'resend_to',
    10,
    86_400,
    'This address has been sent links again 10 times today; retry in N s.',
  ],
  [
    'oidc_par',
    'oidc_par',
    60,
    60,
    'This client has pushed 60 authorization requests in the last minute; retry in N s.',
  ],
  [
    'oidc_token',
    'oidc_token',
    60,
    60,
    'This client has asked for 60 tokens in the last minute; retry in N s.',
  ],
  [
    'client_auth_failures',
    'clientauth',
    10,
    900,
    'Too many failed client authentications for this client from your address; retry in N s.',
  ],
  [
    'client_auth_failures_all',
    'clientauth-all',
    100,
    900,
    'Too many failed client authentications for this client; retry in N s.',
  ],
  [
    'hashed_answers',
    'hashed_answers',
    600,
    60,
    'Your team has had 600 custom answers hashed in the last minute (each costs real CPU time); retry in N s.',
  ],
] as const;

describe('every budget', () => {
  it.each(EVERY_BUDGET)(
    '%s: counted under "%s:", %d points a window of %d s, then refused saying why',
    async (bucket, prefix, points, seconds, detail) => {
      const key = `every-${bucket}`;
      const started = Date.now();
      const first = await limiters.consume(bucket, key);
      expect(first.headers['X-RateLimit-Limit']).toBe(String(points));
      const rows = await database.db
        .select()
        .from(rateLimits)
        .where(and(like(rateLimits.key, `%${key}%`)));
      // Its own prefix: no two budgets share a counter.
      expect(rows.map((row) => row.key)).toEqual([`${prefix}:${key}`]);
      const window = ((rows[0]?.expire?.getTime() ?? 0) - started) / 1000;
      expect(window).toBeGreaterThan(seconds - 5);
      expect(window).toBeLessThan(seconds + 5);
      if (points > 1) await limiters.spend(bucket, key, points - 1);
      const refusal = await refused(() => limiters.consume(bucket, key));
      const retryAfter = Number(refusal.headers['Retry-After']);
      // The time left in the window, whole seconds, never under 1.
      expect(retryAfter).toBeGreaterThan(seconds - 10);
      expect(retryAfter).toBeLessThanOrEqual(seconds);
      expect(refusal.detail).toBe(detail.replace('N', String(retryAfter)));
    },
  );

  it('counts an account case-blind and trimmed where an account is the key, and an address by its /64', async () => {
    for (const bucket of [
      'account_password_failures',
      'account_sign_in_links',
      'client_auth_failures_all',
      'resends_recipient',
    ] as const) {
      await limiters.consume(bucket, ' Person@Blind.test ');
      const second = await limiters.consume(bucket, 'person@blind.test');
      const points = EVERY_BUDGET.find(([name]) => name === bucket)?.[2] ?? 0;
      expect([bucket, second.headers['X-RateLimit-Remaining']]).toEqual([bucket, String(points - 2)]);
    }
    // Elsewhere a key is as given: a team id or a client id is not folded.
    await limiters.consume('oidc_par', 'Client-X');
    expect((await limiters.consume('oidc_par', 'client-x')).headers['X-RateLimit-Remaining']).toBe('59');
    await limiters.consume('address', '2001:db8:1:2::1');
    expect((await limiters.consume('address', '2001:db8:1:2:ffff::9')).headers['X-RateLimit-Remaining']).toBe(
      '1',
    );
    expect((await limiters.consume('address', '2001:db8:1:3::1')).headers['X-RateLimit-Remaining']).toBe('2');
  });

  it('keeps an account name up to 254 characters as it is, and a longer one by its hash', async () => {
    const longest = `${'a'.repeat(244)}@long.test`;
    expect(longest).toHaveLength(254);
    await limiters.consume('account_password_failures', longest.toUpperCase());
    expect(await stored(longest)).toHaveLength(1);
    const tooLong = `${'b'.repeat(245)}@long.test`;
    await limiters.consume('account_password_failures', tooLong);
    expect(await stored(tooLong)).toEqual([]);
    const hashed = await stored(`pwfail-all:sha256:${createHash('sha256').update(tooLong).digest('hex')}`);
    expect(hashed).toHaveLength(1);
  });
});
