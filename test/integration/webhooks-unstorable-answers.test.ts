/**
 * A receiver's answer is outside text stored by the worker: one that PostgreSQL cannot store (NUL,
 * bytes that are not UTF-8) must not fail the statement recording a batch of successes, which
 * held other teams' deliveries too; they were all left claimed, re-sent by the recovery sweep, and
 * the failed statement's parameters (the receivers' bodies) were kept in pg-boss's job rows.
 */
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '@/db/client';
import { webhookDeliveries } from '@/db/schema';
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

type Api = ReturnType<typeof apiClient>;
type DeliveryDetail = {
  id: string;
  status: string;
  attempt_count: number;
  last_error: string | null;
  last_response_status: number | null;
  attempts: Array<{
    attempt_number: number;
    response_status: number | null;
    response_body: string | null;
    error: string | null;
  }>;
};

let inProcess: InProcess;
let database: TestDatabase;
let certificate: Certificate;
let receiver: Receiver;
let web: RunningApp;
let worker: RunningApp | undefined;
let testModeApi: Api;
let liveApi: Api;

/** Text the poisoned receiver sends, to be looked for where it must not be. */
const MARKER = 'receiver-answer-5f0c2e9a';
/** U+FFFD: what the stored body has where the receiver sent NUL or bytes that are not UTF-8. */
const R = '\uFFFD';
/** The stored body's prefix before the padding: "ok", NUL, the marker, two bytes that are not UTF-8. */
const STORED_PREFIX = `ok${R}${MARKER}${R}${R}`;
/** "a"s up to byte 2047 of the stored body, so the "€" (3 bytes) that follows straddles the 2 KB cap. */
const PADDING = 'a'.repeat(2047 - Buffer.byteLength(STORED_PREFIX));
const POISONED_ANSWER = Buffer.concat([
  Buffer.from(`ok\0${MARKER}`),
  Buffer.from([0xff, 0xfe]),
  Buffer.from(`${PADDING}€ and the rest of a long answer`),
]);
const EXPECTED_BODY = `${STORED_PREFIX}${PADDING}`;

const TIMEOUT_MS = 2000;

function env(runWorkers: boolean): Record<string, string> {
  return {
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    JOB_TICK_SECONDS: '1',
    RUN_WORKERS: String(runWorkers),
    LOG_LEVEL: 'info',
    RATE_LIMIT_READ_PER_MINUTE: '100000',
    RATE_LIMIT_WRITE_PER_MINUTE: '100000',
  };
}

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  receiver.replies.set('/poisoned', () => ({ status: 200, body: POISONED_ANSWER }));
  receiver.replies.set('/plain', () => ({ status: 200, body: 'ok' }));
  // A web-only node queues the deliveries; the worker starts once they all wait, so that its
  // batches hold both teams' deliveries.
  web = await startApp({ databaseUrl: database.url, env: env(false) });
  const free = await createTeam(database.db, { name: 'Free', adminEmail: 'a@free.test' }, systemClock);
  const paying = await createTeam(database.db, { name: 'Paying', adminEmail: 'a@paying.test' }, systemClock);
  testModeApi = apiClient(web.baseUrl, free.testKey.token);
  liveApi = apiClient(web.baseUrl, paying.key.token);
});

afterAll(async () => {
  await worker?.stop();
  await web?.stop();
  await receiver?.close();
  await inProcess?.close();
});

async function createEndpoint(api: Api, pathname: string): Promise<void> {
  const res = await api.post('/v1/webhooks/endpoints/', {
    url: receiver.url(pathname),
    events: ['case.created'],
  });
  expect(res.status, res.text).toBe(201);
}

async function createCase(api: Api, email: string): Promise<void> {
  const res = await api.post('/v1/cases/', { subject_email: email, verification_methods: { sms: true } });
  expect(res.status, res.text).toBe(201);
}

/** How many requests the receiver got for each delivery id sent to `pathname`. */
function requestsPerDelivery(pathname: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of receiver.requestsTo(pathname)) {
    const id = String(request.headers['x-service-delivery']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('a batch of webhook outcomes with an answer the database cannot store', () => {
  it('costs no other delivery anything: each is sent once, recorded once, its answer stored safely', async () => {
    await createEndpoint(testModeApi, '/poisoned');
    await createEndpoint(liveApi, '/plain');
    // Alternating, so that any batch of two or more consecutive jobs holds both teams' deliveries.
    for (let i = 0; i < 4; i++) {
      await createCase(testModeApi, `free${i}@example.test`);
      await createCase(liveApi, `paying${i}@example.test`);
    }
    const deliveries = await database.db.select().from(webhookDeliveries);
    expect(deliveries).toHaveLength(8);
    const ids = deliveries.map((d) => d.id);
    const poisonedIds = new Set(deliveries.filter((d) => !d.livemode).map((d) => d.id));
    expect(poisonedIds.size).toBe(4);

    worker = await startApp({ databaseUrl: database.url, env: env(true) });
    await receiver.waitFor('/poisoned', 4);
    await receiver.waitFor('/plain', 4);
    const done = await eventually(async () => {
      const rows = await database.db
        .select()
        .from(webhookDeliveries)
        .where(inArray(webhookDeliveries.id, ids));
      return rows.every((row) => row.status === 'success') ? rows : undefined;
    }, 30_000);
    expect(done.map((row) => row.attemptCount)).toEqual(Array(8).fill(1));
    expect(done.every((row) => row.claimToken === null)).toBe(true);

    // Every delivery's job completed (none failed, none left to run)...
    const jobs = await eventually(async () => {
      const mine = (await jobsOf(database, QUEUES.webhookDeliver)).filter((job) =>
        ids.includes(String(job.data?.deliveryId)),
      );
      return unfinished(mine).length === 0 ? mine : undefined;
    });
    expect(jobs.map((job) => job.state)).toEqual(Array(8).fill('completed'));
    // ...and at least one batch (the jobs one fetch took: the same started_on) held both teams'.
    const batches = await database.sql<Array<{ ids: string[] }>>`
      select to_json(array_agg(data->>'deliveryId')) as ids from pgboss.job
       where name = ${QUEUES.webhookDeliver} and data->>'deliveryId' = any(${`{${ids.join(',')}}`}::text[])
       group by started_on`;
    expect(
      batches.some(
        (batch) =>
          batch.ids.some((id) => poisonedIds.has(id)) && batch.ids.some((id) => !poisonedIds.has(id)),
      ),
      JSON.stringify(batches),
    ).toBe(true);

    // The recovery sweep runs twice more and finds nothing to send again: no claim was left behind.
    const sweeps = async () =>
      (await jobsOf(database, QUEUES.webhookRecover)).filter((job) => job.state === 'completed').length;
    const sweptBefore = await sweeps();
    await eventually(async () => (await sweeps()) >= sweptBefore + 2);
    expect([...requestsPerDelivery('/poisoned').values()]).toEqual([1, 1, 1, 1]);
    expect([...requestsPerDelivery('/plain').values()]).toEqual([1, 1, 1, 1]);
    expect(
      new Set([...requestsPerDelivery('/poisoned').keys(), ...requestsPerDelivery('/plain').keys()]),
    ).toEqual(new Set(ids));

    // Each team sees its own delivery as one successful attempt; the poisoned answer stored safely.
    for (const id of ids) {
      const api = poisonedIds.has(id) ? testModeApi : liveApi;
      const res = await api.get<DeliveryDetail>(`/v1/webhooks/deliveries/${id}/`);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        status: 'success',
        attempt_count: 1,
        last_error: null,
        last_response_status: 200,
      });
      expect(res.body.attempts).toHaveLength(1);
      const [attempt] = res.body.attempts;
      expect(attempt).toMatchObject({ attempt_number: 1, response_status: 200, error: null });
      if (!poisonedIds.has(id)) {
        expect(attempt?.response_body).toBe('ok');
        continue;
      }
      // NUL and the bytes that are not UTF-8 became U+FFFD; the 2 KB cap left the "€" it would
      // have cut out whole.
      expect(attempt?.response_body).toBe(EXPECTED_BODY);
      expect(Buffer.byteLength(attempt?.response_body ?? '')).toBe(2047);
    }

    // The receiver's answer is nowhere in pg-boss's rows nor in any process's log.
    const [kept] = await database.sql<Array<{ n: number }>>`
      select count(*)::int as n from pgboss.job where output::text like ${`%${MARKER}%`}`;
    expect(kept?.n).toBe(0);
    expect(web.logs()).not.toContain(MARKER);
    expect(worker.logs()).not.toContain(MARKER);
  }, 90_000);

  it('leaves only a row the database refuses unrecorded, never the rest of its batch', async () => {
    // Attempted in this process, all in one call (one batch), with no worker process running.
    await worker?.stop();
    worker = undefined;
    setDefaultCACertificates([...getCACertificates('default'), certificate.cert]);
    // A fault no sanitizing prevents: the database itself refuses one delivery's attempt row
    // (a trigger in this test's database stands for a deadlock, a constraint, a refused value).
    await database.sql.unsafe(`
      create function refuse_marked_attempt() returns trigger language plpgsql as $$
      begin
        if new.response_body = 'refuse this row' then raise exception 'refused by the test'; end if;
        return new;
      end $$;
      create trigger refuse_marked_attempt before insert on webhook_attempts
        for each row execute function refuse_marked_attempt();`);
    receiver.replies.set('/refused', () => ({ status: 200, body: 'refuse this row' }));
    // Two more teams: one, in test mode, whose endpoint's answers the database refuses; another,
    // live, whose deliveries share the batch.
    const refusing = await createTeam(
      database.db,
      { name: 'Refused', adminEmail: 'a@refused.test' },
      systemClock,
    );
    const neighbour = await createTeam(
      database.db,
      { name: 'Neighbour', adminEmail: 'a@neighbour.test' },
      systemClock,
    );
    const refusingApi = apiClient(web.baseUrl, refusing.testKey.token);
    const neighbourApi = apiClient(web.baseUrl, neighbour.key.token);
    await createEndpoint(refusingApi, '/refused');
    await createEndpoint(neighbourApi, '/neighbour');
    const before = new Set(
      (await database.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries)).map((d) => d.id),
    );
    for (let i = 0; i < 2; i++) {
      await createCase(refusingApi, `refused${i}@example.test`);
      await createCase(neighbourApi, `batched${i}@example.test`);
    }
    const fresh = (await database.db.select().from(webhookDeliveries)).filter((d) => !before.has(d.id));
    expect(fresh).toHaveLength(4);
    const refusedIds = fresh.filter((d) => !d.livemode).map((d) => d.id);

    const pool = connectDatabase(database.url, { max: 5 });
    let unwritten: Awaited<ReturnType<typeof attemptDeliveries>>;
    try {
      unwritten = await attemptDeliveries(
        {
          db: pool.db,
          clock: systemClock,
          jobs: inProcess.jobs,
          retrySchedule: [1],
          timeoutMs: TIMEOUT_MS,
          allowPrivateNetworks: true,
        },
        fresh.map((d) => d.id),
      );
    } finally {
      await pool.close();
    }
    expect([...unwritten.keys()].sort()).toEqual([...refusedIds].sort());
    expect(receiver.requestsTo('/refused')).toHaveLength(2);

    const rows = await database.db
      .select()
      .from(webhookDeliveries)
      .where(
        inArray(
          webhookDeliveries.id,
          fresh.map((d) => d.id),
        ),
      );
    for (const row of rows) {
      if (row.livemode) {
        // The other team's deliveries of the same batch: recorded, once.
        expect(row).toMatchObject({ status: 'success', attemptCount: 1, claimToken: null });
      } else {
        // Left claimed, for the recovery sweep to send again once the lease ends.
        expect(row).toMatchObject({ status: 'pending', attemptCount: 0 });
        expect(row.claimToken).not.toBeNull();
      }
    }
  });
});
