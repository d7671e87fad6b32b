/**
 * Issue 11, finding 1: a forged X-Forwarded-For defeated every per-address limit, and the audit
 * log recorded the forged address. Limits now key on the socket's peer (or, behind
 * TRUSTED_PROXIES, the right-most untrusted hop), IPv6 per /64, and password sign-in and sign-in
 * links are limited per account and client address as well (issue 23, finding 3).
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, authSessions, authUsers, mailOutbox } from '@/db/schema';
import { CLIENT_ADDRESS_HEADER } from '@/server/platform/client-address-header';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { type RunningApp, startApp } from '@/test/support/app';
import { type ConsoleClient, consoleClient, signInReplacingPassword } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

const forged = (i: number) => ({ 'X-Forwarded-For': `198.51.100.${i}` });

async function ownerOf(database: TestDatabase, app: RunningApp, name: string, email: string) {
  const { key, owner } = await createTeam(database.db, { name, adminEmail: email }, systemClock);
  const password = `${name.toLowerCase()}-owner-password`;
  const client = await signInReplacingPassword(
    consoleClient(app.baseUrl),
    email,
    owner.oneTimePassword,
    password,
  );
  return { client, password, apiKey: key.token };
}

async function mailsTo(database: TestDatabase, email: string): Promise<number> {
  return (await database.db.select().from(mailOutbox).where(eq(mailOutbox.to, email))).length;
}

async function sessionAddresses(database: TestDatabase, email: string): Promise<Array<string | null>> {
  const rows = await database.db
    .select({ ip: authSessions.ipAddress })
    .from(authSessions)
    .innerJoin(authUsers, eq(authUsers.id, authSessions.userId))
    .where(eq(authUsers.email, email));
  return rows.map((r) => r.ip);
}

describe('without trusted proxies, X-Forwarded-For is whatever the client wrote', () => {
  let database: TestDatabase;
  let app: RunningApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    app = await startApp({ databaseUrl: database.url, env: { RATE_LIMIT_READ_PER_MINUTE: '5' } });
  });

  afterAll(async () => {
    await app?.stop();
    await database?.close();
  });

  it('unauthenticated /v1 calls and bad keys share one budget per real address', async () => {
    // The budget is 5 a minute; start-up's readiness check has spent some of it already.
    const first = await fetch(`${app.baseUrl}/v1/ping`, { headers: forged(0) });
    expect(first.status).toBe(200);
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    expect(remaining).toBeLessThan(5);
    const statuses: number[] = [];
    for (let i = 1; i <= remaining + 1; i++) {
      statuses.push((await fetch(`${app.baseUrl}/v1/ping`, { headers: forged(i) })).status);
    }
    expect(statuses).toEqual([...Array(remaining).fill(200), 429]);
    const badKey = await fetch(`${app.baseUrl}/v1/cases/`, {
      headers: { ...forged(99), Authorization: 'Bearer vouch_live_notarealkeynotarealkeynotarealkey00' },
    });
    expect(badKey.status).toBe(429);
    expect(Number(badKey.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('wrong passwords for one account stop at 5 from one real address, whatever address each claims; the right one from it then waits', async () => {
    const { password } = await ownerOf(database, app, 'Acme', 'owner@acme.test');
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      statuses.push(
        (await consoleClient(app.baseUrl).signIn('owner@acme.test', `wrong-${i}`, forged(i))).status,
      );
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true);
    const right = await consoleClient(app.baseUrl).signIn('owner@acme.test', password, forged(200));
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('sign-in links for one account stop at 5 mails from one real address, whatever address each request claims', async () => {
    await createTeam(database.db, { name: 'Bravo', adminEmail: 'owner@bravo.test' }, systemClock);
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      statuses.push(
        (await consoleClient(app.baseUrl).requestSignInLink('owner@bravo.test', forged(i))).status,
      );
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
    expect(await mailsTo(database, 'owner@bravo.test')).toBe(5);
  });

  it('sessions and audit entries record the socket address, not the forged one', async () => {
    const { client } = await ownerOf(database, app, 'Charlie', 'owner@charlie.test');
    expect(await sessionAddresses(database, 'owner@charlie.test')).toEqual(['127.0.0.1']);
    const created = await client.mutate('console.keys.create', { name: 'ci' }, forged(7));
    expect(created.status).toBe(200);
    const [entry] = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'api_key.created'), eq(auditLog.actorEmail, 'owner@charlie.test')));
    expect(entry?.ipAddress).toBe('127.0.0.1');
  });
});

describe('sign-in limits across app processes', () => {
  let database: TestDatabase;
  const apps: RunningApp[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < 2; i++) apps.push(await startApp({ databaseUrl: database.url }));
  });

  afterAll(async () => {
    for (const app of apps) await app.stop();
    await database?.close();
  });

  it('hold when attempts alternate between two processes: per account and address, then per address', async () => {
    await createTeam(database.db, { name: 'Foxtrot', adminEmail: 'owner@foxtrot.test' }, systemClock);
    const via = (i: number) => consoleClient((apps[i % 2] as RunningApp).baseUrl);
    // One account from one address: 5 wrong passwords in all, whichever process each lands on.
    const account: number[] = [];
    for (let i = 0; i < 6; i++)
      account.push((await via(i).signIn('owner@foxtrot.test', `wrong-${i}`)).status);
    expect(account).toEqual([401, 401, 401, 401, 401, 429]);
    // One address: 10 password attempts a minute in all (these were 5 of them), whatever the account.
    const address: number[] = [];
    for (let i = 0; i < 6; i++)
      address.push((await via(i).signIn(`nobody${i}@foxtrot.test`, 'wrong')).status);
    expect(address).toEqual([401, 401, 401, 401, 401, 429]);
  });
});

describe('behind a trusted proxy, the right-most untrusted hop is the client', () => {
  let database: TestDatabase;
  let app: RunningApp;
  let owner: { client: ConsoleClient; password: string };

  beforeAll(async () => {
    database = await createTestDatabase();
    app = await startApp({
      databaseUrl: database.url,
      env: { RATE_LIMIT_READ_PER_MINUTE: '3', TRUSTED_PROXIES: '127.0.0.1' },
    });
    owner = await ownerOf(database, app, 'Delta', 'owner@delta.test');
  });

  afterAll(async () => {
    await app?.stop();
    await database?.close();
  });

  const ping = async (forwardedFor: string) =>
    (await fetch(`${app.baseUrl}/v1/ping`, { headers: { 'X-Forwarded-For': forwardedFor } })).status;

  it('limits the address the proxy saw; what the client wrote further left does not matter', async () => {
    expect([
      await ping('9.9.9.9, 203.0.113.5'),
      await ping('203.0.113.5'),
      await ping('1.1.1.1, 203.0.113.5'),
    ]).toEqual([200, 200, 200]);
    expect(await ping('8.8.8.8, 203.0.113.5')).toBe(429);
    expect(await ping('203.0.113.6')).toBe(200);
  });

  it('limits IPv6 clients per /64', async () => {
    for (const host of ['1', '2', 'ffff:ffff']) expect(await ping(`2001:db8:1:2::${host}`)).toBe(200);
    expect(await ping('2001:db8:1:2:abcd::9')).toBe(429);
    expect(await ping('2001:db8:1:3::1')).toBe(200);
  });

  it('limits a client that writes its own address in the header only the web process may set', async () => {
    // The routes read the client's address from CLIENT_ADDRESS_HEADER; a client's own value must
    // never reach them, or each request naming a new address would get a new budget (3 a minute).
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const headers = { 'X-Forwarded-For': '203.0.113.40', [CLIENT_ADDRESS_HEADER]: `198.51.100.${i}` };
      statuses.push((await fetch(`${app.baseUrl}/v1/ping`, { headers })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('records the forwarded client in sessions', async () => {
    const client = consoleClient(app.baseUrl);
    expect(
      (await client.signIn('owner@delta.test', owner.password, { 'X-Forwarded-For': '203.0.113.77' })).status,
    ).toBe(200);
    expect(await sessionAddresses(database, 'owner@delta.test')).toContain('203.0.113.77');
  });

  it('refuses a sign-in sent as anything but JSON, which the per-account limits could not read', async () => {
    const { owner } = await createTeam(
      database.db,
      { name: 'Golf', adminEmail: 'owner@golf.test' },
      systemClock,
    );
    const credentials = { email: 'owner@golf.test', password: owner.oneTimePassword ?? '' };
    const post = (path: string, body: BodyInit, headers: Record<string, string> = {}) =>
      fetch(`${app.baseUrl}/api/auth${path}`, {
        method: 'POST',
        headers: { Origin: app.baseUrl, 'X-Forwarded-For': '203.0.113.150', ...headers },
        body,
      });
    const form = new FormData();
    form.set('email', credentials.email);
    form.set('password', credentials.password);
    for (const [label, attempt] of [
      ['url-encoded', post('/sign-in/email', new URLSearchParams(credentials))],
      ['multipart', post('/sign-in/email', form)],
      ['text/plain', post('/sign-in/email', JSON.stringify(credentials), { 'Content-Type': 'text/plain' })],
      ['link, url-encoded', post('/sign-in/magic-link', new URLSearchParams({ email: credentials.email }))],
    ] as const) {
      const response = await attempt;
      expect(response.status, label).toBe(400);
      expect(response.headers.getSetCookie(), label).toEqual([]);
    }
    expect(await sessionAddresses(database, 'owner@golf.test')).toEqual([]);
    expect(await mailsTo(database, 'owner@golf.test')).toBe(0);
    // The same credentials as JSON, through the limits, sign in.
    const json = await post('/sign-in/email', JSON.stringify(credentials), {
      'Content-Type': 'application/json; charset=utf-8',
    });
    expect(json.status).toBe(200);
  });

  it('counts wrong passwords per account and forwarded client, IPv6 per /64', async () => {
    await createTeam(database.db, { name: 'Echo', adminEmail: 'owner@echo.test' }, systemClock);
    for (let i = 0; i < 5; i++) {
      const wrong = await consoleClient(app.baseUrl).signIn('owner@echo.test', 'wrong', {
        'X-Forwarded-For': `2001:db8:7:7::${i + 1}`,
      });
      expect(wrong.status).toBe(401);
    }
    const sixth = await consoleClient(app.baseUrl).signIn('owner@echo.test', 'wrong', {
      'X-Forwarded-For': '2001:db8:7:7:ffff::1',
    });
    expect(sixth.status).toBe(429);
    // Another network may still try.
    const elsewhere = await consoleClient(app.baseUrl).signIn('owner@echo.test', 'wrong', {
      'X-Forwarded-For': '2001:db8:7:8::1',
    });
    expect(elsewhere.status).toBe(401);
    // Another account is not affected.
    const other = await consoleClient(app.baseUrl).signIn('owner@delta.test', owner.password, {
      'X-Forwarded-For': '203.0.113.201',
    });
    expect(other.status).toBe(200);
  });
});
