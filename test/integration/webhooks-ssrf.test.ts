import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/lib/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '../support/api-client';
import { type RunningApp, startApp } from '../support/app';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { eventually } from '../support/https-receiver';

let database: TestDatabase;
let app: RunningApp;
let api: ReturnType<typeof apiClient>;

// WEBHOOK_ALLOW_PRIVATE_NETWORKS is left at its default (false), as in production.
beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    env: { RATE_LIMIT_READ_PER_MINUTE: '100000', RATE_LIMIT_WRITE_PER_MINUTE: '100000' },
  });
  const { key } = await createTeam(database.db, { name: 'SSRF', adminEmail: 'a@ssrf.test' }, systemClock);
  api = apiClient(app.baseUrl, key.token);
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

type Attempt = { error: string | null; response_status: number | null; duration_ms: number };

async function pingAttempt(url: string): Promise<Attempt> {
  const endpoint = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
    url,
    events: ['case.created'],
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  const ping = await api.post<{ id: string }>(`/v1/webhooks/endpoints/${endpoint.body.id}/test/`);
  expect(ping.status).toBe(202);
  const attempt = await eventually(async () => {
    const detail = await api.get<{ attempts: Attempt[] }>(`/v1/webhooks/deliveries/${ping.body.id}/`);
    return detail.body.attempts[0];
  });
  await api.delete(`/v1/webhooks/endpoints/${endpoint.body.id}/`);
  return attempt;
}

describe('SSRF protection', () => {
  it('accepts only HTTPS on port 443 at create and update', async () => {
    for (const url of [
      'http://example.com/hook',
      'https://example.com:8443/hook',
      'https://localhost:3000/hook',
    ]) {
      const res = await api.post<{ code: string }>('/v1/webhooks/endpoints/', {
        url,
        events: ['case.created'],
      });
      expect(res.status, url).toBe(422);
      expect(res.body.code).toBe('INVALID_URL');
    }
    const ok = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
      url: 'https://example.com:443/hook',
      events: ['case.created'],
    });
    expect(ok.status).toBe(201);
    const patched = await api.patch<{ code: string }>(`/v1/webhooks/endpoints/${ok.body.id}/`, {
      url: 'https://example.com:444/hook',
    });
    expect(patched.body.code).toBe('INVALID_URL');
    await api.delete(`/v1/webhooks/endpoints/${ok.body.id}/`);
  });

  it('refuses a host name that resolves to loopback, checked at delivery time', async () => {
    const attempt = await pingAttempt('https://localhost/hook');
    expect(attempt.error).toMatch(/^destination refused: localhost resolves to loopback address/);
    expect(attempt.response_status).toBeNull();
  });

  const literals: Array<[string, string]> = [
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://[::1]/hook', 'loopback'],
    ['https://10.0.0.1/hook', 'private'],
    ['https://192.168.1.1/hook', 'private'],
    ['https://172.20.0.1/hook', 'private'],
    ['https://[fd00::1]/hook', 'private'],
    ['https://169.254.10.10/hook', 'link-local'],
    ['https://[fe80::1]/hook', 'link-local'],
    ['https://100.64.1.1/hook', 'cgnat'],
    ['https://224.0.0.1/hook', 'multicast'],
    ['https://[ff02::1]/hook', 'multicast'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['https://[::ffff:a9fe:a9fe]/hook', 'metadata'],
  ];
  it.each(literals)('refuses %s (%s) without connecting', async (url, reason) => {
    const attempt = await pingAttempt(url);
    expect(attempt.error).toContain(`destination refused: ${reason} address`);
    // Refused before any connection: nowhere near the 5 s connect time-out.
    expect(attempt.duration_ms).toBeLessThan(1000);
  });
});
