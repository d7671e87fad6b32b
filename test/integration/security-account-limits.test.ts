/**
 * Issue 23, finding 3: the per-account sign-in limit counted every address together, so 5 wrong
 * passwords from anywhere kept the owner out for 15 minutes (and 5 link requests exhausted their
 * links). Now 5 failures per account and client address, and 50 per account from all addresses.
 * Finding 10: an expired one-time password was reported before the password was checked, which
 * told anyone which accounts lie unused.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSessions, authUsers } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { type RunningApp, startApp } from '@/test/support/app';
import { type ConsoleClient, consoleClient } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;
let app: RunningApp;

beforeAll(async () => {
  database = await createTestDatabase();
  // Every client below comes from an address of its own, as a trusted proxy reports it.
  app = await startApp({ databaseUrl: database.url, env: { TRUSTED_PROXIES: '127.0.0.1' } });
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

let addresses = 0;
/** A console client at an address of its own (198.18.0.0/15, one per call). */
function from(): ConsoleClient {
  addresses += 1;
  return consoleClient(app.baseUrl, {
    forwardedFor: `198.18.${Math.floor(addresses / 250)}.${addresses % 250}`,
  });
}

/** A team whose owner has replaced the CLI's one-time password with `password`. */
async function owner(name: string, email: string, password: string): Promise<void> {
  const { owner } = await createTeam(database.db, { name, adminEmail: email }, systemClock);
  const browser = from();
  expect((await browser.signIn(email, owner.oneTimePassword ?? '')).status).toBe(200);
  const changed = await browser.mutate('console.session.changePassword', {
    current_password: owner.oneTimePassword,
    new_password: password,
  });
  expect(changed.status).toBe(200);
}

async function sessionsOf(email: string): Promise<number> {
  const rows = await database.db
    .select({ id: authSessions.id })
    .from(authSessions)
    .innerJoin(authUsers, eq(authUsers.id, authSessions.userId))
    .where(eq(authUsers.email, email));
  return rows.length;
}

describe('wrong passwords', () => {
  it('from one address spend only that address: the owner signs in from another', async () => {
    const email = 'owner@alpha.test';
    const password = 'alpha-owner-password';
    await owner('Alpha', email, password);
    const guesser = from();
    for (let i = 0; i < 5; i++) expect((await guesser.signIn(email, `guess-${i}`)).status).toBe(401);
    expect((await guesser.signIn(email, 'guess-5')).status).toBe(429);
    // The right password does not get past the guessing address's limit.
    const right = await guesser.signIn(email, password);
    expect(right.status).toBe(429);
    expect(((await right.json()) as { code: string }).code).toBe('RATE_LIMITED');
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    expect(right.headers.getSetCookie().some((c) => c.includes('session_token'))).toBe(false);
    // The owner, elsewhere, is not held back.
    const theOwner = from();
    expect((await theOwner.signIn(email, password)).status).toBe(200);
    expect((await theOwner.query('console.session.me')).status).toBe(200);
  });

  // 50 password checks (scrypt each) take about a second apiece on a busy 2-core machine.
  it('from all addresses together stop at 50 for the account, then refuse everyone, the right password too; a refused address spends none of them', {
    timeout: 180_000,
  }, async () => {
    const email = 'owner@bravo.test';
    const password = 'bravo-owner-password';
    await owner('Bravo', email, password);
    // 5 failures, then refusals from the same address: only the 5 count for the account.
    const guesser = from();
    const guessed: number[] = [];
    for (let i = 0; i < 25; i++) guessed.push((await guesser.signIn(email, `guess-${i}`)).status);
    expect(guessed).toEqual([...Array(5).fill(401), ...Array(20).fill(429)]);
    const statuses: number[] = [];
    for (let address = 0; address < 9; address++) {
      const other = from();
      for (let i = 0; i < 5; i++) statuses.push((await other.signIn(email, `other-${address}-${i}`)).status);
    }
    // 5 + 45 = 50: every one of these 45 was still checked.
    expect(statuses).toEqual(Array(45).fill(401));
    const before = await sessionsOf(email);
    for (const browser of [from(), from()]) {
      const refused = await browser.signIn(email, password);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    }
    expect(await sessionsOf(email)).toBe(before);
    // Another account is not affected.
    await owner('Charlie', 'owner@charlie.test', 'charlie-owner-password');
    expect((await from().signIn('owner@charlie.test', 'charlie-owner-password')).status).toBe(200);
  });
});

describe('an expired one-time password', () => {
  /** A team whose owner never used the CLI's one-time password, which is now past its 7 days. */
  async function dormant(name: string, email: string): Promise<string> {
    const { owner } = await createTeam(database.db, { name, adminEmail: email }, systemClock);
    await database.db
      .update(authUsers)
      .set({ oneTimePasswordExpiresAt: new Date(Date.now() - 1000) })
      .where(eq(authUsers.email, email));
    return owner.oneTimePassword ?? '';
  }

  it('is reported only to whoever gives it: a wrong password answers as for any account', async () => {
    await dormant('Echo', 'owner@echo.test');
    await owner('Foxtrot', 'owner@foxtrot.test', 'foxtrot-owner-password');
    const onDormant = await from().signIn('owner@echo.test', 'a-wrong-guess');
    const onActive = await from().signIn('owner@foxtrot.test', 'a-wrong-guess');
    expect(onDormant.status).toBe(onActive.status);
    expect(await onDormant.json()).toEqual(await onActive.json());
    expect(onActive.status).toBe(401);
  });

  it('takes as long to refuse a wrong password as any account does', async () => {
    await dormant('Golf', 'owner@golf.test');
    await owner('Hotel', 'owner@hotel.test', 'hotel-owner-password');
    const timed = async (email: string) => {
      const started = performance.now();
      expect((await from().signIn(email, 'a-wrong-guess')).status).toBe(401);
      return performance.now() - started;
    };
    const dormantTimes: number[] = [];
    const activeTimes: number[] = [];
    // Interleaved, so both see the same load on a busy machine.
    for (let i = 0; i < 9; i++) {
      dormantTimes.push(await timed('owner@golf.test'));
      activeTimes.push(await timed('owner@hotel.test'));
    }
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    // What it guards: a dormant account's refusal hashes the guess too (scrypt, tens of
    // milliseconds), so timing tells no one which accounts exist; a refusal without the hash took
    // a few milliseconds, a tenth of the other. Medians of nine interleaved tries and a ratio of
    // a third: a loaded machine slows both alike.
    expect(median(dormantTimes)).toBeGreaterThan(median(activeTimes) / 3);
  });

  it('given correctly, is refused as expired, and no session is made', async () => {
    const oneTimePassword = await dormant('India', 'owner@india.test');
    const browser = from();
    const expired = await browser.signIn('owner@india.test', oneTimePassword);
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as { code: string }).code).toBe('ONE_TIME_PASSWORD_EXPIRED');
    expect(expired.headers.getSetCookie().some((c) => c.includes('session_token'))).toBe(false);
    expect(await sessionsOf('owner@india.test')).toBe(0);
    expect((await browser.query('console.session.me')).status).toBe(401);
  });
});
