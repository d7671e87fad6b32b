/**
 * What a redaction must reach beyond the case's own rows (decisions: "Case lifecycle and data
 * protection"; issue 23, finding 5): what webhook receivers answered, the idempotency store, and
 * the copies the vendors keep (Stripe Identity's session, Twilio's message log), which are erased
 * through the vendors' own APIs, here against stand-ins that speak them.
 */
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCaseInput } from '@/server/application/cases/wire';
import { canonicalJson } from '@/server/idempotency/run-idempotent';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { type StripeStandIn, startStripeStandIn } from '@/test/support/stripe-stand-in';
import { openSubjectPage, postSubjectForm } from '@/test/support/subject-page';
import { startTwilioStandIn, type TwilioStandIn } from '@/test/support/twilio-stand-in';

type Api = ReturnType<typeof apiClient>;
type CaseWire = {
  id: string;
  public_id: string;
  subject_email: string;
  redacted_at: string | null;
  verification_url: string;
};

let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;
let receiver: Receiver;
let twilio: TwilioStandIn;
let stripe: StripeStandIn;
let api: Api;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  twilio = await startTwilioStandIn();
  stripe = await startStripeStandIn();
  app = await startApp({
    databaseUrl: database.url,
    env: {
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
      // A short lease, so that an attempt voided by a redaction is sent again soon.
      WEBHOOK_TIMEOUT_MS: '5000',
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
  const team = await createTeam(
    database.db,
    { name: 'Erasure Co', adminEmail: 'admin@erase.test' },
    systemClock,
  );
  teamId = team.team.id;
  api = apiClient(app.baseUrl, team.key.token);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await twilio?.close();
  await stripe?.close();
  await database?.close();
});

async function createCase(
  body: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<CaseWire> {
  const res = await api.post<CaseWire>('/v1/cases/', body, headers);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('webhook attempts', () => {
  it('keep nothing a receiver echoed or was quoted in an error once the case is redacted', async () => {
    const email = 'echoed.person@erase.test';
    // One receiver echoes what it got; another redirects to a URL that names the person.
    receiver.replies.set('/echo', (request) => ({ status: 200, body: request.body }));
    receiver.replies.set('/moved', () => ({
      status: 302,
      headers: { Location: `https://elsewhere.test/?who=${email}` },
    }));
    const endpoints: string[] = [];
    for (const path of ['/echo', '/moved']) {
      const res = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
        url: receiver.url(path),
        events: ['case.created'],
      });
      expect(res.status, res.text).toBe(201);
      endpoints.push(res.body.id);
    }
    const created = await createCase({ subject_email: email, verification_methods: { email: true } });
    const details = async () => {
      const found: string[] = [];
      for (const endpoint of endpoints) {
        const list = await api.get<{ results: Array<{ id: string }> }>(
          `/v1/webhooks/deliveries/?endpoint_id=${endpoint}`,
        );
        for (const { id } of list.body.results) {
          const detail = await api.get(`/v1/webhooks/deliveries/${id}/`);
          expect(detail.status, detail.text).toBe(200);
          found.push(detail.text);
        }
      }
      return found;
    };
    // Both attempted: the echo in a response body, the address in the redirect's error.
    const before = await eventually(async () => {
      const found = await details();
      return found.length === 2 && found.every((text) => text.includes('"attempt_number":1')) && found;
    });
    expect(before.filter((text) => text.includes(email))).toHaveLength(2);

    const redacted = await api.post<CaseWire>(`/v1/cases/${created.id}/redact/`);
    expect(redacted.status, redacted.text).toBe(200);
    const after = await details();
    expect(after).toHaveLength(2);
    for (const text of after) {
      expect(text).not.toContain(email);
      expect(text).not.toContain('echoed.person');
    }
    const [attempts] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
       where d.endpoint_id in ${database.sql(endpoints)}
         and (position(${email} in coalesce(a.response_body, '')) > 0 or position(${email} in coalesce(a.error, '')) > 0
              or position(${email} in coalesce(d.last_error, '')) > 0)`;
    expect(attempts?.n).toBe(0);
  });

  it('log nothing of an attempt in flight during the redaction, and send the redacted body again', async () => {
    const email = 'inflight.person@erase.test';
    receiver.replies.set('/slow-echo', (request) => ({ status: 200, body: request.body, delayMs: 3_000 }));
    const endpoint = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
      url: receiver.url('/slow-echo'),
      events: ['case.created'],
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const created = await createCase({ subject_email: email, verification_methods: { email: true } });
    const [first] = await receiver.waitFor('/slow-echo', 1);
    expect(first?.body).toContain(email);
    // The receiver holds that attempt (and its echo of the address) while the case is redacted.
    expect((await api.post(`/v1/cases/${created.id}/redact/`)).status).toBe(200);
    const list = await api.get<{ results: Array<{ id: string }> }>(
      `/v1/webhooks/deliveries/?endpoint_id=${endpoint.body.id}`,
    );
    const detail = await eventually(async () => {
      const res = await api.get<{ status: string }>(`/v1/webhooks/deliveries/${list.body.results[0]?.id}/`);
      return res.body.status === 'success' && res;
    }, 60_000);
    expect(detail.text).toContain('"attempt_number":1');
    expect(detail.text).not.toContain(email);
    // The attempt that was in flight went unlogged; the body went again, redacted.
    const [, again] = receiver.requestsTo('/slow-echo');
    expect(again?.body).toContain(`redacted+${created.public_id}@redacted.invalid`);
  }, 90_000);
});

describe('the idempotency store', () => {
  const answers = ['Red', 'Green', 'Blue', 'Mango', 'Apple', 'Zanzibar', 'Kiwi', 'Banana'];

  it('keeps a request only as an HMAC keyed per team, and drops it and the answer on redaction', async () => {
    const body = {
      subject_email: 'keyed.person@erase.test',
      verification_methods: { email: true, custom_question: true },
      custom_question_text: 'Your first pet?',
      custom_question_answer: 'Mango',
    };
    const created = await createCase(body, { 'Idempotency-Key': 'keyed-1' });
    const [row] = await database.sql<{ request_hash: string | null; response_body: unknown }[]>`
      select request_hash, response_body from idempotency_keys where team_id = ${teamId} and key = 'keyed-1'`;
    expect(row?.request_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.response_body).not.toBeNull();

    // The attack: hash candidate bodies until one matches. Against an unkeyed SHA-256 of the
    // request (as stored before) the answer falls out; against the keyed HMAC nothing does.
    const canonical = (answer: string) =>
      canonicalJson(createCaseInput.parse({ ...body, custom_question_answer: answer }));
    const guessed = answers.find(
      (answer) => createHash('sha256').update(canonical(answer)).digest('hex') === row?.request_hash,
    );
    expect(guessed).toBeUndefined();
    // It is the HMAC under the team's own key, and under no other team's.
    const [secret] = await database.sql<{ hmac_key: string }[]>`
      select hmac_key from team_secrets where team_id = ${teamId}`;
    const keyed = (key: string) =>
      createHmac('sha256', Buffer.from(key, 'base64url')).update(canonical('Mango')).digest('hex');
    expect(row?.request_hash).toBe(keyed(secret?.hmac_key ?? ''));
    const other = await createTeam(
      database.db,
      { name: 'Other keys', adminEmail: 'owner@otherkeys.test' },
      systemClock,
    );
    const [otherSecret] = await database.sql<{ hmac_key: string }[]>`
      select hmac_key from team_secrets where team_id = ${other.team.id}`;
    expect(otherSecret?.hmac_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(row?.request_hash).not.toBe(keyed(otherSecret?.hmac_key ?? ''));

    // The same key with another body is still refused before redaction.
    const reused = await api.post(
      '/v1/cases/',
      { ...body, custom_question_answer: 'Kiwi' },
      { 'Idempotency-Key': 'keyed-1' },
    );
    expect(reused.status, reused.text).toBe(422);

    expect((await api.post(`/v1/cases/${created.id}/redact/`)).status).toBe(200);
    const [erased] = await database.sql<
      { request_hash: string | null; response_body: unknown; case_id: string }[]
    >`
      select request_hash, response_body, case_id from idempotency_keys where team_id = ${teamId} and key = 'keyed-1'`;
    expect(erased).toEqual({ request_hash: null, response_body: null, case_id: created.id });

    // A repeat within the replay window answers the case as it now is, and creates nothing.
    const replay = await api.post<CaseWire>('/v1/cases/', body, { 'Idempotency-Key': 'keyed-1' });
    expect(replay.status, replay.text).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(created.id);
    expect(replay.body.subject_email).toBe(`redacted+${created.public_id}@redacted.invalid`);
    expect(replay.body.redacted_at).not.toBeNull();
    const [count] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from cases where team_id = ${teamId} and subject_email = ${body.subject_email}`;
    expect(count?.n).toBe(0);
  });
});

describe("the vendors' copies", () => {
  it('are erased through Stripe’s and Twilio’s APIs by a job that waits out their absence, audited per copy', async () => {
    const phone = '+447911123456';
    const created = await createCase({
      subject_email: 'vendor.person@erase.test',
      subject_name: 'Vera Vendorson',
      verification_methods: { email: true, sms: true, government_id: true },
    });
    // The subject receives a code by SMS (Twilio) and opens Stripe's identity check.
    const page = await openSubjectPage(created.verification_url);
    const sent = await postSubjectForm(`${created.verification_url}/sms`, page, { action: 'send', phone });
    expect(sent.headers.get('location')).toContain('n=sms-sent');
    const message = twilio.messages.find((m) => m.to === phone);
    expect(message).toBeDefined();
    const start = await fetch(`${created.verification_url}/identity/start`, { redirect: 'manual' });
    expect(start.status).toBe(303);
    const session = [...stripe.sessions.values()].find((s) => s.metadata.case_id === created.id);
    expect(session).toBeDefined();
    await stripe.complete(session?.id ?? '', 'verified', 'Vera Vendorson');
    const kept = await database.sql<{ kind: string; vendor_id: string }[]>`
      select kind, vendor_id from vendor_copies where case_id = ${created.id} order by kind`;
    expect(kept).toEqual([
      { kind: 'stripe.identity.verification_session', vendor_id: session?.id },
      { kind: 'twilio.message', vendor_id: message?.sid },
    ]);

    // Both vendors are unreachable: the redaction still answers at once.
    await stripe.down();
    await twilio.down();
    const startedAt = Date.now();
    const redacted = await api.post<CaseWire>(`/v1/cases/${created.id}/redact/`);
    expect(redacted.status, redacted.text).toBe(200);
    expect(Date.now() - startedAt).toBeLessThan(5_000);

    // Its job fails while they are away, saying why without naming the person.
    const failure = await eventually(async () => {
      const [job] = await database.sql<{ state: string; output: string | null }[]>`
        select state::text as state, output::text as output from pgboss.job
         where name = 'vendor-erasure' and data->>'caseId' = ${created.id}`;
      return job?.state === 'retry' && job.output ? job : undefined;
    });
    expect(failure.output).toContain('vendor copies not erased yet');
    for (const personal of [phone, '7911123456', 'vendor.person', 'Vera', 'Vendorson']) {
      expect(failure.output).not.toContain(personal);
    }
    expect(twilio.messages.find((m) => m.sid === message?.sid)?.deleted).toBe(false);

    // Back up: the retries erase both copies, and the vendors' ids go with them.
    await stripe.up();
    await twilio.up();
    await eventually(async () => {
      const [left] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from vendor_copies where case_id = ${created.id}`;
      return left?.n === 0;
    }, 90_000);
    expect(twilio.messages.find((m) => m.sid === message?.sid)?.deleted).toBe(true);
    expect(twilio.requests).toContainEqual({
      method: 'DELETE',
      path: `/2010-04-01/Accounts/${twilio.accountSid}/Messages/${message?.sid}.json`,
    });
    expect(stripe.requests).toContainEqual({
      method: 'POST',
      path: `/v1/identity/verification_sessions/${session?.id}/redact`,
    });
    expect(stripe.sessions.get(session?.id ?? '')).toMatchObject({
      redaction: { status: 'redacted' },
      metadata: {},
      verified_outputs: { first_name: '[redacted]', last_name: '[redacted]' },
    });
    // The job's last run commits its erasures before pg-boss marks it completed.
    await eventually(async () => {
      const [job] = await database.sql<{ state: string }[]>`
        select state::text as state from pgboss.job where name = 'vendor-erasure' and data->>'caseId' = ${created.id}`;
      return job?.state === 'completed' ? true : undefined;
    });

    // The audit log says when each copy was erased, by the service itself.
    const audited = await database.sql<
      { action: string; actor_email: string; details: Record<string, unknown> }[]
    >`
      select action, actor_email, details from audit_log
       where team_id = ${teamId} and target = ${created.id} and action = 'case.vendor_copy_erased'
       order by details->>'copy'`;
    expect(audited).toEqual([
      {
        action: 'case.vendor_copy_erased',
        actor_email: 'Vouch (system)',
        details: { livemode: true, copy: 'stripe.identity.verification_session', outcome: 'erased' },
      },
      {
        action: 'case.vendor_copy_erased',
        actor_email: 'Vouch (system)',
        details: { livemode: true, copy: 'twilio.message', outcome: 'erased' },
      },
    ]);
    // No vendor id of the case is left anywhere.
    for (const id of [session?.id ?? 'vs_', message?.sid ?? 'SM']) {
      const [found] = await database.sql<{ n: number }[]>`
        select (select count(*) from case_steps where settings::text like ${`%${id}%`})
             + (select count(*) from vendor_copies where vendor_id = ${id})
             + (select count(*) from audit_log where details::text like ${`%${id}%`}) as n`;
      expect(Number(found?.n)).toBe(0);
    }
    expect(app.logs()).not.toContain(phone);
  }, 150_000);
});
