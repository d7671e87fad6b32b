/**
 * The one route every step's pages and forms go through (`/v/<public id>/<segment>/…`): each
 * method's segment reaches its own handlers, a link's token is passed on, and anything the methods
 * do not declare is the subject's not-found page, or a 405 naming what the path takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;
let app: RunningApp;
let page: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  const { testKey } = await createTeam(
    database.db,
    { name: 'Routes', adminEmail: 'admin@routes.test' },
    systemClock,
  );
  const created = await apiClient(app.baseUrl, testKey.token).post<{ public_id: string }>('/v1/cases/', {
    subject_email: 'someone@routes.test',
    verification_methods: { email: true, sms: true, government_id: true },
  });
  expect(created.status).toBe(201);
  page = `${app.baseUrl}/v/${created.body.public_id}`;
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

const get = (path: string) => fetch(`${page}${path}`, { redirect: 'manual' });

describe('a step path', () => {
  it("reaches its method's handlers: a link's token, a fixed name, the segment itself", async () => {
    // The e-mail link with a token that is not the case's: back to the case page, which says so.
    const link = await get('/email/not-the-token');
    expect(link.status).toBe(303);
    expect(link.headers.get('location')).toMatch(/\/v\/[^/]+\?n=email-invalid#notice$/);
    // The ID check's vendor round trip is a fixed name under its segment.
    expect([302, 303]).toContain((await get('/identity/start')).status);
    // The SMS form takes posts only.
    const sms = await get('/sms');
    expect(sms.status).toBe(405);
    expect(sms.headers.get('allow')).toBe('POST');
  });

  it('is the not-found page for what no method declares', async () => {
    for (const path of [
      '/nothing',
      '/email',
      '/email/a/b',
      '/sms/extra',
      '/identity/elsewhere/x',
      '/:token',
    ]) {
      const answer = await get(path);
      expect({ path, status: answer.status }).toEqual({ path, status: 404 });
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await answer.text()).toContain('<html lang="en"');
    }
  });
});
