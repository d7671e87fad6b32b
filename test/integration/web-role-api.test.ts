import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

/**
 * A web process with WEB_ROLE=api serves the REST API alone, without loading the page renderer:
 * every operation works, every other path is a 404, and the process is smaller than one serving
 * everything (both measured here after the same requests).
 */
let database: TestDatabase;
let apiOnly: RunningApp;
let full: RunningApp;
let token: string;

beforeAll(async () => {
  database = await createTestDatabase();
  [apiOnly, full] = await Promise.all([
    startApp({ databaseUrl: database.url, env: { WEB_ROLE: 'api', RUN_WORKERS: 'false' } }),
    startApp({ databaseUrl: database.url, env: { RUN_WORKERS: 'false' } }),
  ]);
  const { key } = await createTeam(
    database.db,
    { name: 'API role', adminEmail: 'admin@api-role.test', planCode: 'enterprise' },
    systemClock,
  );
  token = key.token;
}, 120_000);

afterAll(async () => {
  await Promise.all([apiOnly?.stop(), full?.stop()]);
  await database?.close();
});

/** Resident memory of a process, in MB (Linux). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '')) / 1024;
}

describe('WEB_ROLE=api', () => {
  it('serves every REST operation and nothing else', async () => {
    const api = apiClient(apiOnly.baseUrl, token);
    expect((await api.get('/v1/ping')).status).toBe(200);
    const created = await api.post<{ id: string }>('/v1/cases/', {
      subject_email: 'someone@api-role.test',
      verification_methods: { email: true },
    });
    expect(created.status, created.text).toBe(201);
    expect((await api.get(`/v1/cases/${created.body.id}/`)).status).toBe(200);
    for (const path of ['/console/sign-in', '/docs', '/.well-known/openid-configuration']) {
      expect((await fetch(`${apiOnly.baseUrl}${path}`)).status, path).toBe(404);
      expect((await fetch(`${full.baseUrl}${path}`)).status, path).not.toBe(404);
    }
    expect((await fetch(`${apiOnly.baseUrl}/livez`)).status).toBe(200);
    // Its document is published too: what clients generate their code from.
    const document = await fetch(`${apiOnly.baseUrl}/v1/openapi.json`);
    expect(document.status).toBe(200);
    expect(((await document.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);
  });

  it('is a smaller process than one that also renders pages', async () => {
    for (const app of [apiOnly, full]) {
      const api = apiClient(app.baseUrl, token);
      for (let i = 0; i < 20; i++) expect((await api.get('/v1/cases/')).status).toBe(200);
    }
    const sizes = [rssMb(apiOnly.process.pid as number), rssMb(full.process.pid as number)];
    // Next.js's page renderer is what it does not load: about 30 MB here (217 against 246 MB).
    expect(sizes[0], `api ${sizes[0]} MB, all ${sizes[1]} MB`).toBeLessThan((sizes[1] ?? 0) - 15);
  });
});
