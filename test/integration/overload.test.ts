import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/lib/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '../support/api-client';
import { type RunningApp, startApp } from '../support/app';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { expectError } from '../support/errors';

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

describe('overload', () => {
  it('refuses requests past MAX_CONCURRENT_REQUESTS with 503 and Retry-After, and serves again once idle', async () => {
    const { key } = await createTeam(
      database.db,
      { name: 'Busy', adminEmail: 'admin@busy.test', planCode: 'starter' },
      systemClock,
    );
    const api = apiClient(app.baseUrl, key.token);
    const burst = await Promise.all(Array.from({ length: 40 }, () => api.get('/v1/cases/')));

    const refused = burst.filter((res) => res.status === 503);
    const served = burst.filter((res) => res.status === 200);
    expect(refused.length + served.length).toBe(burst.length);
    expect(served.length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) {
      expectError(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers.get('retry-after')).toBe('1');
    }

    // Every admitted request released its place: one at a time, all are served.
    for (let i = 0; i < 5; i++) expect((await api.get('/v1/cases/')).status).toBe(200);
  });
});
