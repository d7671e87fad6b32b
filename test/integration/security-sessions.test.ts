/**
 * Issue 11, findings 5 and 7 (console part): setting or changing a password needs the current
 * password or a sign-in within 10 minutes and ends the user's other sessions; current-password
 * checks are limited per account and client address (issue 23, finding 3); batches are capped; console calls are limited per user; a
 * CLI one-time password expires after 7 days; a malformed team cookie is ignored; better-auth's
 * other endpoints are not reachable over HTTP.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSessions, authUsers } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { CONSOLE_CALLS_PER_MINUTE } from '@/server/rate-limits/limiters';
import { createTeam } from '@/server/teams/manage-teams';
import { type RunningApp, startApp } from '@/test/support/app';
import { type ConsoleClient, consoleClient } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { inviteNewUser } from '@/test/support/invitations';
import { latestSignInLink } from '@/test/support/sign-in-links';

let database: TestDatabase;
let app: RunningApp;

beforeAll(async () => {
  database = await createTestDatabase();
  // Each client below comes from an address of its own (through the trusted local proxy), so
  // this file's many sign-ins do not run into the per-address limit of 10 a minute.
  app = await startApp({ databaseUrl: database.url, env: { TRUSTED_PROXIES: '127.0.0.1' } });
});

let clients = 0;
/** A console client with an address of its own. */
function client(): ConsoleClient {
  clients += 1;
  return consoleClient(app.baseUrl, { forwardedFor: `203.0.113.${clients}` });
}

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

async function newOwner(name: string, email: string): Promise<{ client: ConsoleClient; password: string }> {
  const { owner } = await createTeam(database.db, { name, adminEmail: email }, systemClock);
  const signedIn = client();
  expect((await signedIn.signIn(email, owner.oneTimePassword ?? '')).status).toBe(200);
  const password = `${name.toLowerCase()}-owner-password`;
  const changed = await signedIn.mutate('console.session.changePassword', {
    current_password: owner.oneTimePassword,
    new_password: password,
  });
  expect(changed.status).toBe(200);
  return { client: signedIn, password };
}

function latestLinkTo(email: string): Promise<string> {
  return latestSignInLink(database.db, email);
}

/** Makes every session of `email` look as if it began `minutes` ago. */
async function ageSessions(email: string, minutes: number): Promise<void> {
  await database.db.execute(sql`
    update ${authSessions} set created_at = now() - make_interval(mins => ${minutes})
     where user_id = (select id from ${authUsers} where email = ${email})`);
}

describe('setting a password', () => {
  it('a link-only user may set one only within 10 minutes of signing in', async () => {
    const { client: owner } = await newOwner('Acme', 'owner@acme.test');
    const stolen = client();
    await inviteNewUser(owner, stolen, database.db, { email: 'link@acme.test', role: 'admin' });
    await ageSessions('link@acme.test', 11);
    const refused = await stolen.mutate('console.session.changePassword', {
      new_password: 'a-new-password-1',
    });
    expect(refused.status).toBe(403);
    expect(refused.error?.message).toMatch(/sign in again/i);
    // So the stolen session cannot pass the password-checked reveal either.
    const me = await stolen.query<{ has_password: boolean }>('console.session.me');
    expect(me.data?.has_password).toBe(false);

    const fresh = client();
    expect(
      (
        await fresh.openLink(
          await (async () => {
            await fresh.requestSignInLink('link@acme.test');
            return latestLinkTo('link@acme.test');
          })(),
        )
      ).status,
    ).toBe(302);
    const set = await fresh.mutate('console.session.changePassword', { new_password: 'a-new-password-1' });
    expect(set.status).toBe(200);
    // The older session is over.
    expect((await stolen.query('console.session.me')).status).toBe(401);
    expect((await fresh.query('console.session.me')).status).toBe(200);
  });

  it('changing a password needs the current one and ends every other session', async () => {
    const { client: first, password } = await newOwner('Bravo', 'owner@bravo.test');
    const second = client();
    expect((await second.signIn('owner@bravo.test', password)).status).toBe(200);

    const without = await first.mutate('console.session.changePassword', {
      new_password: 'bravo-password-two',
    });
    expect(without.status).toBe(403);
    const wrong = await first.mutate('console.session.changePassword', {
      current_password: 'not-it',
      new_password: 'bravo-password-two',
    });
    expect(wrong.status).toBe(403);
    expect((await second.query('console.session.me')).status).toBe(200);

    const changed = await first.mutate('console.session.changePassword', {
      current_password: password,
      new_password: 'bravo-password-two',
    });
    expect(changed.status).toBe(200);
    expect((await first.query('console.session.me')).status).toBe(200);
    expect((await second.query('console.session.me')).status).toBe(401);
    expect((await client().signIn('owner@bravo.test', 'bravo-password-two')).status).toBe(200);
  });

  it('better-auth’s own password and account endpoints are not reachable over HTTP', async () => {
    const { client: owner, password } = await newOwner('Charlie', 'owner@charlie.test');
    for (const path of [
      '/change-password',
      '/set-password',
      '/update-user',
      '/revoke-sessions',
      '/delete-user',
    ]) {
      const res = await fetch(`${app.baseUrl}/api/auth${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: app.baseUrl, Cookie: cookieOf(owner) },
        body: JSON.stringify({ currentPassword: password, newPassword: 'charlie-password-two' }),
      });
      expect(res.status, path).toBe(404);
    }
    expect((await client().signIn('owner@charlie.test', password)).status).toBe(200);
  });
});

function cookieOf(client: ConsoleClient): string {
  return Object.entries(client.cookies())
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
}

describe('current-password checks', () => {
  it('allow 5 wrong passwords per account and address in 15 minutes, then 429 even for the right one', async () => {
    const { client: owner, password } = await newOwner('Delta', 'owner@delta.test');
    const endpoint = await owner.mutate<{ id: string }>('console.webhooks.create', {
      url: 'https://hooks.example.com/x',
      events: ['case.closed'],
    });
    const id = endpoint.data?.id;
    for (let i = 0; i < 5; i++) {
      expect(
        (await owner.mutate('console.webhooks.revealSecret', { id, password: `guess-${i}` })).status,
      ).toBe(403);
    }
    const sixth = await owner.mutate('console.webhooks.revealSecret', { id, password });
    expect(sixth.status).toBe(429);
    expect(sixth.error?.data?.appCode).toBe('RATE_LIMITED');
    // The 15-minute window: the client is told when to try again, as on the REST API.
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    // The same budget as sign-in from that address: the password cannot be tried there instead.
    const sameAddress = await owner.signIn('owner@delta.test', password);
    expect(sameAddress.status).toBe(429);
    expect(Number(sameAddress.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    // Someone guessing from one address does not keep the owner out elsewhere.
    expect((await client().signIn('owner@delta.test', password)).status).toBe(200);
  });
});

describe('console call limits', () => {
  it('a batch of more than 10 calls is refused without running any of them', async () => {
    const { client: owner } = await newOwner('Echo', 'owner@echo.test');
    const keyNames = async () =>
      ((await owner.query<Array<{ name: string }>>('console.keys.list')).data ?? []).map((k) => k.name);
    const before = await keyNames();
    const batch = (count: number) =>
      fetch(`${app.baseUrl}/api/trpc/${Array(count).fill('console.keys.create').join(',')}?batch=1`, {
        method: 'POST',
        headers: { Cookie: cookieOf(owner), Origin: app.baseUrl, 'Content-Type': 'application/json' },
        body: JSON.stringify(
          Object.fromEntries(Array.from({ length: count }, (_, i) => [i, { name: `batch-${count}-${i}` }])),
        ),
      });
    expect((await batch(11)).status).toBe(400);
    expect(await keyNames()).toEqual(before);
    expect((await batch(10)).status).toBe(200);
    expect((await keyNames()).filter((name) => name.startsWith('batch-10-'))).toHaveLength(10);
  });

  it(`a user gets ${CONSOLE_CALLS_PER_MINUTE} calls a minute, then 429`, async () => {
    const { client } = await newOwner('Foxtrot', 'owner@foxtrot.test');
    // newOwner made one call (changePassword); the rest of the minute's budget:
    const statuses = await Promise.all(
      Array.from({ length: CONSOLE_CALLS_PER_MINUTE }, () =>
        client.query('console.session.me').then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(CONSOLE_CALLS_PER_MINUTE - 1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    const refused = await client.query('console.session.me');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another user is not affected.
    const { client: other } = await newOwner('Golf', 'owner@golf.test');
    expect((await other.query('console.session.me')).status).toBe(200);
  });
});

describe('one-time passwords from the CLI', () => {
  it('an owner made by the CLI keeps their password and sessions after signing in by e-mail link', async () => {
    const { client: first, password } = await newOwner('Juliet', 'owner@juliet.test');
    const linked = client();
    expect((await linked.requestSignInLink('owner@juliet.test')).status).toBe(200);
    expect((await linked.openLink(await latestLinkTo('owner@juliet.test'))).status).toBe(302);
    expect((await linked.query('console.session.me')).status).toBe(200);
    expect((await first.query('console.session.me')).status).toBe(200);
    expect((await client().signIn('owner@juliet.test', password)).status).toBe(200);
  });

  it('stop signing in 7 days after they were printed', async () => {
    const { owner } = await createTeam(
      database.db,
      { name: 'Hotel', adminEmail: 'owner@hotel.test' },
      systemClock,
    );
    const [user] = await database.db
      .select({ expiresAt: authUsers.oneTimePasswordExpiresAt })
      .from(authUsers)
      .where(eq(authUsers.email, 'owner@hotel.test'));
    const days = ((user?.expiresAt?.getTime() ?? 0) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    await database.db
      .update(authUsers)
      .set({ oneTimePasswordExpiresAt: new Date(Date.now() - 1000) })
      .where(eq(authUsers.email, 'owner@hotel.test'));
    const expired = await client().signIn('owner@hotel.test', owner.oneTimePassword ?? '');
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as { code: string }).code).toBe('ONE_TIME_PASSWORD_EXPIRED');
  });
});

describe('malformed cookies', () => {
  it('a mangled session cookie is no session (401), never a 500', async () => {
    const { client: owner } = await newOwner('Kilo', 'owner@kilo.test');
    const name = Object.keys(owner.cookies()).find((cookie) => cookie.includes('session_token')) ?? '';
    expect(name).not.toBe('');
    for (const value of ['%E0%A4%A', 'x', `${'y'.repeat(3000)}.zzz`, '"quoted"']) {
      const mangled = client();
      mangled.setCookie(name, value);
      expect((await mangled.query('console.session.me')).status, value).toBe(401);
    }
  });
});

describe('the team cookie', () => {
  it('a malformed or foreign value is ignored, never a 500', async () => {
    const { client } = await newOwner('India', 'owner@india.test');
    for (const value of [
      '%E0%A4%A',
      'not-a-uuid',
      `${'x'.repeat(4000)}`,
      '00000000-0000-4000-8000-000000000000',
    ]) {
      client.setCookie('vouch_team', value);
      const me = await client.query<{ current_team: { team_name: string } | null }>('console.session.me');
      expect(me.status, value).toBe(200);
      expect(me.data?.current_team?.team_name, value).toBe('India');
      expect((await client.query('console.keys.list')).status, value).toBe(200);
    }
  });
});
