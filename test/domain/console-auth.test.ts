/**
 * The console's sign-in as better-auth is configured for it (server/auth/console-auth.ts), driven
 * in-process through its own request handler against a real PostgreSQL: a password sign-in and the
 * session cookie it sets, the expired one-time password, no sign-up, the sign-in link mailed only to
 * an account or handed over in place, the budgets of each endpoint, and the cookie signing key kept
 * in the database (or the operator's) and shared by every process.
 */
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { connectDatabase, type Database } from '@/db/client';
import { appSecrets, authVerifications, mailOutbox } from '@/db/schema';
import { changePassword } from '@/server/application/session/change-password';
import {
  AUTH_BASE_PATH,
  consoleAuth,
  MIN_PASSWORD_LENGTH,
  SIGN_IN_LINK_TTL_SECONDS,
  signInLinkInPlace,
} from '@/server/auth/console-auth';
import { checkPassword, createTeamOwner } from '@/server/auth/team-members';
import { CLIENT_ADDRESS_HEADER } from '@/server/platform/client-address-header';
import { systemClock } from '@/server/platform/clock';
import { parseEnv } from '@/server/platform/env';
import type { RateLimiters } from '@/server/rate-limits/limiters';
import { createTeam } from '@/server/teams/manage-teams';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

const BASE = 'http://localhost:3999';
const config = parseEnv({ NODE_ENV: 'test', BASE_URL: BASE });
let database: TestDatabase;
let teamId: string;
let addressCount = 0;

/** Each call its own client address, so one test's budget never spends another's. */
function freshAddress(): string {
  addressCount += 1;
  return `203.0.113.${addressCount}`;
}

async function post(
  path: string,
  body: unknown,
  options: { address?: string; env?: typeof config; db?: TestDatabase['db'] } = {},
): Promise<Response> {
  const auth = await consoleAuth(options.db ?? pool.db, options.env ?? config);
  return auth.handler(
    new Request(`${(options.env ?? config).BASE_URL}${AUTH_BASE_PATH}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: (options.env ?? config).BASE_URL,
        [CLIENT_ADDRESS_HEADER]: options.address ?? freshAddress(),
      },
      body: JSON.stringify(body),
    }),
  );
}

function setCookies(response: Response): string[] {
  return response.headers.getSetCookie();
}

beforeAll(async () => {
  database = await createTestDatabase();
  teamId = (await createTeam(database.db, { name: 'Console', adminEmail: 'first@console.test' }, systemClock))
    .team.id;
});

/**
 * Each test's own pool, as each process has one: better-auth is configured once per pool, so each
 * test runs that configuration itself (and a mutation tester sees every test cover it).
 */
let pool: Database;
beforeEach(() => {
  pool = connectDatabase(database.url, { max: 4 });
});
afterEach(async () => {
  vi.useRealTimers();
  await pool.close();
});

afterAll(async () => {
  await database?.close();
});

describe('password sign-in', () => {
  it('is mounted at /api/auth; a sign-in link lasts 15 minutes', () => {
    expect(AUTH_BASE_PATH).toBe('/api/auth');
    expect(SIGN_IN_LINK_TTL_SECONDS).toBe(900);
  });

  it('keeps a session 7 days, renewed when used a day after it was last renewed, not sooner', async () => {
    const owner = await createTeamOwner(database.db, {
      teamId,
      email: 'renew@console.test',
      now: new Date(),
    });
    const signIn = await post('/sign-in/email', {
      email: 'renew@console.test',
      password: owner.oneTimePassword,
    });
    const cookie = setCookies(signIn)
      .find((entry) => entry.includes('vouch.session_token='))
      ?.split(';')[0];
    const auth = await consoleAuth(pool.db, config);
    const expiry = async () => {
      const session = await auth.api.getSession({ headers: new Headers({ cookie: cookie ?? '' }) });
      return session?.session.expiresAt.getTime() ?? 0;
    };
    const first = await expiry();
    expect(Math.abs(first - (Date.now() + 7 * 86_400_000))).toBeLessThan(60_000);
    const start = Date.now();
    // Only the clock moves: the driver's timers stay real.
    vi.useFakeTimers({ toFake: ['Date'], now: start + 23 * 3_600_000 });
    expect(await expiry()).toBe(first);
    vi.setSystemTime(start + 25 * 3_600_000);
    const renewed = await expiry();
    expect(Math.abs(renewed - (start + 25 * 3_600_000 + 7 * 86_400_000))).toBeLessThan(60_000);
  });

  it('signs an owner in with the one-time password: a session cookie, HttpOnly, Lax, for 7 days', async () => {
    const owner = await createTeamOwner(database.db, { teamId, email: 'pw@console.test', now: new Date() });
    const wrong = await post('/sign-in/email', {
      email: 'pw@console.test',
      password: 'not-the-password-at-all',
    });
    expect(wrong.status).toBe(401);
    expect(setCookies(wrong)).toEqual([]);

    const response = await post('/sign-in/email', {
      email: 'pw@console.test',
      password: owner.oneTimePassword,
    });
    expect(response.status).toBe(200);
    const session = setCookies(response).find((cookie) => cookie.includes('vouch.session_token='));
    expect(session).toBeDefined();
    // http://localhost is a secure origin to a browser, so the cookie is Secure and __Secure- named.
    expect(session).toMatch(/^__Secure-vouch\.session_token=/);
    expect(session).toMatch(/; HttpOnly/i);
    expect(session).toMatch(/; SameSite=Lax/i);
    expect(session).toMatch(/; Secure/i);
    expect(session).toMatch(/; Path=\//);
    expect(session).toMatch(new RegExp(`; Max-Age=${7 * 86_400}(;|$)`));
  });

  it('refuses a one-time password past its 7 days with its own code, and a wrong one as any other', async () => {
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000);
    const owner = await createTeamOwner(database.db, {
      teamId,
      email: 'old@console.test',
      now: eightDaysAgo,
    });
    const expired = await post('/sign-in/email', {
      email: 'old@console.test',
      password: owner.oneTimePassword,
    });
    expect(expired.status).toBe(401);
    const body = (await expired.json()) as { code: string; message: string };
    expect(body.code).toBe('ONE_TIME_PASSWORD_EXPIRED');
    expect(body.message).toBe(
      'This one-time password has expired (it worked for 7 days). Ask for a sign-in link instead, then choose a password.',
    );
    expect(
      setCookies(expired).some((cookie) => cookie.includes('session_token=') && !/Max-Age=0/.test(cookie)),
    ).toBe(false);

    const wrong = await post('/sign-in/email', {
      email: 'old@console.test',
      password: 'not-the-password-at-all',
    });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { code: string }).code).not.toBe('ONE_TIME_PASSWORD_EXPIRED');
    // What the refusal says to do works: a sign-in link signs the same person in.
    const link = await signInLinkInPlace(pool.db, config, {
      email: 'old@console.test',
      callbackPath: '/console',
      headers: new Headers({ [CLIENT_ADDRESS_HEADER]: freshAddress() }),
    });
    const auth = await consoleAuth(pool.db, config);
    const byLink = await auth.handler(
      new Request(link, { headers: { [CLIENT_ADDRESS_HEADER]: freshAddress() } }),
    );
    expect(setCookies(byLink).some((cookie) => /vouch\.session_token=[^;]/.test(cookie))).toBe(true);
  });

  it("asks a one-time password's holder who signed in over 10 minutes ago for it again", async () => {
    const now = new Date();
    const owner = await createTeamOwner(database.db, { teamId, email: 'stale@auth.test', now });
    const choose = (signedInAt: Date) =>
      changePassword(
        {
          db: database.db,
          env: config,
          clock: () => now,
          // Refused before any budget is spent or better-auth is asked.
          rateLimiters: undefined as unknown as RateLimiters,
          clientAddress: freshAddress(),
          user: { id: owner.userId, email: owner.email },
          signedInAt,
          sessionHeaders: new Headers(),
        },
        { newPassword: 'a-new-password' },
      );
    await expect(choose(new Date(now.getTime() - 11 * 60_000))).rejects.toMatchObject({
      appCode: 'FORBIDDEN',
      message: expect.stringMatching(/^Sign in again with your one-time password/),
    });
    expect(await checkPassword(database.db, owner.userId, owner.oneTimePassword ?? '')).toBe(true);
    expect(await checkPassword(database.db, owner.userId, 'a-new-password')).toBe(false);
  });

  it('has no sign-up: people join through the operator or an invitation', async () => {
    const response = await post('/sign-up/email', {
      email: 'stranger@console.test',
      password: 'x'.repeat(MIN_PASSWORD_LENGTH),
      name: 'Stranger',
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    const [row] =
      await database.sql`SELECT count(*)::int AS n FROM auth_users WHERE email = 'stranger@console.test'`;
    expect(row?.n).toBe(0);
  });

  it('allows 10 password attempts a minute from one address, then 429', async () => {
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const response = await post(
        '/sign-in/email',
        { email: 'nobody@console.test', password: 'not-the-password-at-all' },
        { address },
      );
      statuses.push(response.status);
    }
    expect(statuses.slice(0, 10).every((status) => status === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
    // Another address is not held back by the first one's guessing.
    const other = await post('/sign-in/email', {
      email: 'nobody@console.test',
      password: 'not-the-password-at-all',
    });
    expect(other.status).toBe(401);
  });
});

describe('sign-in links', () => {
  it('mails a link that works once within 15 minutes, only to an address with an account', async () => {
    await createTeamOwner(database.db, { teamId, email: 'link@console.test', now: new Date() });
    const response = await post('/sign-in/magic-link', {
      email: 'link@console.test',
      callbackURL: '/console',
    });
    expect(response.status).toBe(200);
    const stranger = await post('/sign-in/magic-link', {
      email: 'stranger@console.test',
      callbackURL: '/console',
    });
    expect(stranger.status).toBe(200);

    const mails = await database.db.select().from(mailOutbox);
    expect(mails.map((mail) => mail.to)).toEqual(['link@console.test']);
    expect(mails[0]?.subject).toBe('Your Vouch console sign-in link');
    const url = /https?:\/\/\S+/.exec(mails[0]?.text ?? '')?.[0];
    expect(url?.startsWith(`${BASE}${AUTH_BASE_PATH}/magic-link/verify?token=`)).toBe(true);
    expect(mails[0]?.text).toContain('The link works once and expires in 15 minutes.');

    // better-auth keeps only the token's hash, for 15 minutes.
    const token = new URL(url ?? '').searchParams.get('token') ?? '';
    const kept = await database.db.select().from(authVerifications);
    expect(kept.some((row) => row.identifier.includes(token) || row.value.includes(token))).toBe(false);
    const linkRow = kept.find((row) => row.value.includes('link@console.test'));
    expect(linkRow).toBeDefined();
    const lifetime = ((linkRow?.expiresAt.getTime() ?? 0) - (linkRow?.createdAt.getTime() ?? 0)) / 1000;
    expect(Math.abs(lifetime - SIGN_IN_LINK_TTL_SECONDS)).toBeLessThan(2);

    const auth = await consoleAuth(pool.db, config);
    const open = () =>
      auth.handler(new Request(url ?? '', { headers: { [CLIENT_ADDRESS_HEADER]: freshAddress() } }));
    const first = await open();
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe(`${BASE}/console`);
    expect(setCookies(first).some((cookie) => cookie.includes('vouch.session_token='))).toBe(true);
    const second = await open();
    expect(setCookies(second).some((cookie) => /vouch\.session_token=[^;]/.test(cookie))).toBe(false);
  });

  it('mails the link to an account however the case of its address is typed', async () => {
    await createTeamOwner(database.db, { teamId, email: 'cased@console.test', now: new Date() });
    const response = await post('/sign-in/magic-link', {
      email: 'Cased@Console.TEST',
      callbackURL: '/console',
    });
    expect(response.status).toBe(200);
    const mails = await database.db.select().from(mailOutbox);
    expect(mails.filter((mail) => mail.to.toLowerCase() === 'cased@console.test')).toHaveLength(1);
  });

  it('allows 5 link requests a minute from one address, then 429', async () => {
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await post('/sign-in/magic-link', { email: 'stranger@console.test' }, { address });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('hands a link to code in this process instead of mailing it', async () => {
    await createTeamOwner(database.db, { teamId, email: 'inplace@console.test', now: new Date() });
    const before = await database.db
      .select()
      .from(mailOutbox)
      .where(eq(mailOutbox.to, 'inplace@console.test'));
    const url = await signInLinkInPlace(pool.db, config, {
      email: 'inplace@console.test',
      callbackPath: '/console/welcome',
      headers: new Headers({ [CLIENT_ADDRESS_HEADER]: freshAddress() }),
    });
    expect(url.startsWith(`${BASE}${AUTH_BASE_PATH}/magic-link/verify?token=`)).toBe(true);
    expect(new URL(url).searchParams.get('callbackURL')).toBe('/console/welcome');
    const after = await database.db
      .select()
      .from(mailOutbox)
      .where(eq(mailOutbox.to, 'inplace@console.test'));
    expect(after.length).toBe(before.length);
    // A link for an address with no account signs no one up.
    const strangerLink = await signInLinkInPlace(pool.db, config, {
      email: 'never-joined@console.test',
      callbackPath: '/console',
      headers: new Headers({ [CLIENT_ADDRESS_HEADER]: freshAddress() }),
    });
    const auth = await consoleAuth(pool.db, config);
    const opened = await auth.handler(
      new Request(strangerLink, { headers: { [CLIENT_ADDRESS_HEADER]: freshAddress() } }),
    );
    expect(setCookies(opened).some((cookie) => /vouch\.session_token=[^;]/.test(cookie))).toBe(false);
    const [joined] =
      await database.sql`SELECT count(*)::int AS n FROM auth_users WHERE email = 'never-joined@console.test'`;
    expect(joined?.n).toBe(0);
    // And a link asked for over HTTP afterwards is mailed again: the handover held for that call only.
    await post('/sign-in/magic-link', { email: 'inplace@console.test' });
    const mailed = await database.db
      .select()
      .from(mailOutbox)
      .where(eq(mailOutbox.to, 'inplace@console.test'));
    expect(mailed.length).toBe(before.length + 1);
  });
});

describe('the signing key and the cookies', () => {
  it('keeps one random key in the database for every process of the deployment', async () => {
    await consoleAuth(pool.db, config);
    const keys = await database.db.select().from(appSecrets).where(eq(appSecrets.name, 'auth_secret'));
    expect(keys).toHaveLength(1);
    expect(keys[0]?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // A second process (its own pool) signs with the same key: its cookie is accepted here.
    const second = await connectDatabase(database.url, { max: 2 });
    try {
      expect(await consoleAuth(second.db, config)).not.toBe(await consoleAuth(pool.db, config));
      expect(await consoleAuth(second.db, config)).toBe(await consoleAuth(second.db, config));
      const owner = await createTeamOwner(database.db, {
        teamId,
        email: 'shared@console.test',
        now: new Date(),
      });
      const signIn = await post(
        '/sign-in/email',
        { email: 'shared@console.test', password: owner.oneTimePassword },
        { db: second.db },
      );
      const cookie = setCookies(signIn)
        .find((entry) => entry.includes('vouch.session_token='))
        ?.split(';')[0];
      const auth = await consoleAuth(pool.db, config);
      const session = await auth.api.getSession({ headers: new Headers({ cookie: cookie ?? '' }) });
      expect(session?.user.email).toBe('shared@console.test');
      const keysAfter = await database.db.select().from(appSecrets).where(eq(appSecrets.name, 'auth_secret'));
      expect(keysAfter).toEqual(keys);
    } finally {
      await second.close();
    }
  });

  it('starts afresh on the next call when a start failed (its key could not be read)', async () => {
    await database.sql`ALTER TABLE app_secrets RENAME TO app_secrets_away`;
    try {
      await expect(consoleAuth(pool.db, config)).rejects.toThrow();
    } finally {
      await database.sql`ALTER TABLE app_secrets_away RENAME TO app_secrets`;
    }
    const auth = await consoleAuth(pool.db, config);
    expect(typeof auth.handler).toBe('function');
  });

  it('signs with AUTH_SECRET when the operator sets it, and on a plain-http host sets cookies that are not Secure', async () => {
    const plain = parseEnv({
      NODE_ENV: 'test',
      BASE_URL: 'http://vouch.internal:3000',
      AUTH_SECRET: 'an-operator-secret-of-at-least-32-characters',
    });
    const other = await connectDatabase(database.url, { max: 2 });
    try {
      const owner = await createTeamOwner(database.db, {
        teamId,
        email: 'plain@console.test',
        now: new Date(),
      });
      const signIn = await post(
        '/sign-in/email',
        { email: 'plain@console.test', password: owner.oneTimePassword },
        { db: other.db, env: plain },
      );
      expect(signIn.status).toBe(200);
      const session = setCookies(signIn).find((cookie) => cookie.includes('vouch.session_token='));
      expect(session).toMatch(/^vouch\.session_token=/);
      expect(session).not.toMatch(/; Secure/i);
      // Signed with the operator's key, the cookie is not one the database's key accepts.
      const cookie = session?.split(';')[0] ?? '';
      const byStoredKey = await (await consoleAuth(pool.db, config)).api.getSession({
        headers: new Headers({ cookie: `__Secure-${cookie}` }),
      });
      expect(byStoredKey).toBeNull();
      const byOperatorKey = await (await consoleAuth(other.db, plain)).api.getSession({
        headers: new Headers({ cookie }),
      });
      expect(byOperatorKey?.user.email).toBe('plain@console.test');
    } finally {
      await other.close();
    }
  });

  it('treats https and 127.0.0.1 as secure origins too', async () => {
    for (const base of ['https://vouch.example', 'http://127.0.0.1:3999']) {
      const env = parseEnv({ NODE_ENV: 'test', BASE_URL: base });
      const other = await connectDatabase(database.url, { max: 2 });
      try {
        const email = `secure-${new URL(base).hostname}@console.test`;
        const owner = await createTeamOwner(database.db, { teamId, email, now: new Date() });
        const signIn = await post(
          '/sign-in/email',
          { email, password: owner.oneTimePassword },
          { db: other.db, env },
        );
        expect(signIn.status).toBe(200);
        const session = setCookies(signIn).find((cookie) => cookie.includes('vouch.session_token='));
        expect(session).toMatch(/^__Secure-vouch\.session_token=.*; Secure/i);
      } finally {
        await other.close();
      }
    }
  });
});
