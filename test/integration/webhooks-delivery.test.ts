import { createHmac } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { jobsOf, unfinished } from '@/test/support/jobs';

type Endpoint = { id: string; secret: string; url: string; events: string[]; is_active: boolean };
type Delivery = {
  id: string;
  status: string;
  attempt_count: number;
  event_type: string;
  last_error: string | null;
};
type DeliveryDetail = Delivery & {
  attempts: Array<{
    attempt_number: number;
    response_status: number | null;
    response_body: string | null;
    error: string | null;
    duration_ms: number;
    started_at: string;
  }>;
};

let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;
let receiver: Receiver;
let api: ReturnType<typeof apiClient>;
let otherApi: ReturnType<typeof apiClient>;

// Steps far enough apart (1 s, 4 s) that a wrong delay cannot pass for a right one within the
// slack below: a constant delay, or one step off, misses a gap by 3 s.
const SCHEDULE = [1, 4, 1, 4, 1, 4, 1];
/** What the worker's one-second poll and the attempt itself may add to a scheduled delay. */
const SLACK_MS = 2000;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  app = await startApp({
    databaseUrl: database.url,
    env: {
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(','),
      WEBHOOK_TIMEOUT_MS: '1500',
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
    },
  });
  const { key } = await createTeam(
    database.db,
    { name: 'Hooks', adminEmail: 'admin@hooks.test' },
    systemClock,
  );
  const other = await createTeam(database.db, { name: 'Other', adminEmail: 'admin@other.test' }, systemClock);
  api = apiClient(app.baseUrl, key.token);
  otherApi = apiClient(app.baseUrl, other.key.token);
});

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await database?.close();
});

async function createEndpoint(pathname: string, events = ['case.created']): Promise<Endpoint> {
  const res = await api.post<Endpoint>('/v1/webhooks/endpoints/', { url: receiver.url(pathname), events });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function createCase(email = 'subject@example.test'): Promise<{ id: string }> {
  const res = await api.post<{ id: string }>('/v1/cases/', {
    subject_email: email,
    verification_methods: { sms: true },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function deliveryDetail(id: string): Promise<DeliveryDetail> {
  const res = await api.get<DeliveryDetail>(`/v1/webhooks/deliveries/${id}/`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe('delivery', () => {
  it('POSTs the envelope with the exact headers and valid signatures', async () => {
    const endpoint = await createEndpoint('/signed');
    // 32 random bytes in standard base64, as Standard Webhooks defines the secret.
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const created = await createCase('signed@example.test');
    const [request] = await receiver.waitFor('/signed', 1);
    if (!request) throw new Error('no request');
    const envelope = JSON.parse(request.body);
    expect(envelope).toMatchObject({
      type: 'case.created',
      data: { case_id: created.id, subject_email: 'signed@example.test', status: 'open' },
    });
    expect(envelope.id).toMatch(/^evt_[0-9a-f-]{36}$/);
    expect(new Date(envelope.created_at).toISOString()).toBe(envelope.created_at);
    expect(Object.keys(envelope.data).sort()).toEqual([
      'case_id',
      'created_at',
      'public_id',
      'status',
      'subject_email',
    ]);

    const h = request.headers;
    expect(h['content-type']).toBe('application/json');
    expect(h['user-agent']).toBe('Service-Webhook/1.0');
    expect(h['x-service-event']).toBe('case.created');
    expect(h['x-service-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    const expected = `sha256=${createHmac('sha256', endpoint.secret).update(request.body).digest('hex')}`;
    expect(h['x-service-signature']).toBe(expected);
    expect(await verify(endpoint.secret, request.body, String(h['x-service-signature']))).toBe(true);
    expect(await verify('whsec_wrong', request.body, String(h['x-service-signature']))).toBe(false);

    // Standard Webhooks: v1,base64(HMAC(secret bytes, id.timestamp.body)).
    expect(h['webhook-id']).toBe(h['x-service-delivery']);
    const timestamp = Number(h['webhook-timestamp']);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(60);
    const key = Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64');
    const standard = createHmac('sha256', key)
      .update(`${h['webhook-id']}.${timestamp}.${request.body}`)
      .digest('base64');
    expect(h['webhook-signature']).toBe(`v1,${standard}`);
    // The reference library accepts the delivery as it arrived, and refuses it once altered.
    const standardHeaders = {
      'webhook-id': String(h['webhook-id']),
      'webhook-timestamp': String(h['webhook-timestamp']),
      'webhook-signature': String(h['webhook-signature']),
    };
    expect(new Webhook(endpoint.secret).verify(request.body, standardHeaders)).toEqual(envelope);
    expect(() => new Webhook(endpoint.secret).verify(`${request.body} `, standardHeaders)).toThrow(
      'No matching signature found',
    );

    const detail = await eventually(async () => {
      const d = await deliveryDetail(String(h['x-service-delivery']));
      return d.status === 'success' ? d : undefined;
    });
    expect(detail).toMatchObject({ event_type: 'case.created', attempt_count: 1, last_error: null });
    expect(detail.attempts).toHaveLength(1);
    expect(detail.attempts[0]).toMatchObject({
      attempt_number: 1,
      response_status: 200,
      response_body: 'ok',
      error: null,
    });
  });

  it('retries on the schedule with byte-identical bodies and dead-letters after attempt 8', async () => {
    receiver.replies.set('/failing', () => ({ status: 500, body: `boom ${'x'.repeat(5000)}` }));
    await createEndpoint('/failing');
    await createCase('failing@example.test');
    const requests = await receiver.waitFor('/failing', 8, 45_000);
    const first = requests[0];
    if (!first) throw new Error('no request');
    for (const r of requests) {
      expect(r.body).toBe(first.body);
      expect(r.headers['x-service-delivery']).toBe(first.headers['x-service-delivery']);
      expect(r.headers['x-service-signature']).toBe(first.headers['x-service-signature']);
    }
    // Each gap is its scheduled delay: never earlier ("never earlier than the schedule"), and no
    // later than the worker's one-second poll and the attempt itself add.
    for (let i = 1; i < requests.length; i++) {
      const gap = (requests[i]?.receivedAt ?? 0) - (requests[i - 1]?.receivedAt ?? 0);
      const scheduled = (SCHEDULE[i - 1] ?? 0) * 1000;
      expect(gap, `gap before attempt ${i + 1}`).toBeGreaterThanOrEqual(scheduled - 50);
      expect(gap, `gap before attempt ${i + 1}`).toBeLessThanOrEqual(scheduled + SLACK_MS);
    }
    const id = String(first.headers['x-service-delivery']);
    const detail = await eventually(async () => {
      const d = await deliveryDetail(id);
      return d.status === 'dead_letter' ? d : undefined;
    });
    expect(detail.attempt_count).toBe(8);
    expect(detail.attempts.map((a) => a.attempt_number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const attempt of detail.attempts) {
      expect(attempt.response_status).toBe(500);
      expect(attempt.error).toBe('endpoint answered 500');
      expect(Buffer.byteLength(attempt.response_body ?? '')).toBe(2048);
    }
    // Every attempt's job has run and none is left to run: no ninth attempt can come.
    const jobs = (await jobsOf(database, QUEUES.webhookDeliver)).filter((job) => job.data?.deliveryId === id);
    expect(jobs).toHaveLength(8);
    expect(unfinished(jobs)).toEqual([]);
    expect(receiver.requestsTo('/failing')).toHaveLength(8);
  }, 60_000);

  it('shows failed while retries remain, then success', async () => {
    let calls = 0;
    receiver.replies.set('/flaky', () => (++calls === 1 ? { status: 503 } : { status: 204 }));
    await createEndpoint('/flaky');
    await createCase();
    const [first] = await receiver.waitFor('/flaky', 1);
    const id = String(first?.headers['x-service-delivery']);
    const failed = await eventually(async () => {
      const d = await deliveryDetail(id);
      return d.status === 'failed' ? d : undefined;
    });
    expect(failed).toMatchObject({ attempt_count: 1, last_error: 'endpoint answered 503' });
    await receiver.waitFor('/flaky', 2);
    const done = await eventually(async () => {
      const d = await deliveryDetail(id);
      return d.status === 'success' ? d : undefined;
    });
    expect(done.attempts.map((a) => a.response_status)).toEqual([503, 204]);
  });

  it('counts a redirect as a failure and does not follow it', async () => {
    receiver.replies.set('/redirect', () => ({
      status: 302,
      headers: { Location: receiver.url('/redirect-target') },
    }));
    await createEndpoint('/redirect');
    await createCase();
    const [first] = await receiver.waitFor('/redirect', 1);
    const detail = await eventually(async () => {
      const d = await deliveryDetail(String(first?.headers['x-service-delivery']));
      return d.attempts.length > 0 ? d : undefined;
    });
    expect(detail.attempts[0]?.response_status).toBe(302);
    expect(detail.attempts[0]?.error).toContain('redirect');
    // A failure with retries left (a success would be 'success', a give-up 'dead_letter').
    expect(detail.status).toBe('failed');
    expect(receiver.requestsTo('/redirect-target')).toHaveLength(0);
  });

  it('counts a time-out as a failure', async () => {
    receiver.replies.set('/slow', () => ({ delayMs: 4000 }));
    await createEndpoint('/slow');
    await createCase();
    const [first] = await receiver.waitFor('/slow', 1);
    const detail = await eventually(async () => {
      const d = await deliveryDetail(String(first?.headers['x-service-delivery']));
      return d.attempts.length > 0 ? d : undefined;
    });
    expect(detail.attempts[0]?.error).toContain('timed out');
    expect(detail.attempts[0]?.response_status).toBeNull();
    expect(detail.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(1400);
    expect(detail.attempts[0]?.duration_ms).toBeLessThan(3500);
    expect(detail.status).toBe('failed');
  });

  it('signs with the new secret at once after rotation', async () => {
    const endpoint = await createEndpoint('/rotate');
    const rotated = await api.post<Endpoint>(`/v1/webhooks/endpoints/${endpoint.id}/rotate-secret/`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    await createCase();
    const [request] = await receiver.waitFor('/rotate', 1);
    const signature = String(request?.headers['x-service-signature']);
    expect(await verify(rotated.body.secret, request?.body ?? '', signature)).toBe(true);
    expect(await verify(endpoint.secret, request?.body ?? '', signature)).toBe(false);
    const standardHeaders = {
      'webhook-id': String(request?.headers['webhook-id']),
      'webhook-timestamp': String(request?.headers['webhook-timestamp']),
      'webhook-signature': String(request?.headers['webhook-signature']),
    };
    expect(new Webhook(rotated.body.secret).verify(request?.body ?? '', standardHeaders)).toMatchObject({
      type: 'case.created',
    });
    expect(() => new Webhook(endpoint.secret).verify(request?.body ?? '', standardHeaders)).toThrow(
      'No matching signature found',
    );
    const fetched = await api.get<Record<string, unknown>>(`/v1/webhooks/endpoints/${endpoint.id}/`);
    expect(fetched.body).not.toHaveProperty('secret');
  });

  it('keeps signing with a secret issued in base64url before the switch, with the same key bytes', async () => {
    const endpoint = await createEndpoint('/legacy-secret');
    // Bytes whose base64url form has both characters standard base64 spells otherwise.
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => (i % 2 ? 0xfb : 0xff)));
    const legacy = `whsec_${bytes.toString('base64url')}`;
    expect(legacy).toMatch(/-/);
    expect(legacy).toMatch(/_/);
    await database.sql`update webhook_endpoints set secret = ${legacy} where id = ${endpoint.id}`;
    await createCase();
    const [request] = await receiver.waitFor('/legacy-secret', 1);
    if (!request) throw new Error('no request');
    const h = request.headers;
    const expected = createHmac('sha256', bytes)
      .update(`${h['webhook-id']}.${h['webhook-timestamp']}.${request.body}`)
      .digest('base64');
    expect(h['webhook-signature']).toBe(`v1,${expected}`);
    expect(await verify(legacy, request.body, String(h['x-service-signature']))).toBe(true);
  });

  it('sends a test ping (202) with the queued delivery', async () => {
    const endpoint = await createEndpoint('/ping');
    const res = await api.post<Delivery & { endpoint_id: string; event_id: string }>(
      `/v1/webhooks/endpoints/${endpoint.id}/test/`,
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      event_type: 'ping',
      status: 'pending',
      endpoint_id: endpoint.id,
      attempt_count: 0,
    });
    const [request] = await receiver.waitFor('/ping', 1);
    expect(request?.headers['x-service-event']).toBe('ping');
    expect(request?.headers['x-service-delivery']).toBe(res.body.id);
    const body = JSON.parse(request?.body ?? '{}');
    expect(body).toMatchObject({
      id: res.body.event_id,
      type: 'ping',
      data: { endpoint_id: endpoint.id, message: 'ping' },
    });
  });

  it('retries a dead-lettered delivery on request', async () => {
    let healthy = false;
    receiver.replies.set('/revive', () => ({ status: healthy ? 200 : 500 }));
    await createEndpoint('/revive');
    await createCase();
    const requests = await receiver.waitFor('/revive', 8, 45_000);
    const id = String(requests[0]?.headers['x-service-delivery']);
    await eventually(async () => (await deliveryDetail(id)).status === 'dead_letter');
    healthy = true;
    const retried = await api.post<Delivery>(`/v1/webhooks/deliveries/${id}/retry/`);
    expect(retried.status).toBe(202);
    expect(retried.body.status).toBe('pending');
    await receiver.waitFor('/revive', 9);
    const detail = await eventually(async () => {
      const d = await deliveryDetail(id);
      return d.status === 'success' ? d : undefined;
    });
    expect(detail.attempt_count).toBe(9);
    const again = await api.post(`/v1/webhooks/deliveries/${id}/retry/`);
    expect(again.status).toBe(422);
  }, 60_000);
});

describe('endpoint API', () => {
  it('validates URL and events', async () => {
    const cases: Array<[unknown, string]> = [
      [{ url: 'http://example.com/hook', events: ['case.created'] }, 'INVALID_URL'],
      [{ url: 'not a url', events: ['case.created'] }, 'INVALID_URL'],
      [{ events: ['case.created'] }, 'INVALID_URL'],
      [{ url: 'https://user:pw@example.com/hook', events: ['case.created'] }, 'INVALID_URL'],
      [{ url: 'https://example.com/hook', events: [] }, 'INVALID_EVENTS'],
      [{ url: 'https://example.com/hook' }, 'INVALID_EVENTS'],
      [{ url: 'https://example.com/hook', events: ['case.opened'] }, 'INVALID_EVENTS'],
      [{ url: 'https://example.com/hook', events: ['ping'] }, 'INVALID_EVENTS'],
      [{ url: 'https://example.com/hook', events: 'case.created' }, 'VALIDATION_ERROR'],
    ];
    for (const [body, code] of cases) {
      const res = await api.post<{ code: string; error: string }>('/v1/webhooks/endpoints/', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.code, JSON.stringify(body)).toBe(code);
      expect(res.body.error).toBe(code.toLowerCase());
    }
  });

  it('creates, lists, gets, updates and deletes, scoped to the team', async () => {
    const created = await api.post<Endpoint & { description: string }>('/v1/webhooks/endpoints/', {
      url: 'https://example.com/crud',
      events: ['case.closed', 'case.failed'],
      description: 'CRUD',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      is_active: true,
      disabled_at: null,
      consecutive_failures: 0,
      description: 'CRUD',
    });
    const id = created.body.id;
    const list = await api.get<{ results: Endpoint[] }>('/v1/webhooks/endpoints/');
    expect(list.body.results.map((e) => e.id)).toContain(id);
    expect(list.body.results.every((e) => !('secret' in e))).toBe(true);

    const patched = await api.patch<Endpoint & { description: string }>(`/v1/webhooks/endpoints/${id}/`, {
      events: ['case.expired'],
      description: 'changed',
      is_active: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      events: ['case.expired'],
      description: 'changed',
      is_active: false,
    });
    expect(
      (await api.patch(`/v1/webhooks/endpoints/${id}/`, { url: 'https://example.com:8443/x' })).status,
    ).toBe(200);
    expectError(
      await api.patch(`/v1/webhooks/endpoints/${id}/`, { url: 'http://example.com/x' }),
      422,
      'INVALID_URL',
    );
    expect((await api.patch(`/v1/webhooks/endpoints/${id}/`, { is_active: 'true' })).status).toBe(422);

    // Another team sees nothing.
    expect((await otherApi.get(`/v1/webhooks/endpoints/${id}/`)).status).toBe(404);
    expect((await otherApi.patch(`/v1/webhooks/endpoints/${id}/`, { description: 'x' })).status).toBe(404);
    expect((await otherApi.delete(`/v1/webhooks/endpoints/${id}/`)).status).toBe(404);
    expect((await otherApi.post(`/v1/webhooks/endpoints/${id}/rotate-secret/`)).status).toBe(404);
    expect((await otherApi.post(`/v1/webhooks/endpoints/${id}/test/`)).status).toBe(404);
    expect((await otherApi.get<{ results: unknown[] }>('/v1/webhooks/endpoints/')).body.results).toHaveLength(
      0,
    );

    const deleted = await api.delete(`/v1/webhooks/endpoints/${id}/`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await api.get(`/v1/webhooks/endpoints/${id}/`)).status).toBe(404);
    expect((await api.get('/v1/webhooks/endpoints/not-a-uuid/')).status).toBe(404);
  });

  it('refuses the eleventh endpoint', async () => {
    const team = await createTeam(database.db, { name: 'Limit', adminEmail: 'a@limit.test' }, systemClock);
    const limited = apiClient(app.baseUrl, team.key.token);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        limited.post<{ code?: string }>('/v1/webhooks/endpoints/', {
          url: `https://example.com/${i}`,
          events: ['case.created'],
        }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused.map((r) => [r.status, r.body.code])).toEqual([
      [422, 'ENDPOINT_LIMIT_REACHED'],
      [422, 'ENDPOINT_LIMIT_REACHED'],
    ]);
  });

  it('lists deliveries with filters and pagination, scoped to the team', async () => {
    const team = await createTeam(database.db, { name: 'Pages', adminEmail: 'a@pages.test' }, systemClock);
    const paged = apiClient(app.baseUrl, team.key.token);
    const a = await paged.post<Endpoint>('/v1/webhooks/endpoints/', {
      url: receiver.url('/pages-a'),
      events: ['case.created'],
    });
    const b = await paged.post<Endpoint>('/v1/webhooks/endpoints/', {
      url: receiver.url('/pages-b'),
      events: ['case.created'],
    });
    for (let i = 0; i < 30; i++) {
      const res = await paged.post('/v1/cases/', {
        subject_email: `p${i}@example.test`,
        verification_methods: { sms: true },
      });
      expect(res.status).toBe(201);
    }
    await receiver.waitFor('/pages-a', 30);
    await receiver.waitFor('/pages-b', 30);
    type Page = {
      next: string | null;
      previous: string | null;
      results: Array<Delivery & { endpoint_id: string; created_at: string }>;
    };
    const first = await paged.get<Page>('/v1/webhooks/deliveries/');
    expect(first.status).toBe(200);
    expect(first.body.results).toHaveLength(50);
    expect(first.body.previous).toBeNull();
    const times = first.body.results.map((d) => d.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const second = await paged.get<Page>(first.body.next ?? '');
    expect(second.body.results).toHaveLength(10);
    expect(second.body.next).toBeNull();
    const seen = new Set([...first.body.results, ...second.body.results].map((d) => d.id));
    expect(seen.size).toBe(60);
    const back = await paged.get<Page>(second.body.previous ?? '');
    expect(back.body.results.map((d) => d.id)).toEqual(first.body.results.map((d) => d.id));

    const onlyA = await paged.get<Page>(`/v1/webhooks/deliveries/?endpoint_id=${a.body.id}`);
    expect(onlyA.body.results).toHaveLength(30);
    expect(onlyA.body.results.every((d) => d.endpoint_id === a.body.id)).toBe(true);
    // The receiver can hold the 30th request a moment before the worker records its success.
    await expect
      .poll(
        async () =>
          (
            await paged.get<Page>(
              `/v1/webhooks/deliveries/?endpoint_id=${b.body.id}&status=success&event_type=case.created`,
            )
          ).body.results.length,
        { timeout: 10_000 },
      )
      .toBe(30);
    expect((await paged.get<Page>('/v1/webhooks/deliveries/?status=dead_letter')).body.results).toHaveLength(
      0,
    );
    expect(
      (await paged.get<Page>('/v1/webhooks/deliveries/?event_type=case.closed')).body.results,
    ).toHaveLength(0);
    expect((await paged.get('/v1/webhooks/deliveries/?status=bogus')).status).toBe(422);
    const withFilterPage = await paged.get<Page>(`/v1/webhooks/deliveries/?event_type=case.created`);
    expect(withFilterPage.body.next).toContain('event_type=case.created');

    const someId = first.body.results[0]?.id;
    expect((await otherApi.get(`/v1/webhooks/deliveries/${someId}/`)).status).toBe(404);
    expect((await otherApi.post(`/v1/webhooks/deliveries/${someId}/retry/`)).status).toBe(404);
    expect(
      (await otherApi.get<Page>(`/v1/webhooks/deliveries/?endpoint_id=${a.body.id}`)).body.results,
    ).toHaveLength(0);
  }, 60_000);

  it('publishes every webhook route in the OpenAPI document', async () => {
    const doc = await api.get<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    }>('/v1/openapi.json');
    const paths = doc.body.paths;
    expect(paths['/v1/webhooks/endpoints/']?.post?.responses).toHaveProperty('201');
    expect(paths['/v1/webhooks/endpoints/']?.get).toBeDefined();
    expect(paths['/v1/webhooks/endpoints/{id}/']?.patch).toBeDefined();
    expect(paths['/v1/webhooks/endpoints/{id}/']?.delete?.responses).toHaveProperty('204');
    expect(paths['/v1/webhooks/endpoints/{id}/rotate-secret/']?.post).toBeDefined();
    expect(paths['/v1/webhooks/endpoints/{id}/test/']?.post?.responses).toHaveProperty('202');
    expect(paths['/v1/webhooks/deliveries/']?.get).toBeDefined();
    expect(paths['/v1/webhooks/deliveries/{id}/']?.get).toBeDefined();
    expect(paths['/v1/webhooks/deliveries/{id}/retry/']?.post?.responses).toHaveProperty('202');
  });

  it('needs an API key', async () => {
    const anonymous = apiClient(app.baseUrl);
    expect((await anonymous.get('/v1/webhooks/endpoints/')).status).toBe(401);
    expect((await anonymous.get('/v1/webhooks/deliveries/')).status).toBe(401);
  });
});
