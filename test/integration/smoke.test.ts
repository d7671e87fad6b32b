import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeam } from '@/server/teams/manage-teams';
import { systemClock } from '@/server/lib/clock';
import { apiClient } from '../support/api-client';
import { type RunningApp, startApp } from '../support/app';
import { createTestDatabase, type TestDatabase } from '../support/database';

let database: TestDatabase;
let app: RunningApp;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

describe('smoke', () => {
  it('answers ping and creates a case', async () => {
    const { key } = await createTeam(database.db, { name: 'Smoke', adminEmail: 'a@smoke.test' }, systemClock);
    const api = apiClient(app.baseUrl, key.token);
    expect((await api.get('/v1/ping')).status).toBe(200);
    const created = await api.post('/v1/cases/', { subject_email: 's@x.test', verification_methods: { email: true } });
    expect(created.status).toBe(201);
  });
});
