import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { recordEvents } from '@/server/platform/outbox/record-events';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import type { TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { type InProcess, startInProcess } from '@/test/support/in-process';

/** The events API and the recovery of an endpoint's failed deliveries (decisions: "Events API and recovery"). */
type Envelope = { id: string; type: string; created_at: string; data: Record<string, unknown> };
type Page = { next: string | null; previous: string | null; results: Envelope[] };

let inProcess: InProcess;
let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;
let receiver: Receiver;
let api: ReturnType<typeof apiClient>;
let otherApi: ReturnType<typeof apiClient>;
let teamId: string;

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  app = await startApp({
    databaseUrl: database.url,
    env: {
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // Retries far apart: a failed delivery stays failed until the test recovers it.
      WEBHOOK_RETRY_SCHEDULE: '3600,3600,3600,3600,3600,3600,3600',
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
    },
  });
  const own = await createTeam(database.db, { name: 'Events', adminEmail: 'admin@events.test' }, systemClock);
  const other = await createTeam(database.db, { name: 'Other', adminEmail: 'admin@other.test' }, systemClock);
  teamId = own.team.id;
  api = apiClient(app.baseUrl, own.key.token);
  otherApi = apiClient(app.baseUrl, other.key.token);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await inProcess?.close();
});

async function createEndpoint(pathname: string, events = ['case.created']) {
  const res = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
    url: receiver.url(pathname),
    events,
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function createCase(email: string, client = api) {
  const res = await client.post<{ id: string }>('/v1/cases/', {
    subject_email: email,
    verification_methods: { email: true },
    notes: 'ünïcödé → "quoted"',
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('events API', () => {
  it('returns each event byte for byte as its delivery carried it', async () => {
    await createEndpoint('/bytes');
    const created = await createCase('bytes@example.test');
    const [delivered] = await receiver.waitFor('/bytes', 1);
    if (!delivered) throw new Error('no delivery');
    const envelope = JSON.parse(delivered.body) as Envelope;
    expect(envelope.data.case_id).toBe(created.id);

    const one = await api.get<Envelope>(`/v1/events/${envelope.id}/`);
    expect(one.status).toBe(200);
    expect(one.text).toBe(delivered.body);

    const listed = await api.get<Page>(`/v1/events/?case_id=${created.id}`);
    expect(listed.status).toBe(200);
    expect(listed.body.results).toHaveLength(1);
    expect(JSON.stringify(listed.body.results[0])).toBe(delivered.body);

    // The delivery record shows the same payload.
    const detail = await api.get<{ payload: string }>(
      `/v1/webhooks/deliveries/${delivered.headers['x-service-delivery']}/`,
    );
    expect(detail.body.payload).toBe(delivered.body);
  });

  it('lists newest first, 50 a page, both ways, with every filter', async () => {
    const caseA = await createCase('list-a@example.test');
    // 60 more events of another case, a millisecond apart, recorded through the outbox, with
    // data of the shape their types have (each numbered by its public_id).
    const base = Date.now() - 60_000;
    await database.db.transaction((tx) =>
      recordEvents(
        tx,
        inProcess.jobs,
        Array.from({ length: 60 }, (_, i) => ({
          scope: { teamId, livemode: true },
          type: i % 2 ? ('case.closed' as const) : ('verification.step_completed' as const),
          data: {
            case_id: '00000000-0000-4000-8000-000000000001',
            public_id: `seed${i}`,
            subject_email: 'seeded@example.test',
            status: i % 2 ? 'closed' : 'open',
            created_at: new Date(base).toISOString(),
            ...(i % 2 ? {} : { method: 'email' }),
          },
          caseId: '00000000-0000-4000-8000-000000000001',
          now: new Date(base + i),
        })),
      ),
    );
    const first = await api.get<Page>('/v1/events/');
    expect(first.body.results).toHaveLength(50);
    expect(first.body.previous).toBeNull();
    const times = first.body.results.map((e) => Date.parse(e.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(first.body.results[0]?.data.case_id).toBe(caseA.id);

    // Every event exactly once over the pages, and back again.
    const seen = [...first.body.results];
    let next = first.body.next;
    let last: Page = first.body;
    while (next) {
      const page = await api.get<Page>(next.replace(app.baseUrl, ''));
      expect(page.status).toBe(200);
      seen.push(...page.body.results);
      last = page.body;
      next = page.body.next;
    }
    const [{ n: total } = { n: -1 }] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from events where team_id = ${teamId}`;
    expect(seen).toHaveLength(total);
    expect(new Set(seen.map((e) => e.id)).size).toBe(total);
    expect(last.previous).not.toBeNull();
    const back = await api.get<Page>(String(last.previous).replace(app.baseUrl, ''));
    expect(back.body.results.map((e) => e.id)).toEqual(
      seen.slice(-last.results.length - 50, -last.results.length).map((e) => e.id),
    );

    const closed = await api.get<Page>('/v1/events/?type=case.closed');
    expect(closed.body.results).toHaveLength(30);
    expect(closed.body.results.every((e) => e.type === 'case.closed')).toBe(true);

    const byCase = await api.get<Page>(`/v1/events/?case_id=${caseA.id}`);
    expect(byCase.body.results.map((e) => e.type)).toEqual(['case.created']);

    const after = new Date(base + 49).toISOString();
    const before = new Date(base + 55).toISOString();
    const window = await api.get<Page>(
      `/v1/events/?created_after=${encodeURIComponent(after)}&created_before=${encodeURIComponent(before)}`,
    );
    expect(window.body.results.map((e) => e.data.public_id)).toEqual([
      'seed54',
      'seed53',
      'seed52',
      'seed51',
      'seed50',
    ]);
  });

  it('never shows another team its events: 404 by id, absent from lists', async () => {
    const mine = await createCase('private@example.test');
    const [event] = (await api.get<Page>(`/v1/events/?case_id=${mine.id}`)).body.results;
    if (!event) throw new Error('no event');
    expectError(await otherApi.get(`/v1/events/${event.id}/`), 404, 'NOT_FOUND');
    const theirs = await otherApi.get<Page>(`/v1/events/?case_id=${mine.id}`);
    expect(theirs.status).toBe(200);
    expect(theirs.body.results).toEqual([]);
    await createCase('their-own@example.test', otherApi);
    const theirList = await otherApi.get<Page>('/v1/events/');
    expect(theirList.body.results.map((e) => e.data.subject_email)).toEqual(['their-own@example.test']);
  });

  it('answers unknown and malformed ids 404 and bad filters 422', async () => {
    expectError(await api.get('/v1/events/evt_00000000-0000-4000-8000-000000000000/'), 404, 'NOT_FOUND');
    expectError(await api.get('/v1/events/not-an-event/'), 404, 'NOT_FOUND');
    expectError(await api.get('/v1/events/?type=case.deleted'), 422, 'VALIDATION_ERROR');
    expectError(await api.get('/v1/events/?case_id=nope'), 422, 'VALIDATION_ERROR');
    expectError(await api.get('/v1/events/?created_after=2026-01-01T00:00:00'), 422, 'VALIDATION_ERROR');
    expectError(await api.get('/v1/events/?cursor=garbage'), 422, 'VALIDATION_ERROR');
  });
});

describe('recovering an endpoint', () => {
  it('queues one new attempt for each failed delivery since the given time, and only those', async () => {
    const endpoint = await createEndpoint('/outage');
    let failing = true;
    receiver.replies.set('/outage', () => (failing ? { status: 503 } : { status: 200 }));
    await createCase('outage-1@example.test');
    await createCase('outage-2@example.test');
    await receiver.waitFor('/outage', 2);
    const failed = await eventually(async () => {
      const [row] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpoint.id} and status = 'failed'`;
      return row?.n === 2 ? row.n : undefined;
    });
    expect(failed).toBe(2);
    // One older failure, from before `since`: it stays as it is.
    await database.sql`
      update webhook_deliveries set created_at = now() - interval '2 days'
      where id = (select id from webhook_deliveries where endpoint_id = ${endpoint.id} order by created_at limit 1)`;

    failing = false;
    const since = new Date(Date.now() - 86_400_000).toISOString();
    const res = await api.post<{ queued: number }>(`/v1/webhooks/endpoints/${endpoint.id}/recover/`, {
      since,
    });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ queued: 1 });
    await receiver.waitFor('/outage', 3);
    const statuses = await eventually(async () => {
      const rows = await database.sql<{ status: string }[]>`
        select status from webhook_deliveries where endpoint_id = ${endpoint.id} order by created_at`;
      return rows[1]?.status === 'success' ? rows.map((r) => r.status) : undefined;
    });
    expect(statuses).toEqual(['failed', 'success']);
    // Nothing left to recover now in that window.
    const again = await api.post<{ queued: number }>(`/v1/webhooks/endpoints/${endpoint.id}/recover/`, {
      since,
    });
    expect(again.body).toEqual({ queued: 0 });
  });

  it('refuses a window over 7 days or in the future, and another team’s endpoint', async () => {
    const endpoint = await createEndpoint('/recover-limits');
    const path = `/v1/webhooks/endpoints/${endpoint.id}/recover/`;
    const eightDays = new Date(Date.now() - 8 * 86_400_000).toISOString();
    expectError(await api.post(path, { since: eightDays }), 422, 'VALIDATION_ERROR');
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    expectError(await api.post(path, { since: tomorrow }), 422, 'VALIDATION_ERROR');
    expectError(await api.post(path, {}), 422, 'VALIDATION_ERROR');
    expectError(await otherApi.post(path, { since: new Date().toISOString() }), 404, 'NOT_FOUND');
  });
});
