import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teams } from '@/db/schema';
import { createApiKey } from '@/server/auth/api-keys';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { type ApiResponse, apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { runCli } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';

/**
 * Two app processes on one database with small budgets: the limits must hold across both, since
 * their state lives in PostgreSQL. The 60 s window never rolls over during this file: every team
 * here is new, so every budget starts full.
 */
const READS = 8;
const WRITES = 4;

let database: TestDatabase;
const apps: RunningApp[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const env = { RATE_LIMIT_READ_PER_MINUTE: String(READS), RATE_LIMIT_WRITE_PER_MINUTE: String(WRITES) };
  // One after the other: two cold starts at once on a busy 2-core machine are slow.
  apps.push(await startApp({ databaseUrl: database.url, env }));
  apps.push(await startApp({ databaseUrl: database.url, env }));
}, 180_000);

afterAll(async () => {
  await Promise.all(apps.map((app) => app.stop()));
  await database?.close();
});

async function teamIdOf(name: string): Promise<string> {
  const [team] = await database.db.select({ id: teams.id }).from(teams).where(eq(teams.name, name));
  if (!team) throw new Error(`no team ${name}`);
  return team.id;
}

/** A team with two keys, each talking to a different app process. */
async function teamOnBothApps(name: string) {
  const { team, key } = await createTeam(
    database.db,
    { name, adminEmail: `admin@${name}.test`, planCode: 'starter' },
    systemClock,
  );
  const second = await createApiKey(database.db, { teamId: team.id });
  return [
    apiClient(apps[0]?.baseUrl as string, key.token),
    apiClient(apps[1]?.baseUrl as string, second.token),
  ] as const;
}

const body = { subject_email: 'rl@example.com', verification_methods: { email: true } };

function expectLimitHeaders(res: ApiResponse, limit: number, remaining: number) {
  expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(res.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  const nowSeconds = Date.now() / 1000;
  expect(reset).toBeGreaterThan(nowSeconds - 1);
  expect(reset).toBeLessThanOrEqual(Math.ceil(nowSeconds) + 61);
}

describe('rate limits', () => {
  it('reads are shared by all of a team’s keys across two app processes, then 429 with Retry-After', async () => {
    const [one, two] = await teamOnBothApps('reads');
    for (let i = 0; i < READS; i++) {
      const client = i % 2 === 0 ? one : two;
      const res = await client.get(i % 3 === 0 ? '/v1/account/' : '/v1/cases/');
      expect(res.status).toBe(200);
      expectLimitHeaders(res, READS, READS - i - 1);
    }
    for (const client of [one, two]) {
      const limited = await client.get('/v1/cases/');
      expectError(limited, 429, 'RATE_LIMITED');
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expectLimitHeaders(limited, READS, 0);
    }
    // Writes have their own budget.
    const write = await one.post('/v1/cases/', body);
    expect(write.status).toBe(201);
    expectLimitHeaders(write, WRITES, WRITES - 1);
  });

  it('writes are counted apart from reads, shared across processes, then 429', async () => {
    const [one, two] = await teamOnBothApps('writes');
    for (let i = 0; i < WRITES; i++) {
      const res = await (i % 2 === 0 ? one : two).post('/v1/cases/', body);
      expect(res.status).toBe(201);
      expectLimitHeaders(res, WRITES, WRITES - i - 1);
    }
    for (const client of [one, two]) {
      const limited = await client.post('/v1/cases/', body);
      expectError(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // A refused write created nothing.
    const read = await two.get<{ results: unknown[] }>('/v1/cases/');
    expect(read.status).toBe(200);
    expect(read.body.results).toHaveLength(WRITES);
    expectLimitHeaders(read, READS, READS - 1);
  });

  it('parallel requests through both processes never exceed the budget', async () => {
    const [one, two] = await teamOnBothApps('parallel');
    const results = await Promise.all(
      Array.from({ length: 3 * READS }, (_, i) => (i % 2 === 0 ? one : two).get('/v1/account/')),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(READS);
    for (const res of results) if (res.status !== 200) expectError(res, 429, 'RATE_LIMITED');
  });

  it('one team’s exhausted budget does not touch another team’s', async () => {
    const [busy] = await teamOnBothApps('busy');
    const [quiet] = await teamOnBothApps('quiet');
    for (let i = 0; i < READS; i++) await busy.get('/v1/account/');
    expectError(await busy.get('/v1/account/'), 429, 'RATE_LIMITED');
    const res = await quiet.get('/v1/account/');
    expect(res.status).toBe(200);
    expectLimitHeaders(res, READS, READS - 1);
  });

  it('an operator sets one team’s budgets with the CLI, on every process at once; default gives the configured ones back', async () => {
    const [one, two] = await teamOnBothApps('raised');
    const [other] = await teamOnBothApps('unraised');
    const teamId = await teamIdOf('raised');
    const raised = await runCli(
      [
        'teams',
        'update',
        '--team',
        teamId,
        '--rate-limit-write',
        String(WRITES * 3),
        '--rate-limit-read',
        '2',
      ],
      { DATABASE_URL: database.url },
    );
    expect(raised).toMatchObject({ rate_limit_write_per_minute: WRITES * 3, rate_limit_read_per_minute: 2 });

    // Three times the writes, through either process, then 429 naming the team's own budget.
    for (let i = 0; i < WRITES * 3; i++) {
      const res = await (i % 2 === 0 ? one : two).post('/v1/cases/', body);
      expect(res.status, res.text).toBe(201);
      expectLimitHeaders(res, WRITES * 3, WRITES * 3 - i - 1);
    }
    const limited = await two.post('/v1/cases/', body);
    expectError(limited, 429, 'RATE_LIMITED');
    expect((limited.body as { detail: string }).detail).toContain(`${WRITES * 3} writes per minute`);
    // A lowered read budget holds too.
    expect((await one.get('/v1/cases/')).status).toBe(200);
    expect((await two.get('/v1/cases/')).status).toBe(200);
    expectError(await one.get('/v1/cases/'), 429, 'RATE_LIMITED');
    // Another team keeps the configured budgets.
    const untouched = await other.post('/v1/cases/', body);
    expectLimitHeaders(untouched, WRITES, WRITES - 1);

    // Back to the configured budget, keeping what was spent this minute.
    const reset = await runCli(['teams', 'update', '--team', teamId, '--rate-limit-write', 'default'], {
      DATABASE_URL: database.url,
    });
    expect(reset).toMatchObject({ rate_limit_write_per_minute: null, rate_limit_read_per_minute: 2 });
    const after = await one.post('/v1/cases/', body);
    expectError(after, 429, 'RATE_LIMITED');
    expect(after.headers.get('x-ratelimit-limit')).toBe(String(WRITES));
    await expect(
      runCli(['teams', 'update', '--team', teamId, '--rate-limit-write', '0'], {
        DATABASE_URL: database.url,
      }),
    ).rejects.toThrow(/--rate-limit-write must be at least 1/);
  });

  it('the budget is back once the window has passed', async () => {
    const [one] = await teamOnBothApps('window');
    for (let i = 0; i < READS; i++) await one.get('/v1/account/');
    expectError(await one.get('/v1/account/'), 429, 'RATE_LIMITED');
    // Move the window's end into the past rather than waiting a minute.
    await database.sql`update rate_limits set expire = now() - interval '1 second' where key like 'read:%'`;
    expect((await one.get('/v1/account/')).status).toBe(200);
  });

  it('unauthenticated traffic is limited per client address: ping and failed keys share one budget', async () => {
    // Runs last; the address budget starts full (other tests here send failed keys from it too).
    await database.sql`delete from rate_limits where key like 'addr:%'`;
    const anonymous = [apiClient(apps[0]?.baseUrl as string), apiClient(apps[1]?.baseUrl as string)];
    const badKey = { Authorization: 'Bearer vouch_live_notarealkeynotarealkeynotarealkey00' };
    const answers: ApiResponse[] = [];
    for (let i = 0; i < READS + 2; i++) {
      const client = anonymous[i % 2] as ReturnType<typeof apiClient>;
      answers.push(i % 3 === 0 ? await client.get('/v1/account/', badKey) : await client.get('/v1/ping'));
    }
    // Both apps spend one budget of READS: each failed key and each ping counts, then all refused.
    const expected = Array.from({ length: READS + 2 }, (_, i) =>
      i >= READS ? 429 : i % 3 === 0 ? 401 : 200,
    );
    expect(answers.map((res) => res.status)).toEqual(expected);
    for (const res of answers.slice(READS)) {
      expectError(res, 429, 'RATE_LIMITED');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // A valid key is not affected: teams have budgets of their own.
    const [one] = await teamOnBothApps('after-address');
    expect((await one.get('/v1/account/')).status).toBe(200);
  });
});
