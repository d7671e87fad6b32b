import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailOutbox, webhookDeliveries } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { QUEUES } from '@/server/platform/jobs/catalog';
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
import { jobsOf } from '@/test/support/jobs';
import { type SmtpSink, startSmtpSink } from '@/test/support/smtp-sink';

type Endpoint = {
  id: string;
  is_active: boolean;
  disabled_at: string | null;
  consecutive_failures: number;
};

let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;
let receiver: Receiver;
let smtp: SmtpSink;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  smtp = await startSmtpSink();
  app = await startApp({
    databaseUrl: database.url,
    env: {
      NODE_EXTRA_CA_CERTS: certificate.certPath,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0,0,0,0,0,0,0',
      SMTP_URL: smtp.url,
      MAIL_RETRY_DELAY_SECONDS: '0',
      RATE_LIMIT_READ_PER_MINUTE: '100000',
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
    },
  });
});

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await smtp?.close();
  await database?.close();
});

async function teamWithFailingEndpoint(adminEmail: string, pathname: string) {
  const { key } = await createTeam(database.db, { name: pathname, adminEmail }, systemClock);
  const api = apiClient(app.baseUrl, key.token);
  let healthy = false;
  receiver.replies.set(pathname, () => ({ status: healthy ? 200 : 500 }));
  const endpoint = await api.post<Endpoint>('/v1/webhooks/endpoints/', {
    url: receiver.url(pathname),
    events: ['case.created'],
  });
  expect(endpoint.status).toBe(201);
  const createCases = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const res = await api.post('/v1/cases/', {
        subject_email: `s${i}@example.test`,
        verification_methods: { sms: true },
      });
      expect(res.status).toBe(201);
    }
  };
  return { api, endpoint: endpoint.body, createCases, heal: () => (healthy = true) };
}

describe('endpoint states', () => {
  it('disables after 15 dead-lettered deliveries, mails the admin once, holds and resumes deliveries', async () => {
    const { api, endpoint, createCases, heal } = await teamWithFailingEndpoint('admin@state.test', '/down');
    const read = async () => (await api.get<Endpoint>(`/v1/webhooks/endpoints/${endpoint.id}/`)).body;

    await createCases(14);
    await receiver.waitFor('/down', 14 * 8, 60_000);
    const after14 = await eventually(async () => {
      const e = await read();
      return e.consecutive_failures === 14 ? e : undefined;
    });
    expect(after14).toMatchObject({ is_active: true, disabled_at: null });

    await createCases(1);
    const disabled = await eventually(async () => {
      const e = await read();
      return e.is_active === false ? e : undefined;
    });
    expect(disabled.consecutive_failures).toBe(15);
    expect(disabled.disabled_at).not.toBeNull();
    expect(receiver.requestsTo('/down')).toHaveLength(15 * 8);

    const mail = await eventually(async () => smtp.mails.find((m) => m.to.includes('admin@state.test')));
    expect(mail.raw).toContain('Subject: Vouch disabled a webhook endpoint');
    expect(mail.raw).toContain(endpoint.id);

    // While disabled, new deliveries are kept pending, with no job queued to attempt them (the
    // reactivation below queues their jobs): nothing can attempt them, however long one waits.
    await createCases(2);
    const held = await database.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.endpointId, endpoint.id), eq(webhookDeliveries.status, 'pending')));
    expect(held).toHaveLength(2);
    expect(held.every((d) => d.attemptCount === 0)).toBe(true);
    const heldIds = new Set(held.map((d) => d.id));
    const heldJobs = (await jobsOf(database, QUEUES.webhookDeliver)).filter((job) =>
      heldIds.has(String(job.data?.deliveryId)),
    );
    expect(heldJobs).toEqual([]);
    expect(receiver.requestsTo('/down')).toHaveLength(15 * 8);

    // A test ping is attempted even now, so the admin can check the fix first.
    heal();
    const ping = await api.post<{ id: string }>(`/v1/webhooks/endpoints/${endpoint.id}/test/`);
    expect(ping.status).toBe(202);
    await eventually(async () =>
      receiver.requestsTo('/down').find((r) => r.headers['x-service-delivery'] === ping.body.id),
    );
    expect(receiver.requestsTo('/down')).toHaveLength(15 * 8 + 1);
    expect((await read()).is_active).toBe(false);

    const reactivated = await api.patch<Endpoint>(`/v1/webhooks/endpoints/${endpoint.id}/`, {
      is_active: true,
    });
    expect(reactivated.status).toBe(200);
    expect(reactivated.body).toMatchObject({ is_active: true, disabled_at: null, consecutive_failures: 0 });
    await receiver.waitFor('/down', 15 * 8 + 3);
    await eventually(async () => {
      const rows = await database.db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.endpointId, endpoint.id));
      return rows.filter((d) => d.status === 'success').length === 3;
    });
    // Exactly one notice was sent.
    expect(smtp.mails.filter((m) => m.to.includes('admin@state.test'))).toHaveLength(1);
  }, 120_000);

  it('keeps a mail that cannot be delivered visible as failed with its error', async () => {
    const { createCases } = await teamWithFailingEndpoint('bounce@state.test', '/down-bounce');
    await createCases(15);
    const failed = await eventually(async () => {
      const [row] = await database.db.select().from(mailOutbox).where(eq(mailOutbox.to, 'bounce@state.test'));
      return row?.status === 'failed' ? row : undefined;
    }, 90_000);
    expect(failed.lastError).toContain('mailbox unavailable');
    expect(failed.attempts).toBe(6);
    expect(smtp.mails.filter((m) => m.to.includes('bounce@state.test'))).toHaveLength(0);
  }, 120_000);
});
