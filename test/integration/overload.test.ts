import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';
import { expectServerErrors } from '@/test/support/openapi-conformance';

/** One app process that works on at most two API requests at once. */
let database: TestDatabase;
let app: RunningApp;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url, env: { MAX_CONCURRENT_REQUESTS: '2' } });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

/** Backends of the app's pool waiting for a row lock. */
async function backendsWaitingForALock(): Promise<number> {
  const [row] = await database.sql<{ waiting: number }[]>`
    select count(*)::int as waiting from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock'`;
  return row?.waiting ?? 0;
}

describe('overload', () => {
  it('refuses requests past MAX_CONCURRENT_REQUESTS with 503 and Retry-After, and serves again once idle', async () => {
    // The overload's 503s are what this test provokes.
    expectServerErrors();
    const { team, key } = await createTeam(
      database.db,
      { name: 'Busy', adminEmail: 'admin@busy.test', planCode: 'starter' },
      systemClock,
    );
    const api = apiClient(app.baseUrl, key.token);
    const body = { subject_email: 'busy@busy.test', verification_methods: { email: true } };
    expect((await api.post('/v1/cases/', body)).status).toBe(201);

    // Hold the team's write-budget row, so two creations take both slots and stay in them.
    const released = Promise.withResolvers<void>();
    const locked = Promise.withResolvers<void>();
    const holding = database.sql.begin(async (tx) => {
      await tx`select * from rate_limits where key = ${`write:${team.id}`} for update`;
      locked.resolve();
      await released.promise;
    });
    // The lock is held before the request is sent: a fast request would otherwise take the row
    // first and never wait.
    await locked.promise;
    const admitted = [api.post('/v1/cases/', body), api.post('/v1/cases/', body)];
    const deadline = Date.now() + 10_000;
    while ((await backendsWaitingForALock()) < 2) {
      if (Date.now() > deadline) throw new Error('the two creations never reached the lock');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }

    // Both slots are taken: everything else is refused at once.
    const burst = await Promise.all(Array.from({ length: 10 }, () => api.get('/v1/cases/')));
    expect(burst.map((res) => res.status)).toEqual(Array(10).fill(503));
    for (const res of burst) {
      expectError(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers.get('retry-after')).toBe('1');
    }

    released.resolve();
    await holding;
    expect((await Promise.all(admitted)).map((res) => res.status)).toEqual([201, 201]);
    // Every admitted request released its place: one at a time, all are served.
    for (let i = 0; i < 5; i++) expect((await api.get('/v1/cases/')).status).toBe(200);
  });
});
