import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '@/db/client';
import { webhookAttempts, webhookDeliveries } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { createTeam } from '@/server/teams/manage-teams';
import { attemptDeliveries } from '@/server/webhooks/attempt-delivery';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import type { TestDatabase } from '@/test/support/database';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { type InProcess, startInProcess } from '@/test/support/in-process';
import { jobsOf, unfinished } from '@/test/support/jobs';

let inProcess: InProcess;
let database: TestDatabase;
let certificate: Certificate;
let receiver: Receiver;
let web: RunningApp;
const workers: RunningApp[] = [];
let api: ReturnType<typeof apiClient>;

const TIMEOUT_MS = 3000;

function workerEnv(runWorkers: boolean): Record<string, string> {
  return {
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1',
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    JOB_TICK_SECONDS: '1',
    RUN_WORKERS: String(runWorkers),
    RATE_LIMIT_READ_PER_MINUTE: '100000',
    RATE_LIMIT_WRITE_PER_MINUTE: '100000',
  };
}

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  // A web-only node: it queues deliveries but never attempts them.
  web = await startApp({ databaseUrl: database.url, env: workerEnv(false) });
  const { key } = await createTeam(
    database.db,
    { name: 'Workers', adminEmail: 'a@workers.test' },
    systemClock,
  );
  api = apiClient(web.baseUrl, key.token);
});

afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await web?.stop();
  await receiver?.close();
  await inProcess?.close();
});

/** Registers an endpoint for `case.created` and switches every other one off, so each test sees only its own. */
async function onlyEndpoint(pathname: string): Promise<string> {
  const res = await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
    url: receiver.url(pathname),
    events: ['case.created'],
  });
  expect(res.status).toBe(201);
  for (const other of (await api.get<{ results: Array<{ id: string }> }>('/v1/webhooks/endpoints/')).body
    .results) {
    if (other.id !== res.body.id)
      await api.patch(`/v1/webhooks/endpoints/${other.id}/`, { is_active: false });
  }
  return res.body.id;
}

async function createCases(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await api.post('/v1/cases/', {
      subject_email: `w${i}@example.test`,
      verification_methods: { sms: true },
    });
    expect(res.status).toBe(201);
  }
}

describe('workers', () => {
  it('web-only nodes queue deliveries without attempting them', async () => {
    const endpointId = await onlyEndpoint('/web-only');
    await createCases(3);
    const rows = await database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpointId));
    expect(rows.map((r) => r.status)).toEqual(['pending', 'pending', 'pending']);
    // Their jobs are queued, and stay untouched by the web-only node while they have been due for
    // three of a worker's one-second polls (absence can only be seen over time; the database's
    // clock says when that time has passed).
    const ids = new Set(rows.map((r) => r.id));
    const ours = async () =>
      (await jobsOf(database, QUEUES.webhookDeliver)).filter((job) => ids.has(String(job.data?.deliveryId)));
    const jobIds = (await ours()).map((job) => job.id);
    expect(jobIds).toHaveLength(3);
    await eventually(async () => {
      const [row] = await database.sql<Array<{ due: boolean }>>`
        select bool_and(now() - start_after > interval '3 seconds') as due
          from pgboss.job where id = any(${`{${jobIds.join(',')}}`}::uuid[])`;
      return row?.due === true;
    });
    expect((await ours()).map((job) => job.state)).toEqual(['created', 'created', 'created']);
    // The positive signal that a worker would have taken them by now: a worker node on the same
    // database takes a due job of its own within its one-second poll, while these stay created.
    const probe = await startApp({ databaseUrl: database.url, env: workerEnv(true) });
    try {
      await eventually(async () => receiver.requestsTo('/web-only').length === 3);
    } finally {
      await probe.stop();
    }
  });

  it('lets only one of two racing workers attempt a delivery', async () => {
    // The race is run in this process with two separate connection pools, like two nodes.
    setDefaultCACertificates([...getCACertificates('default'), certificate.cert]);
    // Fresh deliveries, queued by the web-only node and attempted by no one yet.
    const endpointId = await onlyEndpoint('/race');
    await createCases(3);
    const rows = await database.db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpointId));
    const ids = rows.map((r) => r.id);
    expect(ids).toHaveLength(3);
    const poolA = connectDatabase(database.url, { max: 5 });
    const poolB = connectDatabase(database.url, { max: 5 });
    const deps = (db: typeof poolA.db) => ({
      db,
      clock: systemClock,
      jobs: inProcess.jobs,
      retrySchedule: [1],
      timeoutMs: TIMEOUT_MS,
      allowPrivateNetworks: true,
    });
    try {
      await Promise.all([
        attemptDeliveries(deps(poolA.db), ids),
        attemptDeliveries(deps(poolB.db), ids),
        attemptDeliveries(deps(poolA.db), ids),
        attemptDeliveries(deps(poolB.db), ids),
      ]);
    } finally {
      await poolA.close();
      await poolB.close();
    }
    const seen = receiver.requestsTo('/race').map((r) => r.headers['x-service-delivery']);
    expect(seen.sort()).toEqual([...ids].sort());
    const attempts = await database.db
      .select()
      .from(webhookAttempts)
      .where(inArray(webhookAttempts.deliveryId, ids));
    expect(attempts).toHaveLength(3);
  });

  it('two worker processes attempt each delivery exactly once per attempt', async () => {
    workers.push(await startApp({ databaseUrl: database.url, env: workerEnv(true) }));
    workers.push(await startApp({ databaseUrl: database.url, env: workerEnv(true) }));
    receiver.replies.set('/both-ok', () => ({ status: 200, delayMs: 100 }));
    receiver.replies.set('/both-fail', () => ({ status: 500 }));
    const okId = await onlyEndpoint('/both-ok');
    const failId = (
      await api.post<{ id: string }>('/v1/webhooks/endpoints/', {
        url: receiver.url('/both-fail'),
        events: ['case.created'],
      })
    ).body.id;
    // 12 dead letters: under the 15 that would disable the endpoint and hold the rest.
    await createCases(12);
    await receiver.waitFor('/both-ok', 12);
    await receiver.waitFor('/both-fail', 12 * 8, 60_000);
    const failed = await eventually(async () => {
      const rows = await database.db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.endpointId, failId));
      return rows.length === 12 && rows.every((r) => r.status === 'dead_letter') ? rows : undefined;
    });
    // Every attempt's job has run and none is left, for either endpoint: no attempt can still come.
    const ok = await database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, okId));
    const deliveryIds = new Set([...failed, ...ok].map((r) => r.id));
    const jobs = await eventually(async () => {
      const mine = (await jobsOf(database, QUEUES.webhookDeliver)).filter((job) =>
        deliveryIds.has(String(job.data?.deliveryId)),
      );
      return unfinished(mine).length === 0 ? mine : undefined;
    });
    // One job per attempt: 12 first attempts that succeed, and 12 deliveries tried 8 times each.
    expect(jobs).toHaveLength(12 + 12 * 8);
    const perDelivery = (pathname: string) => {
      const counts = new Map<string, number>();
      for (const r of receiver.requestsTo(pathname)) {
        const id = String(r.headers['x-service-delivery']);
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return [...counts.values()];
    };
    expect(perDelivery('/both-ok')).toEqual(Array(12).fill(1));
    expect(perDelivery('/both-fail')).toEqual(Array(12).fill(8));
  }, 90_000);

  it('retries an attempt whose worker was killed mid-delivery', async () => {
    // One worker left, killed while the receiver is still holding the request.
    await workers.pop()?.stop();
    const worker = workers.pop();
    if (!worker) throw new Error('no worker');
    let calls = 0;
    receiver.replies.set('/stall', () => (++calls === 1 ? { delayMs: 60_000 } : { status: 200 }));
    await onlyEndpoint('/stall');
    await createCases(1);
    const [first] = await receiver.waitFor('/stall', 1);
    worker.process.kill('SIGKILL');
    await new Promise((resolve) => worker.process.once('exit', resolve));

    const restarted = await startApp({ databaseUrl: database.url, env: workerEnv(true) });
    workers.push(restarted);
    const requests = await receiver.waitFor('/stall', 2, 40_000);
    expect(requests[1]?.headers['x-service-delivery']).toBe(first?.headers['x-service-delivery']);
    expect(requests[1]?.body).toBe(first?.body);
    const id = String(first?.headers['x-service-delivery']);
    const row = await eventually(async () => {
      const [d] = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
      return d?.status === 'success' ? d : undefined;
    });
    expect(row.attemptCount).toBe(1);
    expect(row.claimToken).toBeNull();
  }, 90_000);

  it('a worker stopped with SIGTERM mid-attempt first ends the attempt and records it', async () => {
    // The only worker: the one stopped is the one attempting.
    for (const other of workers.splice(0)) await other.stop();
    const worker = await startApp({ databaseUrl: database.url, env: workerEnv(true) });
    receiver.replies.set('/drain', () => ({ status: 200, delayMs: 1500 }));
    await onlyEndpoint('/drain');
    await createCases(1);
    const [request] = await receiver.waitFor('/drain', 1);
    await worker.stop(); // SIGTERM, while the receiver still holds the request
    expect(worker.process.exitCode).toBe(0);
    const id = String(request?.headers['x-service-delivery']);
    const [row] = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
    // Written before the process closed its database: nothing left for the recovery sweep.
    expect(row).toMatchObject({ status: 'success', attemptCount: 1, claimToken: null });
    expect(receiver.requestsTo('/drain')).toHaveLength(1);
  });
});
