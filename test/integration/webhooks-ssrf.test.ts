import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEndpoints } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { REFUSED_LITERAL_MESSAGE, UNREACHABLE_HOST_MESSAGE } from '@/server/webhooks/destination-guard';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';
import { eventually } from '@/test/support/https-receiver';

let database: TestDatabase;
let app: RunningApp;
let api: ReturnType<typeof apiClient>;

// WEBHOOK_ALLOW_PRIVATE_NETWORKS is left at its default (false), as in production.
beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    // info: the reason a host had no public address is logged there, for operators.
    env: { RATE_LIMIT_READ_PER_MINUTE: '100000', RATE_LIMIT_WRITE_PER_MINUTE: '100000', LOG_LEVEL: 'info' },
  });
  const { key } = await createTeam(database.db, { name: 'SSRF', adminEmail: 'a@ssrf.test' }, systemClock);
  api = apiClient(app.baseUrl, key.token);
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

type Attempt = { error: string | null; response_status: number | null; duration_ms: number };
type DeliveryDetail = { last_error: string | null; attempts: Attempt[] };

/** No dotted quad, and no run of colon-separated hex groups (any IPv6 form, `::` included). */
function expectNoAddress(text: string | null) {
  expect(text).toBeTruthy();
  expect(text).not.toMatch(/\d{1,3}(?:\.\d{1,3}){3}/);
  expect(text).not.toMatch(/(?:[0-9a-f]{0,4}:){2,}[0-9a-f]{0,4}/i);
}

/**
 * Pings an endpoint and returns its first attempt, with the delivery's last_error (recorded in the
 * same transaction). `storedUrl` is written to the row directly, past create's validation: an
 * endpoint saved before literal addresses were refused.
 */
async function pingAttempt(
  url: string,
  storedUrl?: string,
): Promise<Attempt & { last_error: string | null }> {
  const endpoint = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
    url,
    events: ['case.created'],
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  if (storedUrl !== undefined) {
    await database.db
      .update(webhookEndpoints)
      .set({ url: storedUrl })
      .where(eq(webhookEndpoints.id, endpoint.body.id));
  }
  const ping = await api.post<{ id: string }>(`/v1/webhooks/endpoints/${endpoint.body.id}/test/`);
  expect(ping.status).toBe(202);
  const attempt = await eventually(async () => {
    const detail = await api.get<DeliveryDetail>(`/v1/webhooks/deliveries/${ping.body.id}/`);
    const first = detail.body.attempts[0];
    return first && { ...first, last_error: detail.body.last_error };
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
    expectError(patched, 422, 'INVALID_URL');
    expect((await api.delete(`/v1/webhooks/endpoints/${ok.body.id}/`)).status).toBe(204);
  });

  // Names no public address can answer for never get that far now (below); an endpoint stored
  // before they were refused, and any name whose DNS answer points inward, meet the delivery guard.
  it('refuses a host name that resolves to loopback, checked at delivery time, without naming the address', async () => {
    const attempt = await pingAttempt('https://example.com/hook', 'https://localhost/hook');
    expect(attempt.error).toBe(UNREACHABLE_HOST_MESSAGE);
    expect(attempt.error).toMatch(/^could not reach a public address .* run `npm run listen -- --forward-to/);
    expectNoAddress(attempt.error);
    expect(attempt.last_error).toBe(attempt.error);
    expect(attempt.response_status).toBeNull();
  });

  it('tells a name that resolves privately from one that does not resolve in no way a customer can see', async () => {
    // Both stored past create's check of names (as endpoints saved before it were): at delivery a
    // host name is judged where it resolves.
    const resolvesPrivately = await pingAttempt('https://example.com/hook', 'https://localhost/hook');
    // .invalid never resolves (RFC 6761): the resolver answers ENOTFOUND.
    const doesNotResolve = await pingAttempt('https://example.com/hook', 'https://no-such-host.invalid/hook');
    const visible = ({ error, last_error, response_status }: Attempt & { last_error: string | null }) => ({
      error,
      last_error,
      response_status,
    });
    expect(visible(doesNotResolve)).toEqual(visible(resolvesPrivately));
    expect(doesNotResolve.error).toBe(UNREACHABLE_HOST_MESSAGE);
    expect(doesNotResolve.error).not.toMatch(/ENOTFOUND|EAI_AGAIN|getaddrinfo|invalid|non-public/);
    // The operator's log keeps the reason for each, and no address.
    const reasons = app
      .logs()
      .split('\n')
      .filter((line) => line.includes('webhook host has no public address'));
    expect(reasons.some((line) => /"host":"localhost","reason":"loopback"/.test(line))).toBe(true);
    expect(
      reasons.some((line) => /"host":"no-such-host.invalid","reason":"(ENOTFOUND|EAI_AGAIN)"/.test(line)),
    ).toBe(true);
    for (const line of reasons) expectNoAddress(line.replace(/"time":"[^"]*"/, ''));
  });

  const literals = [
    'https://127.0.0.1/hook',
    'https://2130706433/hook',
    'https://[::1]/hook',
    'https://10.0.0.1/hook',
    'https://192.168.1.1/hook',
    'https://172.20.0.1/hook',
    'https://[fd00::1]/hook',
    'https://169.254.10.10/hook',
    'https://[fe80::1]/hook',
    'https://100.64.1.1/hook',
    'https://224.0.0.1/hook',
    'https://[ff02::1]/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[fd00:ec2::254]/latest/meta-data/',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:a9fe:a9fe]/hook',
    // IPv4-compatible: the URL parser turns it into [::7f00:1]
    'https://[::127.0.0.1]/hook',
    'https://[::a9fe:a9fe]/hook',
    'https://[::ffff:0:7f00:1]/hook',
    'https://[64:ff9b::7f00:1]/hook',
    'https://[64:ff9b:1::7f00:1]/hook',
    'https://[2002:7f00:1::]/hook',
    'https://[2001:0:7f00:1::]/hook',
  ];

  it.each(literals)('refuses %s at create and update, without echoing the address', async (url) => {
    const created = await api.post<{ code: string; detail: string }>('/v1/webhooks/endpoints/', {
      url,
      events: ['case.created'],
    });
    expect(created.status, created.text).toBe(422);
    expect(created.body.code).toBe('INVALID_URL');
    expect(created.body.detail).toMatch(/non-public address/);
    expectNoAddress(created.body.detail);

    const ok = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
      url: 'https://example.com/hook',
      events: ['case.created'],
    });
    expect(ok.status).toBe(201);
    const path = `/v1/webhooks/endpoints/${ok.body.id}/`;
    const patched = await api.patch<{ code: string; detail: string }>(path, { url });
    expect(patched.status, patched.text).toBe(422);
    expect(patched.body.code).toBe('INVALID_URL');
    expectNoAddress(patched.body.detail);
    const unchanged = await api.get<{ url: string }>(path);
    expect(unchanged.body.url).toBe('https://example.com/hook');
    await api.delete(path);
  });

  it.each([
    'https://localhost/hook',
    'https://hooks.localhost/hook',
    'https://printer.local/hook',
    'https://billing.corp.internal/hook',
    'https://nas.home.arpa/hook',
    'https://hooks.test/hook',
    'https://no-such-host.invalid/hook',
    'https://hooks.example/hook',
    'https://intranet-box/hook',
  ])('refuses %s at create and update from its name alone, pointing to listen', async (url) => {
    const created = await api.post<{ code: string; detail: string }>('/v1/webhooks/endpoints/', {
      url,
      events: ['case.created'],
    });
    expect(created.status, created.text).toBe(422);
    expect(created.body.code).toBe('INVALID_URL');
    expect(created.body.detail).toMatch(/^url: names a host no public address can answer for/);
    expect(created.body.detail).toMatch(/npm run listen -- --forward-to/);

    const ok = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
      url: 'https://example.com/hook',
      events: ['case.created'],
    });
    expect(ok.status).toBe(201);
    const path = `/v1/webhooks/endpoints/${ok.body.id}/`;
    const patched = await api.patch<{ code: string; detail: string }>(path, { url });
    expect(patched.status, patched.text).toBe(422);
    expect(patched.body.detail).toBe(created.body.detail);
    expect((await api.get<{ url: string }>(path)).body.url).toBe('https://example.com/hook');
    await api.delete(path);
  });

  it('accepts a public literal address', async () => {
    for (const url of ['https://8.8.8.8/hook', 'https://[2606:4700:4700::1111]/hook']) {
      const res = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
        url,
        events: ['case.created'],
      });
      expect(res.status, res.text).toBe(201);
      await api.delete(`/v1/webhooks/endpoints/${res.body.id}/`);
    }
  });

  it.each([
    'https://127.0.0.1/hook',
    'https://[::1]/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::127.0.0.1]/hook',
    'https://[64:ff9b:1::7f00:1]/hook',
    'https://[2001:0:7f00:1::]/hook',
  ])('refuses %s stored before create refused it, at delivery, without connecting', async (url) => {
    const attempt = await pingAttempt('https://example.com/hook', url);
    expect(attempt.error).toBe(REFUSED_LITERAL_MESSAGE);
    expect(attempt.error).toMatch(/^destination refused: .* run `npm run listen -- --forward-to/);
    expectNoAddress(attempt.error);
    expect(attempt.last_error).toBe(attempt.error);
    // Refused before any connection: nowhere near the 5 s connect time-out.
    expect(attempt.duration_ms).toBeLessThan(1000);
  });
});
