/**
 * Issue 12: console passwords have at least 12 characters; AUTH_SECRET signs the session cookies,
 * so changing it signs everyone out, and without it the apps sharing a database share the secret
 * they generated (app_secrets).
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appSecrets } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { type RunningApp, startApp } from '@/test/support/app';
import { type ConsoleClient, consoleClient } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { inviteNewUser } from '@/test/support/invitations';

const SECRET_A = 'first-auth-secret-of-at-least-32-characters';
const SECRET_B = 'second-auth-secret-of-at-least-32-characters';

let database: TestDatabase;
let appA: RunningApp;
const started: RunningApp[] = [];
const databases: TestDatabase[] = [];

async function start(db: TestDatabase, env: Record<string, string>): Promise<RunningApp> {
  const app = await startApp({ databaseUrl: db.url, env });
  started.push(app);
  return app;
}

beforeAll(async () => {
  database = await createTestDatabase();
  databases.push(database);
  appA = await start(database, { AUTH_SECRET: SECRET_A });
});

afterAll(async () => {
  for (const app of started) await app.stop();
  for (const db of databases) await db.close();
});

/** A team's owner as `teams create` makes them: a one-time password to replace. */
async function newOwner(
  db: TestDatabase,
  email: string,
): Promise<{ email: string; oneTimePassword: string }> {
  const { owner } = await createTeam(db.db, { name: email, adminEmail: email }, systemClock);
  return { email, oneTimePassword: owner.oneTimePassword ?? '' };
}

/** Signs in at `app` and replaces the one-time password; returns the signed-in client. */
async function ownerSignedIn(app: RunningApp, db: TestDatabase, email: string, password: string) {
  const owner = await newOwner(db, email);
  const browser = consoleClient(app.baseUrl);
  expect((await browser.signIn(email, owner.oneTimePassword)).status).toBe(200);
  const changed = await browser.mutate('console.session.changePassword', {
    current_password: owner.oneTimePassword,
    new_password: password,
  });
  expect(changed.status).toBe(200);
  return browser;
}

/** The same cookies, presented to another app. */
function sameBrowserAt(app: RunningApp, browser: ConsoleClient): ConsoleClient {
  const other = consoleClient(app.baseUrl);
  for (const [name, value] of Object.entries(browser.cookies())) other.setCookie(name, value);
  return other;
}

describe('password length', () => {
  it('refuses 11 characters with a message naming the minimum, and accepts 12', async () => {
    const { email, oneTimePassword } = await newOwner(database, 'owner@length.test');
    const browser = consoleClient(appA.baseUrl);
    expect((await browser.signIn(email, oneTimePassword)).status).toBe(200);

    const short = await browser.mutate('console.session.changePassword', {
      current_password: oneTimePassword,
      new_password: 'elevenchars',
    });
    expect('elevenchars').toHaveLength(11);
    expect(short.status).toBe(400);
    expect(short.error?.data?.appCode).toBe('VALIDATION_ERROR');
    expect(short.error?.message).toMatch(/\b12 characters\b/);
    // Nothing changed: the one-time password still works, the short one does not.
    expect((await consoleClient(appA.baseUrl).signIn(email, 'elevenchars')).status).toBe(401);
    expect((await consoleClient(appA.baseUrl).signIn(email, oneTimePassword)).status).toBe(200);

    const enough = await browser.mutate('console.session.changePassword', {
      current_password: oneTimePassword,
      new_password: 'twelve-chars',
    });
    expect('twelve-chars').toHaveLength(12);
    expect(enough.status).toBe(200);
    expect((await consoleClient(appA.baseUrl).signIn(email, 'twelve-chars')).status).toBe(200);
  });

  it('right after signing in with the one-time password, choosing your own asks for it no more', async () => {
    const { email, oneTimePassword } = await newOwner(database, 'owner@fresh-otp.test');
    const browser = consoleClient(appA.baseUrl);
    expect((await browser.signIn(email, oneTimePassword)).status).toBe(200);
    const changed = await browser.mutate('console.session.changePassword', {
      new_password: 'my-own-password',
    });
    expect(changed.status).toBe(200);
    // (Few sign-ins: this file's run shares one address's budget of 10 a minute.)
    expect((await consoleClient(appA.baseUrl).signIn(email, 'my-own-password')).status).toBe(200);
    // Once it is their own, changing it again asks for it.
    const again = await browser.mutate('console.session.changePassword', {
      new_password: 'another-password',
    });
    expect(again.status).toBe(403);
    expect(again.error?.message).toBe('Enter your current password.');
  });

  it('holds for a link-only member setting a first password too', async () => {
    const owner = await ownerSignedIn(appA, database, 'owner@linkonly.test', 'owner-password-1');
    const member = consoleClient(appA.baseUrl);
    await inviteNewUser(owner, member, database.db, { email: 'member@linkonly.test', role: 'admin' });
    const short = await member.mutate('console.session.changePassword', { new_password: 'x'.repeat(11) });
    expect(short.status).toBe(400);
    expect(short.error?.data?.appCode).toBe('VALIDATION_ERROR');
    expect(short.error?.message).toMatch(/\b12 characters\b/);
    const me = await member.query<{ has_password: boolean }>('console.session.me');
    expect(me.data?.has_password).toBe(false);
    const enough = await member.mutate('console.session.changePassword', { new_password: 'y'.repeat(12) });
    expect(enough.status).toBe(200);
    expect((await consoleClient(appA.baseUrl).signIn('member@linkonly.test', 'y'.repeat(12))).status).toBe(
      200,
    );
  });
});

describe('AUTH_SECRET', () => {
  it('a session signed with one secret is refused by an app with another; signing in again works', async () => {
    const browser = await ownerSignedIn(appA, database, 'owner@rotate.test', 'rotate-password-1');
    expect((await browser.query('console.session.me')).status).toBe(200);

    // The same database, served with the new secret (a rotation, with the old app still up so the
    // session is known to be alive).
    const appB = await start(database, { AUTH_SECRET: SECRET_B });
    const atB = sameBrowserAt(appB, browser);
    expect((await atB.query('console.session.me')).status).toBe(401);
    expect((await atB.query('console.keys.list')).status).toBe(401);
    expect((await browser.query('console.session.me')).status).toBe(200);

    const fresh = consoleClient(appB.baseUrl);
    expect((await fresh.signIn('owner@rotate.test', 'rotate-password-1')).status).toBe(200);
    const me = await fresh.query<{ user: { email: string } }>('console.session.me');
    expect(me.status).toBe(200);
    expect(me.data?.user.email).toBe('owner@rotate.test');
    // And the new session means nothing to the app still holding the old secret.
    expect((await sameBrowserAt(appA, fresh).query('console.session.me')).status).toBe(401);
    // A configured secret is never written to the database.
    expect(await database.db.select().from(appSecrets)).toEqual([]);
  });

  it('unset, two apps on one database share the generated secret and accept each other’s sessions', async () => {
    const shared = await createTestDatabase();
    databases.push(shared);
    const [appC, appD] = await Promise.all([
      start(shared, { AUTH_SECRET: '' }),
      start(shared, { AUTH_SECRET: '' }),
    ]);
    if (!appC || !appD) throw new Error('apps did not start');
    const atC = await ownerSignedIn(appC, shared, 'owner@shared.test', 'shared-password-1');
    expect((await sameBrowserAt(appD, atC).query('console.session.me')).status).toBe(200);
    expect((await sameBrowserAt(appD, atC).query('console.keys.list')).status).toBe(200);

    const atD = consoleClient(appD.baseUrl);
    expect((await atD.signIn('owner@shared.test', 'shared-password-1')).status).toBe(200);
    expect((await sameBrowserAt(appC, atD).query('console.session.me')).status).toBe(200);

    const secrets = await shared.db.select().from(appSecrets).where(eq(appSecrets.name, 'auth_secret'));
    expect(secrets).toHaveLength(1);
    expect(secrets[0]?.value.length).toBeGreaterThanOrEqual(32);
  });
});
