/**
 * The service behind PgBouncer in transaction pooling (DATABASE_POOL_MODE=transaction, migrations
 * over DIRECT_DATABASE_URL), on a server pool smaller than what the processes ask for: concurrent
 * creations, reads, a batch, a webhook retried then delivered, mail over SMTP, all through the
 * pooler; then every server connection the pooler holds is visited, and none keeps what only a
 * session may have: a statement prepared by name, an advisory lock, a LISTEN.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, type RunningWorker, startApp, startWorkerProcess } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { type RunningPgBouncer, startPgBouncer } from '@/test/support/pgbouncer';
import { type SmtpSink, startSmtpSink } from '@/test/support/smtp-sink';

/** The pooler's server connections: fewer than the web process's pool alone would open. */
const SERVER_POOL = 4;

let database: TestDatabase;
let bouncer: RunningPgBouncer;
let certificate: Certificate;
let webhooks: Receiver;
let smtp: SmtpSink;
let app: RunningApp;
let worker: RunningWorker;
let apiKey: string;

beforeAll(async () => {
  database = await createTestDatabase();
  bouncer = await startPgBouncer(database.url, { poolSize: SERVER_POOL });
  certificate = makeCertificate();
  webhooks = await startReceiver(certificate);
  smtp = await startSmtpSink();
  const env = {
    DATABASE_URL: bouncer.urlFor(database.url),
    DIRECT_DATABASE_URL: database.url,
    DATABASE_POOL_MODE: 'transaction',
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1',
    MAIL_RETRY_DELAY_SECONDS: '0',
    SMTP_URL: smtp.url,
    RATE_LIMIT_WRITE_PER_MINUTE: '100000',
    RATE_LIMIT_READ_PER_MINUTE: '100000',
  };
  app = await startApp({ databaseUrl: database.url, env: { ...env, RUN_WORKERS: 'false' } });
  worker = await startWorkerProcess({ databaseUrl: database.url, env });
  apiKey = (await createTeam(database.db, { name: 'Pooled', adminEmail: 'a@pooled.test' }, systemClock)).key
    .token;
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await app?.stop();
  await bouncer?.stop();
  await webhooks?.close();
  await smtp?.close();
  await database?.close();
});

describe('behind PgBouncer in transaction pooling', () => {
  it('serves the core flows, and leaves no session state on any server connection', async () => {
    const api = apiClient(app.baseUrl, apiKey);
    // A webhook endpoint that fails each delivery's first attempt: the retry goes through too.
    const seen = new Set<string>();
    webhooks.replies.set('/pooled', (request) => {
      const id = String(request.headers['webhook-id']);
      if (seen.has(id)) return { status: 200 };
      seen.add(id);
      return { status: 503 };
    });
    expect(
      (await api.post('/v1/webhooks/endpoints/', { url: webhooks.url('/pooled'), events: ['case.created'] }))
        .status,
    ).toBe(201);

    // Twenty creations at once, on four server connections.
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post<{ id: string }>('/v1/cases/', {
          subject_email: `person.${i}@pooled.test`,
          verification_methods: { email: true },
        }),
      ),
    );
    for (const res of created) expect(res.status, res.text).toBe(201);
    const first = created[0]?.body.id ?? '';
    expect((await api.get(`/v1/cases/${first}/`)).status).toBe(200);
    const list = await api.get<{ results: unknown[] }>('/v1/cases/');
    expect(list.status).toBe(200);
    expect(list.body.results).toHaveLength(20);
    const batch = await api.post<{ results: Array<{ status: number }> }>('/v1/cases/batch/', {
      cases: Array.from({ length: 5 }, (_, i) => ({
        subject_email: `batched.${i}@pooled.test`,
        verification_methods: { email: true },
      })),
    });
    expect(batch.status, batch.text).toBe(200);

    // Every delivery retried once and then delivered; every subject's mail sent over SMTP.
    await eventually(async () => webhooks.requestsTo('/pooled').length >= 50, 60_000);
    expect(seen.size).toBe(25);
    await eventually(async () => smtp.mails.length >= 25, 30_000);

    // No process logged a statement the pooler could not run.
    for (const logs of [app.logs(), worker.logs()]) {
      expect(logs).not.toMatch(/26000|prepared statement .* does not exist|"level":"error"/);
    }
    expect(bouncer.log()).not.toMatch(/ERROR|unsupported startup parameter/);

    // Each server connection the pooler holds, visited at once (one transaction on each):
    // nothing prepared by name, no advisory lock held, no channel listened to.
    await worker.stop();
    await app.stop();
    const visitor = postgres(bouncer.urlFor(database.url), {
      max: SERVER_POOL,
      prepare: false,
      onnotice: () => {},
    });
    try {
      let arrived = 0;
      let release = () => {};
      const everyone = new Promise<void>((resolve) => {
        release = resolve;
      });
      const sessions = await Promise.all(
        Array.from({ length: SERVER_POOL }, () =>
          visitor.begin(async (tx) => {
            const [state] = await tx<
              Array<{ pid: number; prepared: string[]; advisory: number; listening: number }>
            >`select pg_backend_pid() as pid,
                     coalesce((select json_agg(name) from pg_prepared_statements), '[]'::json) as prepared,
                     (select count(*)::int from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()) as advisory,
                     (select count(*)::int from pg_listening_channels()) as listening`;
            arrived += 1;
            if (arrived === SERVER_POOL) release();
            await everyone;
            return state;
          }),
        ),
      );
      expect(new Set(sessions.map((session) => session?.pid)).size).toBe(SERVER_POOL);
      for (const session of sessions) {
        expect(session).toMatchObject({ prepared: [], advisory: 0, listening: 0 });
      }
    } finally {
      await visitor.end();
    }
  }, 120_000);
});
