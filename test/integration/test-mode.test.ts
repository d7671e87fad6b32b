/**
 * Test mode and simulation (decisions: "Test mode and simulation"): `vouch_test_…` keys see only
 * test data and live keys only live data, on every route; test cases cost nothing and pass no
 * billing gate; their mail, SMS and ID checks never reach a vendor even where the live ones do
 * (this app runs with a real SMTP server and Twilio and Stripe stand-ins configured); and
 * `POST /v1/cases/{id}/simulate/` drives a test case through the real state machine, with the
 * webhooks that follow verified by both Standard Webhooks libraries.
 */
import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devMailbox } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam, updateTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { consoleClient, runCli, signInReplacingPassword } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { enrollPasskey, insertCase } from '@/test/support/passkeys';
import { type SmtpSink, startSmtpSink } from '@/test/support/smtp-sink';
import { type StripeStandIn, startStripeStandIn } from '@/test/support/stripe-stand-in';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';
import { startTwilioStandIn, type TwilioStandIn } from '@/test/support/twilio-stand-in';

type Api = ReturnType<typeof apiClient>;
type CaseWire = {
  id: string;
  public_id: string;
  status: string;
  is_expired: boolean;
  livemode: boolean;
  failure_reason: string | null;
  verification_url: string;
  verification_methods: Record<string, { requested: boolean; verified: boolean }>;
};
type Endpoint = { id: string; secret: string };
type Envelope = {
  id: string;
  type: string;
  created_at: string;
  livemode: boolean;
  data: Record<string, unknown>;
};
type Page<T> = { next: string | null; previous: string | null; results: T[] };

let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;
let receiver: Receiver;
let smtp: SmtpSink;
let twilio: TwilioStandIn;
let stripe: StripeStandIn;
let teamId: string;
let live: Api;
let test: Api;
let testKey: string;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  smtp = await startSmtpSink();
  twilio = await startTwilioStandIn();
  stripe = await startStripeStandIn();
  app = await startApp({
    databaseUrl: database.url,
    env: {
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
      // Live mode is served by real vendors here (their stand-in servers, on plain http, which
      // VOUCH_ENV=production would refuse); test mode must not touch them.
      SMTP_URL: smtp.url,
      SMS_PROVIDER: 'twilio',
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_FROM: '+15005550006',
      TWILIO_API_BASE: twilio.url,
      IDENTITY_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: stripe.secretKey,
      STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
      STRIPE_API_BASE: stripe.url,
    },
  });
  const created = await createTeam(
    database.db,
    { name: 'Modes', adminEmail: 'admin@modes.test' },
    systemClock,
  );
  teamId = created.team.id;
  testKey = created.testKey.token;
  expect(created.key.token).toMatch(/^vouch_live_/);
  expect(testKey).toMatch(/^vouch_test_[A-Za-z0-9]{40}$/);
  live = apiClient(app.baseUrl, created.key.token);
  test = apiClient(app.baseUrl, testKey);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await smtp?.close();
  await twilio?.close();
  await stripe?.close();
  await database?.close();
});

async function createCase(client: Api, email: string, methods: Record<string, boolean> = { email: true }) {
  const res = await client.post<CaseWire>('/v1/cases/', {
    subject_email: email,
    verification_methods: methods,
    ...(methods.custom_question ? { custom_question_text: 'Team?', custom_question_answer: 'Blue' } : {}),
    ...(methods.manager ? { manager_name: 'Mia Manager', manager_email: `manager.${email}` } : {}),
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function createEndpoint(client: Api, pathname: string): Promise<Endpoint> {
  const res = await client.post<Endpoint>('/v1/webhooks/endpoints/', {
    url: receiver.url(pathname),
    events: ['case.created', 'case.closed', 'case.failed', 'case.expired', 'verification.step_completed'],
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function usedUnits(): Promise<number> {
  const res = await live.get<{ usage: Record<string, { total_used: number }> }>('/v1/account/usage/');
  expect(res.status, res.text).toBe(200);
  return Object.values(res.body.usage).reduce((sum, m) => sum + m.total_used, 0);
}

/** Which resource an `{id}` route names, and a body it accepts (GET and DELETE send none). */
function routeShape(route: { path: string }) {
  const kind = route.path.startsWith('/v1/cases/')
    ? ('case' as const)
    : route.path.startsWith('/v1/events/')
      ? ('event' as const)
      : route.path.startsWith('/v1/webhooks/deliveries/')
        ? ('delivery' as const)
        : route.path.startsWith('/v1/passkeys/')
          ? ('passkey' as const)
          : ('endpoint' as const);
  const body = route.path.endsWith('/recover/')
    ? { since: new Date(Date.now() - 3_600_000).toISOString() }
    : route.path.endsWith('/simulate/')
      ? { action: 'expire' }
      : {};
  return { kind, body };
}

describe('test mode', () => {
  it('keeps live and test data apart on every route, both ways', async () => {
    const liveEndpoint = await createEndpoint(live, '/iso-live');
    const testEndpoint = await createEndpoint(test, '/iso-test');
    const liveCase = await createCase(live, 'iso-live@example.test');
    const testCase = await createCase(test, 'iso-test@example.test');
    expect(liveCase.livemode).toBe(true);
    expect(testCase.livemode).toBe(false);

    // Each case's creation is delivered to its own mode's endpoint only.
    const [liveDelivered] = await receiver.waitFor('/iso-live', 1);
    const [testDelivered] = await receiver.waitFor('/iso-test', 1);
    const liveEvent = JSON.parse(liveDelivered?.body ?? '{}') as Envelope;
    const testEvent = JSON.parse(testDelivered?.body ?? '{}') as Envelope;
    expect([liveEvent.livemode, liveEvent.data.case_id]).toEqual([true, liveCase.id]);
    expect([testEvent.livemode, testEvent.data.case_id]).toEqual([false, testCase.id]);
    expect(Object.keys(testEvent)).toEqual(['id', 'type', 'created_at', 'livemode', 'data']);
    const liveDelivery = String(liveDelivered?.headers['x-service-delivery']);
    const testDelivery = String(testDelivered?.headers['x-service-delivery']);

    // A passkey in each mode, saved at the end of a closed case of its own (redacting the case
    // above, as a route below does, would delete a passkey it had enrolled).
    const passkeyIn = async (livemode: boolean, subjectEmail: string) =>
      enrollPasskey(
        database.db,
        await insertCase(database.db, { teamId, livemode, subjectEmail, status: 'closed' }),
      );
    const livePasskey = await passkeyIn(true, 'iso-live@example.test');
    const testPasskey = await passkeyIn(false, 'iso-test@example.test');
    const ids = {
      live: {
        case: liveCase.id,
        endpoint: liveEndpoint.id,
        delivery: liveDelivery,
        event: liveEvent.id,
        passkey: livePasskey.id,
      },
      test: {
        case: testCase.id,
        endpoint: testEndpoint.id,
        delivery: testDelivery,
        event: testEvent.id,
        passkey: testPasskey.id,
      },
    };
    // Every route of the published document that names one resource: the owner's mode finds it;
    // the same team's other mode answers 404 saying where the id belongs and which key to use; a
    // stranger (another team, either mode) gets the plain 404 an unknown id gets, so the answer
    // tells nothing about other teams' ids. A GET first on each path: nobody else may change
    // anything either.
    const document = await live.get<{ paths: Record<string, Record<string, unknown>> }>('/v1/openapi.json');
    // Templates belong to the team, not to a mode (both keys use them): test/integration/templates.test.ts.
    const idRoutes = Object.entries(document.body.paths).flatMap(([path, item]) =>
      path.includes('{id}') && !path.startsWith('/v1/templates/')
        ? Object.keys(item).map((method) => ({ path, method: method.toUpperCase() }))
        : [],
    );
    expect(idRoutes.length).toBeGreaterThanOrEqual(14);
    const stranger = await createTeam(
      database.db,
      { name: 'Strangers', adminEmail: 'a@strangers.test' },
      systemClock,
    );
    const strangers = {
      live: apiClient(app.baseUrl, stranger.key.token),
      test: apiClient(app.baseUrl, stranger.testKey.token),
    };
    const unknownIds = {
      case: crypto.randomUUID(),
      endpoint: crypto.randomUUID(),
      delivery: crypto.randomUUID(),
      event: `evt_${crypto.randomUUID()}`,
      passkey: crypto.randomUUID(),
    };
    const nouns = {
      case: 'case',
      event: 'event',
      delivery: 'webhook delivery',
      endpoint: 'webhook endpoint',
      passkey: 'passkey',
    };
    for (const [own, other, client, otherClient] of [
      ['live', 'test', live, test],
      ['test', 'live', test, live],
    ] as const) {
      for (const route of idRoutes) {
        const { kind, body } = routeShape(route);
        const ask = (asker: Api, id: string) =>
          asker.request<{ code: string; detail: string }>(
            route.method,
            route.path.replace('{id}', id),
            route.method === 'GET' || route.method === 'DELETE' ? {} : { body },
          );
        const context = `${other} key on ${own} ${route.method} ${route.path}`;
        const res = await ask(otherClient, ids[own][kind]);
        expect(res.status, `${context}: ${res.text}`).toBe(404);
        expect(res.body.code).toBe('NOT_FOUND');
        expect(res.body.detail, context).toBe(
          `No ${nouns[kind]} with this id in ${other} mode: it belongs to this team’s ${own} mode. ` +
            `Ask with a ${own} key (vouch_${own}_…), or turn ${other === 'live' ? 'on' : 'off'} the console’s Test data switch.`,
        );
        const unknown = await ask(strangers.live, unknownIds[kind]);
        expect(unknown.status, `unknown id on ${route.method} ${route.path}: ${unknown.text}`).toBe(404);
        expect(unknown.body.detail).toBe(`No ${nouns[kind]} with this id.`);
        for (const mode of ['live', 'test'] as const) {
          const foreign = await ask(strangers[mode], ids[own][kind]);
          expect(foreign.status, `another team's ${mode} key on ${own} ${route.method} ${route.path}`).toBe(
            404,
          );
          expect(foreign.body).toEqual(unknown.body);
        }
      }
      // The owner still sees each of them, unchanged.
      expect((await client.get<CaseWire>(`/v1/cases/${ids[own].case}/`)).body.status).toBe('open');
      expect((await client.get(`/v1/webhooks/endpoints/${ids[own].endpoint}/`)).status).toBe(200);
      expect((await client.get(`/v1/webhooks/deliveries/${ids[own].delivery}/`)).status).toBe(200);
      expect((await client.get(`/v1/events/${ids[own].event}/`)).status).toBe(200);
      const held = await client.get<{ results: Array<{ id: string }> }>(
        `/v1/passkeys/?subject_email=iso-${own}%40example.test`,
      );
      expect(held.body.results.map((passkey) => passkey.id)).toEqual([ids[own].passkey]);
    }

    // Lists never mix.
    for (const [client, own, other] of [
      [live, ids.live, ids.test],
      [test, ids.test, ids.live],
    ] as const) {
      const cases = (await client.get<Page<CaseWire>>('/v1/cases/')).body.results.map((c) => c.id);
      expect(cases).toContain(own.case);
      expect(cases).not.toContain(other.case);
      const byEmail = await client.get<Page<CaseWire>>(
        `/v1/cases/?subject_email=${own === ids.live ? 'iso-test' : 'iso-live'}%40example.test`,
      );
      expect(byEmail.body.results).toEqual([]);
      const othersPasskeys = await client.get<{ results: unknown[] }>(
        `/v1/passkeys/?subject_email=${own === ids.live ? 'iso-test' : 'iso-live'}%40example.test`,
      );
      expect(othersPasskeys.body.results).toEqual([]);
      const endpoints = (await client.get<{ results: Endpoint[] }>('/v1/webhooks/endpoints/')).body.results;
      expect(endpoints.map((e) => e.id)).toEqual([own.endpoint]);
      const deliveries = (await client.get<Page<{ id: string }>>('/v1/webhooks/deliveries/')).body.results;
      expect(deliveries.map((d) => d.id)).toContain(own.delivery);
      expect(deliveries.map((d) => d.id)).not.toContain(other.delivery);
      const events = (await client.get<Page<Envelope>>('/v1/events/')).body.results;
      expect(events.map((e) => e.id)).toContain(own.event);
      expect(events.map((e) => e.id)).not.toContain(other.event);
      expect(new Set(events.map((e) => e.livemode))).toEqual(new Set([own === ids.live]));
    }

    // The control for the 404s above: on every one of those routes the owning mode finds the id
    // (whatever it then answers, never 404 and never a server error). Reads first; the routes that
    // end a resource's life (cancel, redact, delete) last, so each earlier one meets it alive.
    const lastOrder = (route: { path: string; method: string }) =>
      route.method === 'GET'
        ? 0
        : route.method === 'DELETE'
          ? 4
          : route.path.endsWith('/redact/')
            ? 3
            : route.path.endsWith('/cancel/')
              ? 2
              : 1;
    const ownerAnswers: string[] = [];
    for (const [own, client] of [
      ['live', live],
      ['test', test],
    ] as const) {
      for (const route of [...idRoutes].sort((a, b) => lastOrder(a) - lastOrder(b))) {
        const { kind, body } = routeShape(route);
        const res = await client.request(
          route.method,
          route.path.replace('{id}', ids[own][kind]),
          route.method === 'GET' || route.method === 'DELETE' ? {} : { body },
        );
        const found = res.status !== 404 && res.status < 500;
        ownerAnswers.push(
          `${own} key on ${own} ${route.method} ${route.path}: ${found ? 'found' : res.text}`,
        );
      }
    }
    expect(ownerAnswers).toEqual(ownerAnswers.map((answer) => answer.replace(/: .*$/, ': found')));
    expect(ownerAnswers).toHaveLength(idRoutes.length * 2);
  });

  it('counts no usage and passes no billing gate', async () => {
    const before = await usedUnits();
    await createCase(test, 'free@example.test', { email: true, sms: true, government_id: true });
    expect(await usedUnits()).toBe(before);
    await createCase(live, 'paid@example.test', { email: true });
    expect(await usedUnits()).toBe(before + 1);

    // A canceled subscription stops live cases, not test ones.
    await updateTeam(database.db, teamId, { subscriptionStatus: 'canceled' });
    try {
      expectError(
        await live.post('/v1/cases/', {
          subject_email: 'x@example.test',
          verification_methods: { email: true },
        }),
        422,
        'TRIAL_EXPIRED',
      );
      await createCase(test, 'still-free@example.test');
    } finally {
      await updateTeam(database.db, teamId, { subscriptionStatus: 'active' });
    }
  });

  it("never shows a test key the live account's balance or usage", async () => {
    await updateTeam(database.db, teamId, { topupBalanceCents: 12_345 });
    await createCase(live, 'counted@example.test', { email: true, sms: true });
    const liveAccount = await live.get<{ name: string; topup_balance_cents: number }>('/v1/account/');
    const testAccount = await test.get<{ name: string; plan: string; topup_balance_cents: number }>(
      '/v1/account/',
    );
    expect([liveAccount.status, testAccount.status]).toEqual([200, 200]);
    expect(liveAccount.body.topup_balance_cents).toBe(12_345);
    // The team's name, plan and status are the same; the money is live mode's alone.
    expect(testAccount.body).toEqual({ ...liveAccount.body, topup_balance_cents: 0 });

    type Usage = { usage: Record<string, { allowed: number; total_used: number; topup_cost_cents: number }> };
    const liveUsage = await live.get<Usage>('/v1/account/usage/');
    const testUsage = await test.get<Usage>('/v1/account/usage/');
    expect([liveUsage.status, testUsage.status]).toEqual([200, 200]);
    expect(liveUsage.body.usage.sms?.total_used).toBeGreaterThan(0);
    for (const [method, entry] of Object.entries(testUsage.body.usage)) {
      expect(entry, method).toEqual({
        allowed: liveUsage.body.usage[method]?.allowed,
        included_used: 0,
        topup_used: 0,
        topup_cost_cents: 0,
        total_used: 0,
        percent_used: 0,
      });
    }
  });

  it('has rate-limit budgets and idempotency keys of its own', async () => {
    const liveBefore = Number((await live.get('/v1/cases/')).headers.get('x-ratelimit-remaining'));
    const testBefore = Number((await test.get('/v1/cases/')).headers.get('x-ratelimit-remaining'));
    for (let i = 0; i < 3; i++) await test.get('/v1/cases/');
    expect(Number((await test.get('/v1/cases/')).headers.get('x-ratelimit-remaining'))).toBe(testBefore - 4);
    expect(Number((await live.get('/v1/cases/')).headers.get('x-ratelimit-remaining'))).toBe(liveBefore - 1);

    const body = { subject_email: 'idem@example.test', verification_methods: { email: true } };
    const headers = { 'Idempotency-Key': 'same-key-both-modes' };
    const first = await live.post<CaseWire>('/v1/cases/', body, headers);
    const second = await test.post<CaseWire>('/v1/cases/', body, headers);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
    expect([first.body.livemode, second.body.livemode]).toEqual([true, false]);
    const replay = await test.post<CaseWire>('/v1/cases/', body, headers);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(second.body.id);
  });

  it('keeps its mail and text messages in the dev mailbox and simulates ID checks, marked "Test mode"', async () => {
    const liveCase = await createCase(live, 'mail-live@example.test', { email: true, government_id: true });
    const testCase = await createCase(test, 'mail-test@example.test', {
      email: true,
      sms: true,
      government_id: true,
    });
    await eventually(async () => smtp.mails.some((m) => m.to.includes('mail-live@example.test')));
    await eventually(async () => {
      const kept = await database.db.select({ to: devMailbox.to }).from(devMailbox);
      return kept.some((row) => row.to === 'mail-test@example.test');
    });
    expect(smtp.mails.some((m) => m.to.includes('mail-test@example.test'))).toBe(false);

    // The live page offers Stripe's hosted check; the test page the simulated upload, and says so.
    const livePage = await openSubjectPage(liveCase.verification_url);
    expect(livePage.html).toContain('/identity/start');
    expect(livePage.html).not.toContain('Test mode');
    const page = await openSubjectPage(testCase.verification_url);
    expect(page.html).toContain('<strong>Test mode.</strong>');
    expect(page.html).not.toContain('/identity/start');
    expect(page.html).toContain('type="file"');

    // The code goes to the dev mailbox, not to Twilio, and is always 000000.
    const sent = await postSubjectForm(`${testCase.verification_url}/sms`, page, {
      action: 'send',
      phone: '+447911123456',
    });
    expect(sent.headers.get('location')).toContain('n=sms-sent');
    const kept = await database.db.select().from(devMailbox);
    expect(kept.find((row) => row.to === '+447911123456')?.text).toMatch(
      /^Modes: your code is 000000\. Valid 10 min\.$/,
    );
    expect(twilio.messages).toEqual([]);
    const confirmed = await postSubjectForm(`${testCase.verification_url}/sms`, page, {
      action: 'verify',
      code: '000000',
    });
    expect(confirmed.headers.get('location')).toContain('n=sms-verified');
    const after = await test.get<CaseWire>(`/v1/cases/${testCase.id}/`);
    expect(after.body.verification_methods.sms).toMatchObject({ requested: true, verified: true });
  });
});

describe('simulation', () => {
  it('closes a test case step by step, with the webhooks both libraries verify', async () => {
    const endpoint = await createEndpoint(test, '/simulate-close');
    const created = await createCase(test, 'sim-close@example.test', {
      email: true,
      sms: true,
      government_id: true,
      custom_question: true,
      manager: true,
    });
    for (const method of ['email', 'sms', 'custom_question', 'manager']) {
      const res = await test.post<CaseWire>(`/v1/cases/${created.id}/simulate/`, {
        action: 'complete_step',
        method,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.verification_methods[method]?.verified).toBe(true);
      expect(res.body.status).toBe('open');
    }
    // The document and the selfie pass together, as on the page.
    const closed = await test.post<CaseWire>(`/v1/cases/${created.id}/simulate/`, {
      action: 'complete_step',
      method: 'government_id',
    });
    expect(closed.status, closed.text).toBe(200);
    expect(closed.body.status).toBe('closed');
    expect(closed.body.verification_methods.selfie).toEqual({ requested: true, verified: true });

    // created + 6 steps (selfie included) + closed.
    const requests = await receiver.waitFor('/simulate-close', 8);
    const envelopes = requests.map((r) => JSON.parse(r.body) as Envelope);
    expect(
      envelopes
        .filter((e) => e.type === 'verification.step_completed')
        .map((e) => e.data.method)
        .sort(),
    ).toEqual(['custom_question', 'email', 'government_id', 'manager', 'selfie', 'sms']);
    const closing = requests.find((r) => (JSON.parse(r.body) as Envelope).type === 'case.closed');
    if (!closing) throw new Error('no case.closed delivery');
    const h = closing.headers;
    expect(await verify(endpoint.secret, closing.body, String(h['x-service-signature']))).toBe(true);
    const envelope = new Webhook(endpoint.secret).verify(closing.body, {
      'webhook-id': String(h['webhook-id']),
      'webhook-timestamp': String(h['webhook-timestamp']),
      'webhook-signature': String(h['webhook-signature']),
    }) as Envelope;
    expect(envelope).toMatchObject({
      type: 'case.closed',
      livemode: false,
      data: { case_id: created.id, status: 'closed' },
    });

    // Ended: nothing more can happen to it.
    expectError(
      await test.post(`/v1/cases/${created.id}/simulate/`, { action: 'expire' }),
      409,
      'CASE_NOT_OPEN',
    );
  });

  it('fails a step with its own reason or the one given, and expires a case', async () => {
    const endpoint = await createEndpoint(test, '/simulate-end');
    const expected: Array<[string, string | undefined, string]> = [
      ['government_id', undefined, 'government_id_rejected'],
      ['selfie', undefined, 'selfie_rejected'],
      ['sms', undefined, 'sms_code_failed'],
      ['custom_question', undefined, 'custom_question_failed'],
      ['manager', undefined, 'manager_declined'],
      ['email', 'manager_declined', 'manager_declined'],
      ['sms', 'government_id_rejected', 'government_id_rejected'],
    ];
    for (const [method, given, reason] of expected) {
      const created = await createCase(test, `fail-${method}@example.test`, {
        email: true,
        sms: true,
        government_id: true,
        custom_question: true,
        manager: true,
      });
      const res = await test.post<CaseWire>(`/v1/cases/${created.id}/simulate/`, {
        action: 'fail_step',
        method,
        ...(given ? { failure_reason: given } : {}),
      });
      expect(res.status, `${method}: ${res.text}`).toBe(200);
      expect([res.body.status, res.body.failure_reason]).toEqual(['failed', reason]);
    }
    expectError(
      await test.post(`/v1/cases/${(await createCase(test, 'no-reason@example.test')).id}/simulate/`, {
        action: 'fail_step',
        method: 'email',
      }),
      422,
      'VALIDATION_ERROR',
    );

    const toExpire = await createCase(test, 'expire@example.test');
    const expired = await test.post<CaseWire>(`/v1/cases/${toExpire.id}/simulate/`, { action: 'expire' });
    expect(expired.status, expired.text).toBe(200);
    expect([expired.body.status, expired.body.is_expired]).toEqual(['expired', true]);
    await eventually(async () => {
      const got = receiver.requestsTo('/simulate-end').map((r) => JSON.parse(r.body) as Envelope);
      return got.some((e) => e.type === 'case.expired' && e.data.case_id === toExpire.id);
    });
    // Every failure reached the endpoint as a signed case.failed carrying its reason.
    const isFailure = (body: string) => body.includes('"type":"case.failed"');
    await eventually(
      async () => receiver.requestsTo('/simulate-end').filter((r) => isFailure(r.body)).length === 7,
    );
    const failed = receiver.requestsTo('/simulate-end').filter((r) => isFailure(r.body));
    for (const request of failed) {
      expect(
        await verify(endpoint.secret, request.body, String(request.headers['x-service-signature'])),
      ).toBe(true);
    }
    expect(failed.map((r) => String((JSON.parse(r.body) as Envelope).data.failure_reason)).sort()).toEqual(
      expected.map(([, , reason]) => reason).sort(),
    );
  });

  it('refuses live cases, steps not requested or already done, and bad input', async () => {
    const liveCase = await createCase(live, 'sim-live@example.test');
    expectError(
      await live.post(`/v1/cases/${liveCase.id}/simulate/`, { action: 'complete_step', method: 'email' }),
      422,
      'TEST_MODE_ONLY',
    );
    expect(
      (await live.get<CaseWire>(`/v1/cases/${liveCase.id}/`)).body.verification_methods.email?.verified,
    ).toBe(false);

    const created = await createCase(test, 'sim-refuse@example.test', { email: true, sms: true });
    const path = `/v1/cases/${created.id}/simulate/`;
    expectError(
      await test.post(path, { action: 'complete_step', method: 'manager' }),
      422,
      'VALIDATION_ERROR',
    );
    expectError(await test.post(path, { action: 'complete_step' }), 422, 'VALIDATION_ERROR');
    expectError(await test.post(path, { action: 'expire', method: 'email' }), 422, 'VALIDATION_ERROR');
    expectError(await test.post(path, { action: 'explode' }), 422, 'VALIDATION_ERROR');
    expectError(
      await test.post(path, { action: 'complete_step', method: 'email', failure_reason: 'manager_declined' }),
      422,
      'VALIDATION_ERROR',
    );
    expect((await test.post(path, { action: 'complete_step', method: 'email' })).status).toBe(200);
    expectError(await test.post(path, { action: 'complete_step', method: 'email' }), 409, 'STEP_NOT_PENDING');
    expectError(await test.post('/v1/cases/not-a-uuid/simulate/', { action: 'expire' }), 404, 'NOT_FOUND');
    // Still open, one step verified: none of the refusals changed it.
    const now = await test.get<CaseWire>(`/v1/cases/${created.id}/`);
    expect(now.body.status).toBe('open');
    expect(now.body.verification_methods.sms?.verified).toBe(false);
  });
});

describe('the console', () => {
  it('switches between live and test data, and makes keys of either mode', async () => {
    const created = await createTeam(
      database.db,
      { name: 'Switch', adminEmail: 'owner@switch.test' },
      systemClock,
    );
    const liveApi = apiClient(app.baseUrl, created.key.token);
    const testApi = apiClient(app.baseUrl, created.testKey.token);
    const liveCase = await createCase(liveApi, 'switch-live@example.test');
    const testCase = await createCase(testApi, 'switch-test@example.test');
    const liveEndpoint = await createEndpoint(liveApi, '/switch-live');

    const owner = await signInReplacingPassword(
      consoleClient(app.baseUrl),
      'owner@switch.test',
      created.owner.oneTimePassword,
      'switch-owner-password-1',
    );
    const listed = async () =>
      (await owner.query<{ results: CaseWire[] }>('console.cases.list', {})).data?.results.map((c) => c.id);

    expect((await owner.query<{ mode: string }>('console.session.me')).data?.mode).toBe('live');
    expect(await listed()).toEqual([liveCase.id]);
    expect((await owner.query<Endpoint[]>('console.webhooks.list')).data?.map((e) => e.id)).toEqual([
      liveEndpoint.id,
    ]);

    expect((await owner.mutate('console.session.chooseMode', { mode: 'test' })).status).toBe(200);
    expect((await owner.query<{ mode: string }>('console.session.me')).data?.mode).toBe('test');
    expect(await listed()).toEqual([testCase.id]);
    expect((await owner.query<Endpoint[]>('console.webhooks.list')).data).toEqual([]);
    const liveCaseFromTest = await owner.query('console.cases.get', { id: liveCase.id });
    expect(liveCaseFromTest.error?.data?.appCode).toBe('NOT_FOUND');
    expect(liveCaseFromTest.error?.message).toMatch(
      /^No case with this id in test mode: it belongs to this team’s live mode\. .* turn off the console’s Test data switch\.$/,
    );
    const liveEndpointFromTest = await owner.query('console.webhooks.get', { id: liveEndpoint.id });
    expect(liveEndpointFromTest.error?.message).toMatch(/^No webhook endpoint with this id in test mode: /);
    // Endpoints made from the console in test mode are test endpoints: the live key cannot see them.
    const made = await owner.mutate<Endpoint>('console.webhooks.create', {
      url: receiver.url('/switch-test'),
      events: ['case.created'],
    });
    expect(made.status, JSON.stringify(made.error)).toBe(200);
    expect((await liveApi.get(`/v1/webhooks/endpoints/${made.data?.id}/`)).status).toBe(404);
    expect((await testApi.get(`/v1/webhooks/endpoints/${made.data?.id}/`)).status).toBe(200);

    const key = await owner.mutate<{ api_key: string; mode: string }>('console.keys.create', {
      name: 'CI',
      mode: 'test',
    });
    expect([key.data?.api_key.slice(0, 11), key.data?.mode]).toEqual(['vouch_test_', 'test']);
    const keys = (await owner.query<Array<{ name: string; mode: string }>>('console.keys.list')).data ?? [];
    expect(keys.map((k) => [k.name, k.mode]).sort()).toEqual([
      ['CI', 'test'],
      ['Default key', 'live'],
      ['Default test key', 'test'],
    ]);
  });
});

describe('the operator command line', () => {
  it('prints a test key beside the live key, and makes keys of either mode', async () => {
    const env = { DATABASE_URL: database.url, BASE_URL: app.baseUrl };
    const team = (await runCli(
      ['teams', 'create', '--name', 'Cli Modes', '--admin-email', 'cli@modes.test'],
      env,
    )) as {
      team_id: string;
      api_key: string;
      test_api_key: string;
    };
    expect(team.api_key).toMatch(/^vouch_live_/);
    expect(team.test_api_key).toMatch(/^vouch_test_/);
    const made = (await runCli(['keys', 'create', '--team', team.team_id, '--mode', 'test'], env)) as {
      api_key: string;
      mode: string;
    };
    expect([made.api_key.slice(0, 11), made.mode]).toEqual(['vouch_test_', 'test']);
    const created = await apiClient(app.baseUrl, made.api_key).post<CaseWire>('/v1/cases/', {
      subject_email: 'cli@example.test',
      verification_methods: { email: true },
    });
    expect(created.body.livemode).toBe(false);
    await expect(
      runCli(['keys', 'create', '--team', team.team_id, '--mode', 'sandbox'], env),
    ).rejects.toThrow(/--mode must be live or test/);
  });
});
