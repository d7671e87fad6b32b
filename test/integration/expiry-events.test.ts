import { eq, inArray, sql } from 'drizzle-orm';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cases, events } from '@/db/schema';
import { expireDueCases } from '@/server/cases/expire-cases';
import { type Clock, systemClock } from '@/server/platform/clock';
import { newPublicId } from '@/server/platform/ids';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { createTeam } from '@/server/teams/manage-teams';
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
import { jobsOf } from '@/test/support/jobs';

let inProcess: InProcess;
let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;
let receiver: Receiver;

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
      CASE_TTL_SECONDS: '2',
      JOB_TICK_SECONDS: '1',
    },
  });
});

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
  await inProcess?.close();
});

describe('case expiry', () => {
  it('marks open cases past expires_at as expired and emits case.expired once each', async () => {
    const { key } = await createTeam(
      database.db,
      { name: 'Expiry', adminEmail: 'a@expiry.test' },
      systemClock,
    );
    const api = apiClient(app.baseUrl, key.token);
    const endpoint = await api.post('/v1/webhooks/endpoints/', {
      url: receiver.url('/expired'),
      events: ['case.expired'],
    });
    expect(endpoint.status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await api.post<{ id: string }>('/v1/cases/', {
        subject_email: `e${i}@example.test`,
        verification_methods: { sms: true },
      });
      ids.push(res.body.id);
    }
    // A case that closed before its deadline never expires.
    const closedId = ids.pop() ?? '';
    await database.db.update(cases).set({ status: 'closed' }).where(eq(cases.id, closedId));

    const requests = await receiver.waitFor('/expired', 3, 20_000);
    const bodies = requests.map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.data.case_id).sort()).toEqual([...ids].sort());
    for (const body of bodies) {
      expect(body.type).toBe('case.expired');
      expect(body.data.status).toBe('expired');
      expect(Object.keys(body.data).sort()).toEqual([
        'case_id',
        'created_at',
        'public_id',
        'reason',
        'status',
        'subject_email',
      ]);
      // Its time ran out: the team did not cancel it.
      expect(body.data.reason).toBe('timeout');
    }
    const rows = await database.db
      .select()
      .from(cases)
      .where(inArray(cases.id, [...ids, closedId]));
    expect(
      rows
        .filter((r) => r.status === 'expired')
        .map((r) => r.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(rows.find((r) => r.id === closedId)?.status).toBe('closed');
    const read = await api.get<{ status: string; is_expired: boolean }>(`/v1/cases/${ids[0]}/`);
    expect(read.body).toMatchObject({ status: 'expired', is_expired: true });

    // Later sweeps find nothing more to do: two more ticks run to completion, then nothing new.
    const sweptBefore = new Date();
    await eventually(async () => {
      const ticks = (await jobsOf(database, QUEUES.casesExpire)).filter(
        (job) => job.state === 'completed' && job.completedOn && job.completedOn > sweptBefore,
      );
      return ticks.length >= 2;
    }, 15_000);
    expect(receiver.requestsTo('/expired')).toHaveLength(3);
    const expiredEvents = await database.db.select().from(events).where(eq(events.type, 'case.expired'));
    expect(expiredEvents).toHaveLength(3);
  });

  it('expires in batches, each case once, with two sweepers at the same time', async () => {
    const { team } = await createTeam(
      database.db,
      { name: 'Batches', adminEmail: 'a@batches.test' },
      systemClock,
    );
    // Due an hour from now: the app's own sweep (on the real clock) leaves them alone, and the two
    // sweepers below, whose clock is two hours ahead, share all of them.
    const dueAt = new Date(Date.now() + 3_600_000);
    const later: Clock = () => new Date(Date.now() + 7_200_000);
    const inserted = await database.db
      .insert(cases)
      .values(
        Array.from({ length: 45 }, (_, i) => ({
          teamId: team.id,
          publicId: newPublicId(),
          subjectEmail: `b${i}@example.test`,
          expiresAt: dueAt,
        })),
      )
      .returning({ id: cases.id });
    const counts = await Promise.all([
      expireDueCases({ db: database.db, clock: later, jobs: inProcess.jobs }, 2),
      expireDueCases({ db: database.db, clock: later, jobs: inProcess.jobs }, 2),
    ]);
    expect(counts[0] + counts[1]).toBe(45);
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBeGreaterThan(0);

    const ids = inserted.map((c) => c.id);
    const [open] = await database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(cases)
      .where(sql`${cases.status} = 'open' and ${inArray(cases.id, ids)}`);
    expect(open?.n).toBe(0);
    const emitted = await database.db
      .select({ caseId: events.caseId, type: events.type })
      .from(events)
      .where(inArray(events.caseId, ids));
    expect(emitted).toHaveLength(45);
    expect(new Set(emitted.map((e) => e.caseId)).size).toBe(45);
    expect(new Set(emitted.map((e) => e.type))).toEqual(new Set(['case.expired']));
  });

  it('goes on while a sweep is left running by a worker that died mid-run', async () => {
    // A worker killed mid-sweep leaves its tick job `active` until pg-boss expires it (minutes).
    // Take a tick here and never finish it, as that worker would.
    const deadWorker = new PgBoss({ connectionString: database.url, schema: 'pgboss', supervise: false });
    await deadWorker.start();
    try {
      // The app's own worker competes for each tick (woken by NOTIFY as it is queued): ask without
      // pause, so that on a busy machine this one still takes one of the ticks queued every second.
      const deadline = Date.now() + 30_000;
      while ((await deadWorker.fetch(QUEUES.casesExpire)).length === 0) {
        if (Date.now() > deadline) throw new Error('never took a cases-expire tick in 30 s');
      }

      const { team } = await createTeam(
        database.db,
        { name: 'After a crash', adminEmail: 'a@crash.test' },
        systemClock,
      );
      const past = new Date(Date.now() - 60_000);
      const [due] = await database.db
        .insert(cases)
        .values({ teamId: team.id, publicId: newPublicId(), subjectEmail: 'c@example.test', expiresAt: past })
        .returning({ id: cases.id });
      await eventually(async () => {
        const [row] = await database.db
          .select({ status: cases.status })
          .from(cases)
          .where(eq(cases.id, due?.id ?? ''));
        return row?.status === 'expired';
      }, 15_000);
    } finally {
      await deadWorker.stop({ graceful: false, close: true });
    }
  });
});
