/**
 * A case's whole life through the API (decisions: "Case lifecycle and data protection"): cancel,
 * resend and redact, each with its happy, error and cross-team paths, the pages and links after
 * each, the webhooks that follow, and what happens when they race each other.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
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
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';

type Api = ReturnType<typeof apiClient>;
type CaseWire = {
  id: string;
  public_id: string;
  status: string;
  is_expired: boolean;
  expires_at: string;
  subject_email: string;
  subject_name: string | null;
  notes: string;
  canceled_at: string | null;
  redacted_at: string | null;
  verification_url: string;
  verification_methods: Record<string, Record<string, unknown>>;
};
type Envelope = { id: string; type: string; data: Record<string, unknown> };

let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;
let receiver: Receiver;
let api: Api;
let testApi: Api;
let otherTeam: Api;
let secret: string;
let liveKey: string;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  app = await startApp({
    databaseUrl: database.url,
    env: {
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
    },
  });
  const team = await createTeam(
    database.db,
    { name: 'Lifecycle Co', adminEmail: 'admin@life.test' },
    systemClock,
  );
  const other = await createTeam(
    database.db,
    { name: 'Other Co', adminEmail: 'admin@other.test' },
    systemClock,
  );
  api = apiClient(app.baseUrl, team.key.token);
  liveKey = team.key.token;
  teamId = team.team.id;
  testApi = apiClient(app.baseUrl, team.testKey.token);
  otherTeam = apiClient(app.baseUrl, other.key.token);
  const endpoint = await api.post<{ secret: string }>('/v1/webhooks/endpoints/', {
    url: receiver.url('/lifecycle'),
    events: ['case.expired', 'case.redacted', 'case.closed'],
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  secret = endpoint.body.secret;
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await database?.close();
});

let counter = 0;
async function createCase(
  client: Api = api,
  extra: Record<string, unknown> = {},
  methods: Record<string, boolean> = { email: true, manager: true },
): Promise<CaseWire> {
  counter += 1;
  const res = await client.post<CaseWire>('/v1/cases/', {
    subject_email: `person${counter}@life.test`,
    subject_name: `Person Number${counter}`,
    verification_methods: methods,
    ...(methods.manager
      ? { manager_name: `Boss Number${counter}`, manager_email: `boss${counter}@life.test` }
      : {}),
    ...extra,
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** The links the case's mails carry, newest mail first (the dev mailbox: no SMTP here). */
async function mailedLinks(caseId: string, count: number): Promise<{ email: string[]; manager: string[] }> {
  const rows = await eventually(async () => {
    const found = await database.sql<{ text: string }[]>`
      select text from dev_mailbox where case_id = ${caseId} order by created_at desc, id`;
    return found.length >= count ? found : undefined;
  });
  const links = (kind: string) =>
    rows.flatMap((row) => row.text.split(/\s+/).filter((word) => word.includes(`/${kind}/`)));
  return { email: links('email'), manager: links('manager') };
}

async function webhooksFor(caseId: string, type: string, count = 1): Promise<Envelope[]> {
  return eventually(async () => {
    const verifier = new Webhook(secret);
    const found = receiver
      .requestsTo('/lifecycle')
      .map((request) => verifier.verify(request.body, request.headers as Record<string, string>) as Envelope)
      .filter((event) => event.type === type && event.data.case_id === caseId);
    return found.length >= count ? found : undefined;
  });
}

describe('cancel', () => {
  it('ends an open case as expired with canceled_at, says so on every link, and emits case.expired "canceled"', async () => {
    const created = await createCase();
    const links = await mailedLinks(created.id, 2);
    const res = await api.post<CaseWire>(`/v1/cases/${created.id}/cancel/`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'expired', is_expired: true, redacted_at: null });
    expect(Date.parse(res.body.canceled_at ?? '')).toBeGreaterThan(
      Date.parse(created.expires_at) - 49 * 3600_000,
    );
    expect((await api.get<CaseWire>(`/v1/cases/${created.id}/`)).body).toEqual(res.body);

    const [event] = await webhooksFor(created.id, 'case.expired');
    expect(event?.data).toMatchObject({ status: 'expired', reason: 'canceled' });

    const page = await openSubjectPage(created.verification_url);
    expect(page.html).toContain('Lifecycle Co canceled this verification');
    expect(page.html).not.toContain('We e-mailed a link');
    expect(page.html).toContain('Not done');
    // The subject's mailed link no longer confirms anything: it leads back to that page.
    const emailLink = links.email[0] ?? '';
    const opened = await fetch(emailLink, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe(`/v/${created.public_id}`);
    // The manager's page says the team canceled it, and offers no buttons.
    const manager = await openSubjectPage(links.manager[0] ?? '');
    expect(manager.html).toContain('Lifecycle Co canceled this verification');
    expect(manager.html).not.toContain('name="decision"');
    const decided = await postSubjectForm(links.manager[0] ?? '', manager, { decision: 'confirm' });
    expect(decided.status).toBe(303);
    const after = await api.get<CaseWire>(`/v1/cases/${created.id}/`);
    expect(after.body.verification_methods.manager?.verified).toBe(false);
  });

  it('answers 409 CASE_NOT_OPEN for an ended case, 404 for another team’s or mode’s, and reads like a timeout otherwise', async () => {
    const created = await createCase();
    expect((await api.post(`/v1/cases/${created.id}/cancel/`)).status).toBe(200);
    expectError(await api.post(`/v1/cases/${created.id}/cancel/`), 409, 'CASE_NOT_OPEN');
    const other = await createCase();
    expectError(await otherTeam.post(`/v1/cases/${other.id}/cancel/`), 404, 'NOT_FOUND');
    expectError(await testApi.post(`/v1/cases/${other.id}/cancel/`), 404, 'NOT_FOUND');
    expectError(await api.post('/v1/cases/not-a-uuid/cancel/'), 404, 'NOT_FOUND');
    expect((await api.get<CaseWire>(`/v1/cases/${other.id}/`)).body.status).toBe('open');

    // A test case expired by simulation ends for time, not by the team.
    const test = await createCase(testApi, {}, { email: true });
    const expired = await testApi.post<CaseWire>(`/v1/cases/${test.id}/simulate/`, { action: 'expire' });
    expect(expired.body.canceled_at).toBeNull();
    const events = await testApi.get<{ results: Envelope[] }>(
      `/v1/events/?case_id=${test.id}&type=case.expired`,
    );
    expect(events.body.results.map((e) => e.data.reason)).toEqual(['timeout']);
  });

  it('races a completion: exactly one wins, and the loser is told the case has ended', async () => {
    for (let round = 0; round < 5; round += 1) {
      const created = await createCase(testApi, {}, { email: true });
      const [canceled, completed] = await Promise.all([
        testApi.post<CaseWire>(`/v1/cases/${created.id}/cancel/`),
        testApi.post<CaseWire>(`/v1/cases/${created.id}/simulate/`, {
          action: 'complete_step',
          method: 'email',
        }),
      ]);
      const statuses = [canceled.status, completed.status].sort();
      expect(statuses).toEqual([200, 409]);
      const final = (await testApi.get<CaseWire>(`/v1/cases/${created.id}/`)).body;
      expect(final.status).toBe(canceled.status === 200 ? 'expired' : 'closed');
      const ended = await testApi.get<{ results: Envelope[] }>(`/v1/events/?case_id=${created.id}`);
      const endings = ended.body.results.filter((e) => e.type === 'case.expired' || e.type === 'case.closed');
      expect(endings).toHaveLength(1);
    }
  });
});

describe('resend', () => {
  it('mails fresh links, kills the old ones, and keeps to one a minute and five a case', async () => {
    const created = await createCase();
    const first = await mailedLinks(created.id, 2);
    const res = await api.post<CaseWire>(`/v1/cases/${created.id}/resend/`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('open');
    const second = await mailedLinks(created.id, 4);
    const newEmail = second.email[0] ?? '';
    const newManager = second.manager[0] ?? '';
    expect(newEmail).not.toBe(first.email[0]);
    expect(newManager).not.toBe(first.manager[0]);
    const mail = await database.sql<{ text: string }[]>`
      select text from dev_mailbox where case_id = ${created.id} and text like ${`%${newEmail}%`}`;
    expect(mail[0]?.text).toContain('replaces the one we sent earlier');

    // The old e-mail link says it was replaced; the new one confirms.
    const old = await fetch(first.email[0] ?? '', { redirect: 'manual' });
    expect(old.headers.get('location')).toContain(`/v/${created.public_id}?n=email-invalid`);
    const page = await openSubjectPage(newEmail);
    const confirmed = await postSubjectForm(newEmail, page, {});
    expect(confirmed.headers.get('location')).toContain(`/v/${created.public_id}?n=email-verified`);
    const oldManager = await fetch(first.manager[0] ?? '', { redirect: 'manual' });
    expect(oldManager.status).toBe(404);

    // Within the minute: 429 with Retry-After; the e-mail step is done, so only the manager's.
    const soon = await api.post(`/v1/cases/${created.id}/resend/`);
    expectError(soon, 429, 'RATE_LIMITED');
    expect(Number(soon.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(soon.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expectError(
      await api.post(`/v1/cases/${created.id}/resend/`, { methods: ['email'] }),
      409,
      'STEP_NOT_PENDING',
    );
    // Four more, each a minute after the last (the clock moved by moving the last resend back).
    for (let more = 0; more < 4; more += 1) {
      await database.sql`update cases set last_resent_at = now() - interval '61 seconds' where id = ${created.id}`;
      const again = await api.post(`/v1/cases/${created.id}/resend/`, { methods: ['manager'] });
      expect(again.status, again.text).toBe(200);
    }
    await database.sql`update cases set last_resent_at = now() - interval '61 seconds' where id = ${created.id}`;
    const sixth = await api.post(`/v1/cases/${created.id}/resend/`);
    expectError(sixth, 429, 'RATE_LIMITED');
    expect(sixth.body).toMatchObject({ detail: expect.stringContaining('at most 5 times') });
    const [row] = await database.sql<{ resend_count: number }[]>`
      select resend_count from cases where id = ${created.id}`;
    expect(row?.resend_count).toBe(5);
  });

  it('keeps to 10 a day per address mailed and 100 an hour per team, whatever the number of cases', async () => {
    const team = await createTeam(
      database.db,
      { name: 'Resend Budget Co', adminEmail: 'admin@budget.test' },
      systemClock,
    );
    const budgetApi = apiClient(app.baseUrl, team.key.token);
    const budgetTestApi = apiClient(app.baseUrl, team.testKey.token);
    const open = async (client: Api, email: string) => {
      const res = await client.post<CaseWire>('/v1/cases/', {
        subject_email: email,
        verification_methods: { email: true },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.id;
    };
    // Each case allows one resend a minute: the last one is moved back instead of waiting.
    const resend = async (client: Api, caseId: string) => {
      await database.sql`update cases set last_resent_at = now() - interval '61 seconds' where id = ${caseId}`;
      return client.post<CaseWire>(`/v1/cases/${caseId}/resend/`);
    };

    // One inbox, reached through three cases: the eleventh resend of the day is refused.
    const sameInbox = [
      await open(budgetApi, 'inbox@budget.test'),
      await open(budgetApi, 'INBOX@budget.test'),
      await open(budgetApi, 'inbox@budget.test'),
    ];
    for (let sent = 0; sent < 10; sent += 1) {
      const res = await resend(budgetApi, sameInbox[sent % 3] ?? '');
      expect(res.status, res.text).toBe(200);
    }
    const eleventh = await resend(budgetApi, sameInbox[1] ?? '');
    expectError(eleventh, 429, 'RATE_LIMITED');
    expect(eleventh.body).toMatchObject({ detail: expect.stringContaining('This address') });
    expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThan(23 * 3600);
    // Another team mailing the same inbox is held by the same budget: it is one person's inbox.
    expectError(await resend(api, await open(api, 'inbox@budget.test')), 429, 'RATE_LIMITED');
    // Test mail never leaves: test mode counts apart.
    expect((await resend(budgetTestApi, await open(budgetTestApi, 'inbox@budget.test'))).status).toBe(200);

    // The team: 100 an hour across all its cases and addresses. The refusals above gave back the
    // team's point they had taken (the address refused after it), so 90 more pass, not 89.
    let sent = 10;
    for (let n = 0; sent < 100; n += 1) {
      const caseId = await open(budgetApi, `person${n}@budget.test`);
      for (let k = 0; k < 5 && sent < 100; k += 1, sent += 1) {
        const res = await resend(budgetApi, caseId);
        expect(res.status, `resend ${sent + 1}: ${res.text}`).toBe(200);
      }
    }
    const fresh = await open(budgetApi, 'fresh@budget.test');
    const overTeam = await resend(budgetApi, fresh);
    expectError(overTeam, 429, 'RATE_LIMITED');
    expect(overTeam.body).toMatchObject({ detail: expect.stringContaining('This team') });
    expect(Number(overTeam.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(overTeam.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    // Refused before anything went out: no new link, nothing spent of the address's budget.
    const [row] = await database.sql<{ resend_count: number }[]>`
      select resend_count from cases where id = ${fresh}`;
    expect(row?.resend_count).toBe(0);
    const spent = await database.sql<{ points: number }[]>`
      select points from rate_limits where key like ${'%fresh@budget.test'} and expire > now()`;
    expect(spent.reduce((sum, r) => sum + r.points, 0)).toBe(0);
    // Test mode has a budget of its own.
    expect((await resend(budgetTestApi, await open(budgetTestApi, 'fresh@budget.test'))).status).toBe(200);
  });

  it('refuses methods the case did not request, ended cases and other teams', async () => {
    const emailOnly = await createCase(api, {}, { email: true });
    expectError(
      await api.post(`/v1/cases/${emailOnly.id}/resend/`, { methods: ['manager'] }),
      422,
      'VALIDATION_ERROR',
    );
    expectError(
      await api.post(`/v1/cases/${emailOnly.id}/resend/`, { methods: ['sms'] }),
      422,
      'VALIDATION_ERROR',
    );
    expectError(
      await api.post(`/v1/cases/${emailOnly.id}/resend/`, { methods: [] }),
      422,
      'VALIDATION_ERROR',
    );
    expectError(await otherTeam.post(`/v1/cases/${emailOnly.id}/resend/`), 404, 'NOT_FOUND');
    const question = await createCase(
      api,
      { custom_question_text: 'Colour?', custom_question_answer: 'Blue' },
      { custom_question: true },
    );
    expectError(await api.post(`/v1/cases/${question.id}/resend/`), 409, 'STEP_NOT_PENDING');
    expect((await api.post(`/v1/cases/${emailOnly.id}/cancel/`)).status).toBe(200);
    expectError(await api.post(`/v1/cases/${emailOnly.id}/resend/`), 409, 'CASE_NOT_OPEN');
  });

  it('races a verification: the confirmed step is never mailed again, and the case stays consistent', async () => {
    const created = await createCase(api, {}, { email: true });
    const [link] = (await mailedLinks(created.id, 1)).email;
    const page = await openSubjectPage(link ?? '');
    const [confirmed, resent] = await Promise.all([
      postSubjectForm(link ?? '', page, {}),
      api.post<CaseWire>(`/v1/cases/${created.id}/resend/`),
    ]);
    const final = (await api.get<CaseWire>(`/v1/cases/${created.id}/`)).body;
    if (confirmed.headers.get('location')?.includes('n=email-verified')) {
      // Confirmed first: the case closed, the resend found it ended. Or the resend came first
      // and the confirmation, with the old token, can no longer succeed.
      expect(final.status).toBe('closed');
      expectError(resent, 409, 'CASE_NOT_OPEN');
    } else {
      expect(resent.status).toBe(200);
      expect(final.status).toBe('open');
      expect(confirmed.headers.get('location')).toContain(`/v/${created.public_id}?n=email-invalid`);
    }
  });
});

describe('redact', () => {
  /** Every text-like column of every table, in our schema and pg-boss's, that holds `needle`. */
  async function tablesHolding(needle: string): Promise<string[]> {
    const columns = await database.sql<{ table_schema: string; table_name: string; column_name: string }[]>`
      select table_schema, table_name, column_name from information_schema.columns
       where table_schema in ('public', 'pgboss') and data_type in ('text', 'character varying', 'json', 'jsonb')`;
    const found: string[] = [];
    for (const { table_schema, table_name, column_name } of columns) {
      const [row] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from ${database.sql(table_schema)}.${database.sql(table_name)}
         where position(${needle} in ${database.sql(column_name)}::text) > 0`;
      if ((row?.n ?? 0) > 0) found.push(`${table_schema}.${table_name}.${column_name}`);
    }
    return found;
  }

  it('erases the person from every table, keeps the case’s results, and emits case.redacted', async () => {
    const created = await createCase(
      testApi,
      {
        notes: 'Called from +44 7911 123456',
        custom_question_text: 'Your favourite Zanzibar fruit?',
        custom_question_answer: 'Mango',
      },
      { email: true, sms: true, manager: true, custom_question: true },
    );
    const subject = created.subject_email;
    const name = created.subject_name ?? '';
    const managerEmail = String(created.verification_methods.manager?.manager_email);
    // The subject gives a phone number and receives a code (test mode: kept in the dev mailbox).
    const phone = '+447911123456';
    const page = await openSubjectPage(created.verification_url);
    const sent = await postSubjectForm(`${created.verification_url}/sms`, page, { action: 'send', phone });
    expect(sent.headers.get('location')).toContain('n=sms-sent');
    await testApi.post(`/v1/cases/${created.id}/simulate/`, { action: 'complete_step', method: 'sms' });
    await mailedLinks(created.id, 3);
    const needles = [subject, name, managerEmail, phone, 'Zanzibar', '7911 123456'];
    for (const needle of needles) expect(await tablesHolding(needle), needle).not.toEqual([]);

    const res = await testApi.post<CaseWire>(`/v1/cases/${created.id}/redact/`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      status: 'expired',
      subject_email: `redacted+${created.public_id}@redacted.invalid`,
      subject_name: null,
      notes: '',
    });
    expect(res.body.canceled_at).not.toBeNull();
    expect(res.body.redacted_at).not.toBeNull();
    expect(res.body.verification_methods.sms).toMatchObject({
      requested: true,
      verified: true,
      phone_last4: null,
    });
    expect(res.body.verification_methods.manager).toMatchObject({ manager_name: null, manager_email: null });
    expect(res.body.verification_methods.custom_question).toMatchObject({ question: null });
    for (const needle of needles) expect(await tablesHolding(needle), needle).toEqual([]);

    // Lists and filters no longer find the old address; the events API serves redacted bodies.
    const byEmail = await testApi.get<{ results: CaseWire[] }>(
      `/v1/cases/?subject_email=${encodeURIComponent(subject)}`,
    );
    expect(byEmail.body.results).toEqual([]);
    const events = await testApi.get<{ results: Envelope[] }>(`/v1/events/?case_id=${created.id}`);
    expect(events.body.results.map((e) => e.type)).toContain('case.redacted');
    expect(JSON.stringify(events.body.results)).not.toContain(subject);

    // Repeating it changes nothing and emits nothing more.
    const again = await testApi.post<CaseWire>(`/v1/cases/${created.id}/redact/`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    const afterRepeat = await testApi.get<{ results: Envelope[] }>(
      `/v1/events/?case_id=${created.id}&type=case.redacted`,
    );
    expect(afterRepeat.body.results).toHaveLength(1);
  });

  it('delivers case.redacted to endpoints that subscribe, and two redactions at once redact once', async () => {
    const created = await createCase();
    const results = await Promise.all([
      api.post<CaseWire>(`/v1/cases/${created.id}/redact/`),
      api.post<CaseWire>(`/v1/cases/${created.id}/redact/`),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(results[0]?.body.redacted_at).toBe(results[1]?.body.redacted_at);
    const [event] = await webhooksFor(created.id, 'case.redacted');
    expect(event?.data.subject_email).toBe(`redacted+${created.public_id}@redacted.invalid`);
    // The cancellation that preceded it went out redacted too (it was still pending delivery).
    const events = await api.get<{ results: Envelope[] }>(`/v1/events/?case_id=${created.id}`);
    expect(events.body.results.map((e) => e.type).sort()).toEqual([
      'case.created',
      'case.expired',
      'case.redacted',
    ]);
    expect(JSON.stringify(events.body.results)).not.toContain(created.subject_email);
    const redactedEvents = await api.get<{ results: Envelope[] }>(
      `/v1/events/?case_id=${created.id}&type=case.redacted`,
    );
    expect(redactedEvents.body.results).toHaveLength(1);
    expectError(await otherTeam.post(`/v1/cases/${created.id}/redact/`), 404, 'NOT_FOUND');
    const page = await openSubjectPage(created.verification_url);
    expect(page.html).not.toContain(created.subject_email);
  });
});

describe('the audit log', () => {
  it('records what API keys do to cases and endpoints, naming the key by its prefix and last four', async () => {
    const created = await createCase();
    expect(
      (await api.post(`/v1/cases/${created.id}/cancel/`, undefined, { 'User-Agent': 'acme-hr/2.1' })).status,
    ).toBe(200);
    const endpoint = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
      url: receiver.url('/audited'),
      events: ['case.closed'],
    });
    expect((await api.delete(`/v1/webhooks/endpoints/${endpoint.body.id}/`)).status).toBe(204);
    // A refused change records nothing.
    expectError(await api.post(`/v1/cases/${created.id}/cancel/`), 409, 'CASE_NOT_OPEN');

    const entries = await database.sql<
      { action: string; target: string; actor_email: string; user_agent: string }[]
    >`
      select action, target, actor_email, user_agent from audit_log
       where team_id = ${teamId} and target in (${created.id}, ${endpoint.body.id}) order by created_at, action`;
    const actor = `API key ${liveKey.slice(0, 'vouch_live_'.length + 4)}…${liveKey.slice(-4)}`;
    expect(entries.map((e) => [e.action, e.target, e.actor_email])).toEqual([
      ['case.created', created.id, actor],
      ['case.canceled', created.id, actor],
      ['webhook_endpoint.created', endpoint.body.id, actor],
      ['webhook_endpoint.deleted', endpoint.body.id, actor],
    ]);
    expect(entries.find((e) => e.action === 'case.canceled')?.user_agent).toBe('acme-hr/2.1');
  });
});
