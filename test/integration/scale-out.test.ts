/**
 * Scale-out shown, not claimed (issue 27): three `npm run web` and three `npm run worker`
 * processes on one PostgreSQL. 10,000 webhook deliveries reach a local HTTPS receiver while one
 * worker is killed with SIGKILL: none is lost, and none is delivered twice under different
 * delivery ids (a retry of the same delivery keeps its id, as Standard Webhooks has receivers
 * deduplicate on it). Every periodic job, its period shortened, runs once per period across the
 * three workers, not once per worker.
 *
 * In the pooler stage (VOUCH_TEST_POOLER=transaction, scripts/test-all.sh) the six processes reach
 * the database through one PgBouncer in transaction pooling with 20 server connections, and
 * PostgreSQL is watched throughout: it never sees more than those 20 connections from the service.
 */
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { systemClock } from '@/server/platform/clock';
import { QUEUES, TICK_QUEUES } from '@/server/platform/jobs/catalog';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, type RunningWorker, startApp, startWorkerProcess } from '@/test/support/app';
import { createTestDatabase, TEST_CONNECTIONS, type TestDatabase } from '@/test/support/database';
import {
  type Certificate,
  eventually,
  makeCertificate,
  pidsOwningPorts,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';

const ENDPOINTS = 5;
const CASES = 2_000;
const BATCH = 100;
const TICK_SECONDS = 2;
const RETENTION_SECONDS = 3;
/** PgBouncer's server pool in the pooler stage (test/support/pgbouncer.ts's default). */
const POOLED = process.env.VOUCH_TEST_POOLER === 'transaction';
const SERVER_POOL = 20;

let database: TestDatabase;
/** The most connections PostgreSQL held from the service at once, sampled every 50 ms. */
let connectionWatch: { most: () => number; stop: () => Promise<void> } | undefined;
let certificate: Certificate;
let receiver: Receiver;
const webs: RunningApp[] = [];
const workers: RunningWorker[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  const env = {
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1',
    WEBHOOK_TIMEOUT_MS: '5000',
    JOB_TICK_SECONDS: String(TICK_SECONDS),
    RETENTION_INTERVAL_SECONDS: String(RETENTION_SECONDS),
    // Behind the pooler the schema is already there (the database is a copy of the migrated
    // template): no process opens the direct connection migrating would take.
    ...(POOLED ? { MIGRATE_ON_START: 'false' } : {}),
  };
  connectionWatch = watchConnections(database.name);
  // One after another: six processes booting at once on two cores only start slower.
  for (let n = 0; n < 3; n++) webs.push(await startApp({ databaseUrl: database.url, script: 'web', env }));
  for (let n = 0; n < 3; n++) workers.push(await startWorkerProcess({ databaseUrl: database.url, env }));
}, 180_000);

/**
 * Samples pg_stat_activity for the connections to `databaseName` that are not the tests' own: the
 * service's (through the pooler, the pooler's server connections).
 */
function watchConnections(databaseName: string) {
  const observer = postgres(inject('adminDatabaseUrl'), { max: 1, onnotice: () => {} });
  let most = 0;
  let running = true;
  const sampling = (async () => {
    while (running) {
      const [row] = await observer<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = ${databaseName} and backend_type = 'client backend'
           and application_name is distinct from ${TEST_CONNECTIONS}`;
      most = Math.max(most, row?.n ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    most: () => most,
    stop: async () => {
      running = false;
      await sampling;
      await observer.end();
    },
  };
}

afterAll(async () => {
  await connectionWatch?.stop();
  for (const worker of workers) await worker.stop();
  for (const web of webs) await web.stop();
  await receiver?.close();
  await database?.close();
});

describe('three web and three worker processes on one database', () => {
  it('deliver 10,000 webhooks through a killed worker: none lost, none under two delivery ids', async () => {
    // The receiver's certificate, for this process's own check of the receiver below.
    setDefaultCACertificates([...getCACertificates('default'), certificate.cert]);
    const { testKey } = await createTeam(
      database.db,
      { name: 'Scale', adminEmail: 'owner@scale.test' },
      systemClock,
    );
    const apis = webs.map((web) => apiClient(web.baseUrl, testKey.token));
    for (let n = 0; n < ENDPOINTS; n++) {
      const res = await apis[n % apis.length]?.post('/v1/webhooks/endpoints/', {
        url: receiver.url(`/scale-${n}`),
        events: ['case.created'],
      });
      expect(res?.status).toBe(201);
    }

    // 20 batches of 100 cases, three at a time, each to the next web process.
    const batches = Array.from({ length: CASES / BATCH }, (_, b) =>
      Array.from({ length: BATCH }, (_, n) => ({
        subject_email: `hire-${b}-${n}@scale.test`,
        verification_methods: { email: true },
      })),
    );
    let next = 0;
    await Promise.all(
      apis.map(async () => {
        for (let b = next++; b < batches.length; b = next++) {
          const res = await apis[b % apis.length]?.post<{ results: unknown[] }>('/v1/cases/batch/', {
            cases: batches[b],
          });
          expect(res?.status).toBe(200);
          expect(res?.body.results.every((item) => typeof item === 'object' && item && 'case' in item)).toBe(
            true,
          );
        }
      }),
    );

    // A worker dies mid-stream, with attempts in its hands: the receiver holds its answers for a
    // moment, so every worker's attempts are in flight (sent, not yet answered) when it is killed.
    await eventually(async () => (receiver.received.length >= 1_500 ? true : undefined), 60_000);
    const heldFrom = Date.now();
    for (let n = 0; n < ENDPOINTS; n++) receiver.replies.set(`/scale-${n}`, () => ({ delayMs: 2_000 }));
    // The worker killed is one the receiver shows holding a sent attempt (on a busy machine a given
    // worker may have sent nothing yet), so the kill always interrupts an attempt already sent.
    const killed = await eventually(async () => {
      const held = receiver.received.filter((request) => request.receivedAt >= heldFrom + 100);
      const senders = await pidsOwningPorts(new Set(held.map((request) => request.clientPort)));
      return workers.find((worker) => senders.has(worker.process.pid ?? -1));
    }, 30_000);
    const claimed = await database.sql<{ id: string; claim_token: string }[]>`
      select id, claim_token from webhook_deliveries where claimed_until > now()`;
    killed.process.kill('SIGKILL');
    await new Promise((resolve) => killed.process.once('exit', resolve));
    for (let n = 0; n < ENDPOINTS; n++) receiver.replies.delete(`/scale-${n}`);
    // The survivors' attempts are answered within their 2 s and recorded; the dead worker's claims
    // stay as they were until their lease ends. Those are what the kill interrupted.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const stranded = await database.sql<{ id: string }[]>`
      select d.id from webhook_deliveries d
        join jsonb_to_recordset(${JSON.stringify(claimed)}::jsonb) as c(id uuid, claim_token uuid)
          on c.id = d.id and c.claim_token = d.claim_token
       where d.status <> 'success'`;
    expect(stranded.length, 'the killed worker held no attempt: the kill proves nothing').toBeGreaterThan(0);

    const total = CASES * ENDPOINTS;
    // Each message (an event at an endpoint) with the delivery ids it arrived under.
    const deliveryIdsByMessage = new Map<string, Set<string>>();
    let read = 0;
    await eventually(async () => {
      for (; read < receiver.received.length; read++) {
        const request = receiver.received[read];
        if (!request) break;
        const key = `${request.path} ${(JSON.parse(request.body) as { id: string }).id}`;
        const ids = deliveryIdsByMessage.get(key) ?? new Set<string>();
        ids.add(String(request.headers['webhook-id']));
        deliveryIdsByMessage.set(key, ids);
      }
      return deliveryIdsByMessage.size >= total ? true : undefined;
    }, 120_000);
    expect(deliveryIdsByMessage.size).toBe(total);
    const underSeveralIds = [...deliveryIdsByMessage.entries()].filter(([, ids]) => ids.size > 1);
    expect(underSeveralIds).toEqual([]);

    // Every delivery recorded as delivered, the killed worker's too (recovered once its lease ended).
    const settled = await eventually(async () => {
      const [row] = await database.sql<{ success: number; all: number }[]>`
        select count(*) filter (where status = 'success')::int as success, count(*)::int as all
          from webhook_deliveries`;
      return row && row.success === total ? row : undefined;
    }, 90_000);
    expect(settled.all).toBe(total);
    // Each delivery the killed worker held reached the receiver after the kill under its own id;
    // those whose attempt it had already sent were sent again under the same id (the receiver saw
    // them twice under one webhook-id), never as a new delivery. (It may also have claimed some it
    // had not sent yet: those arrive once.)
    const strandedIds = new Set(stranded.map((row) => row.id));
    const timesSeen = new Map<string, number>();
    for (const request of receiver.received) {
      const id = String(request.headers['webhook-id']);
      if (strandedIds.has(id)) timesSeen.set(id, (timesSeen.get(id) ?? 0) + 1);
    }
    expect(timesSeen.size).toBe(strandedIds.size);
    expect([...timesSeen.values()].some((times) => times >= 2)).toBe(true);
    expect(receiver.received.every((request) => request.problems.length === 0)).toBe(true);

    // The watch saw the service at work (its connections), and behind the pooler never more than
    // the pooler's server pool, whatever the six processes' own pools ask for.
    expect(connectionWatch?.most()).toBeGreaterThan(0);
    if (POOLED) expect(connectionWatch?.most()).toBeLessThanOrEqual(SERVER_POOL);
  }, 300_000);

  it('runs each periodic job once per period across all three workers', async () => {
    const periodOf = (queue: string) =>
      queue === QUEUES.mailSend
        ? 1
        : queue === QUEUES.dataRetention || queue === QUEUES.idempotencyPurge
          ? RETENTION_SECONDS
          : TICK_SECONDS;
    // Long enough for several periods of each, with two workers still alive.
    const observed = 12_000;
    await new Promise((resolve) => setTimeout(resolve, observed));
    for (const queue of TICK_QUEUES) {
      const slots = await database.sql<{ slot: number | null; runs: number; completed: number }[]>`
        select extract(epoch from singleton_on)::float8 as slot, count(*)::int as runs,
               count(*) filter (where state = 'completed')::int as completed
          from pgboss.job where name = ${queue} group by singleton_on order by singleton_on`;
      // Each job belongs to a slot of the period, and no slot has two.
      expect(
        slots.every((slot) => slot.slot !== null),
        queue,
      ).toBe(true);
      expect(
        slots.filter((slot) => slot.runs > 1),
        queue,
      ).toEqual([]);
      // And the job ran in (nearly) every slot since the workers started.
      const first = slots[0]?.slot ?? 0;
      const last = slots.at(-1)?.slot ?? 0;
      const elapsedSlots = Math.round((last - first) / periodOf(queue)) + 1;
      expect(slots.length, queue).toBeGreaterThanOrEqual(Math.max(3, Math.floor(elapsedSlots * 0.6)));
      expect(slots.filter((slot) => slot.completed === 1).length, queue).toBeGreaterThanOrEqual(
        slots.length - 2,
      );
    }
  }, 60_000);
});
