/**
 * The API's single creation in one statement (createCaseAtOnce): the statement takes the team's
 * lock, charges the case from the plan's allowance, and refuses itself (writing nothing) when what
 * it was planned on no longer holds once the lock is had; the case is then created the long way.
 * Each race is played for real: the test holds the team's lock in a transaction of its own, lets
 * the creation's statement queue behind it (seen waiting in pg_stat_activity), changes what the
 * statement relies on, and commits.
 */
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  cases,
  mailOutbox,
  plans,
  teams,
  usageCounters,
  webhookDeliveries,
  webhookEndpoints,
} from '@/db/schema';
import {
  createCaseAtOnce,
  createCasesAtOnce,
  prepareCase,
  teamCaseSources,
} from '@/server/application/cases/create-case';
import { createCaseInput } from '@/server/application/cases/wire';
import { billingPeriodAt } from '@/server/billing/billing-period';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { createTeam } from '@/server/teams/manage-teams';
import { hashingAnswers } from '@/server/verification/methods/custom-question/answer';
import { attemptDeliveries } from '@/server/webhooks/attempt-delivery';
import { createEndpoint } from '@/server/webhooks/manage-endpoints';
import type { TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';
import { type InProcess, startInProcess } from '@/test/support/in-process';
import { jobsOf } from '@/test/support/jobs';

let inProcess: InProcess;
let database: TestDatabase;
const now = new Date('2026-11-20T10:00:00Z');
const clock: Clock = () => new Date(now);
/** Two units of each method a period: the edge is two creations away. */
const ALLOWANCE = 2;
const EMAIL_PRICE_CENTS = 10;

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  await database.db.insert(plans).values({ code: 'two-units', name: 'Two units', includedUnits: ALLOWANCE });
});

afterAll(async () => {
  await inProcess?.close();
});

let live: DataScope;
beforeEach(async () => {
  const { team } = await createTeam(
    database.db,
    { name: 'At Once Co', adminEmail: `owner-${crypto.randomUUID()}@once.test`, planCode: 'two-units' },
    clock,
  );
  live = { teamId: team.id, livemode: true };
});

const deps = () => ({
  clock,
  jobs: inProcess.jobs,
  caseTtlSeconds: 3600,
  pageBase: 'https://vouch.test',
  defaultLocale: 'en' as const,
});

function prepared(scope: DataScope, subjectEmail: string) {
  return prepareCase(
    createCaseInput.parse({ subject_email: subjectEmail, verification_methods: { email: true } }),
    teamCaseSources(database.db, scope),
    hashingAnswers((task) => task()),
  );
}

async function create(scope: DataScope, subjectEmail: string) {
  return createCaseAtOnce(database.db, scope, await prepared(scope, subjectEmail), deps());
}

async function emailUsage(teamId: string) {
  return database.db
    .select({
      periodStart: usageCounters.periodStart,
      included: usageCounters.includedUsed,
      topup: usageCounters.topupUsed,
    })
    .from(usageCounters)
    .where(and(eq(usageCounters.teamId, teamId), eq(usageCounters.method, 'email')));
}

async function balanceOf(teamId: string) {
  const [team] = await database.db.select().from(teams).where(eq(teams.id, teamId));
  return team?.topupBalanceCents;
}

async function casesOf(subjectEmail: string) {
  return database.db.select({ id: cases.id }).from(cases).where(eq(cases.subjectEmail, subjectEmail));
}

type LockTx = Parameters<Parameters<typeof database.db.transaction>[0]>[0];

/**
 * Runs `creation` while the test holds `lock` in a transaction of its own: once the creation's
 * statement waits for it (the statement that writes the case, not the long way's lock of the
 * team), `meanwhile` changes what it relies on, and the lock's transaction commits.
 */
async function whileBlocked<T>(
  lock: ReturnType<typeof sql>,
  creation: () => Promise<T>,
  meanwhile: (tx: LockTx) => Promise<void>,
): Promise<T> {
  let started: Promise<T> | undefined;
  await database.db.transaction(async (tx) => {
    await tx.execute(lock);
    started = creation();
    started.catch(() => {});
    const waiting = await eventually(async () => {
      const rows = await database.db.execute<{ query: string }>(
        sql`select query from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
      );
      return rows[0];
    }, 10_000);
    expect(waiting.query).toMatch(/^\s*with team as \(/);
    await meanwhile(tx);
  });
  return started as Promise<T>;
}

/** The team's row as every charge locks it: the creation's statement waits for it after its snapshot. */
const teamLock = (teamId: string) =>
  sql`select 1 from ${teams} where ${teams.id} = ${teamId} for no key update`;

describe('a single creation in one statement', () => {
  it("charges the allowance in its own statement, waiting for the team's lock like any charge", async () => {
    const { record, chargedInStatement } = await whileBlocked(
      teamLock(live.teamId),
      () => create(live, 'first@once.test'),
      async () => {},
    );
    expect(record.status).toBe('open');
    expect(chargedInStatement).toBe(true);
    expect(await emailUsage(live.teamId)).toEqual([
      { periodStart: billingPeriodAt(now, now).start, included: 1, topup: 0 },
    ]);
    expect(await casesOf('first@once.test')).toHaveLength(1);
  });

  it('refuses its charge when the last unit was spent while it waited: the case is paid from the balance, once', async () => {
    await database.db.update(teams).set({ topupBalanceCents: 25 }).where(eq(teams.id, live.teamId));
    await create(live, 'one@once.test');
    const { record, chargedInStatement } = await whileBlocked(
      teamLock(live.teamId),
      () => create(live, 'late@once.test'),
      async (tx) => {
        // Another charge took the last unit meanwhile.
        await tx
          .update(usageCounters)
          .set({ includedUsed: ALLOWANCE })
          .where(and(eq(usageCounters.teamId, live.teamId), eq(usageCounters.method, 'email')));
      },
    );
    expect(record.status).toBe('open');
    expect(chargedInStatement).toBe(false);
    expect(await emailUsage(live.teamId)).toEqual([
      { periodStart: billingPeriodAt(now, now).start, included: ALLOWANCE, topup: 1 },
    ]);
    expect(await balanceOf(live.teamId)).toBe(25 - EMAIL_PRICE_CENTS);
    // The refused statement wrote nothing: one case, not two.
    expect(await casesOf('late@once.test')).toHaveLength(1);
  });

  it('takes the long way when the allowance is seen used up: INSUFFICIENT_ALLOWANCE with a short balance, nothing written', async () => {
    expect((await create(live, 'a@once.test')).chargedInStatement).toBe(true);
    expect((await create(live, 'b@once.test')).chargedInStatement).toBe(true);
    await expect(create(live, 'c@once.test')).rejects.toMatchObject({ appCode: 'INSUFFICIENT_ALLOWANCE' });
    expect(await casesOf('c@once.test')).toEqual([]);
    expect((await emailUsage(live.teamId))[0]?.included).toBe(ALLOWANCE);
  });

  it('refuses it when the subscription ended while it waited: TRIAL_EXPIRED, nothing written', async () => {
    const creation = whileBlocked(
      teamLock(live.teamId),
      () => create(live, 'ended@once.test'),
      async (tx) => {
        await tx.update(teams).set({ subscriptionStatus: 'canceled' }).where(eq(teams.id, live.teamId));
      },
    );
    await expect(creation).rejects.toMatchObject({ appCode: 'TRIAL_EXPIRED' });
    expect(await casesOf('ended@once.test')).toEqual([]);
    expect(await emailUsage(live.teamId)).toEqual([]);
  });

  it("refuses it when the team's billing periods moved while it waited: the unit counts in the new period", async () => {
    const movedAnchor = new Date('2026-11-15T00:00:00Z');
    const { chargedInStatement } = await whileBlocked(
      teamLock(live.teamId),
      () => create(live, 'moved@once.test'),
      async (tx) => {
        await tx.update(teams).set({ billingAnchor: movedAnchor }).where(eq(teams.id, live.teamId));
      },
    );
    expect(await emailUsage(live.teamId)).toEqual([
      { periodStart: billingPeriodAt(movedAnchor, now).start, included: 1, topup: 0 },
    ]);
    expect(billingPeriodAt(movedAnchor, now).start).not.toEqual(billingPeriodAt(now, now).start);
    expect(chargedInStatement).toBe(false);
  });

  it("with an active endpoint, the delivery's job commits with the case", async () => {
    const endpoint = await createEndpoint(
      database.db,
      live,
      { url: 'https://receiver.example.com/once', events: ['case.created'] },
      { clock, allowPrivateNetworks: false },
    );
    const { record, chargedInStatement } = await create(live, 'delivered@once.test');
    expect(chargedInStatement).toBe(true);
    const [delivery] = await database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpoint.id));
    expect(delivery?.body).toContain(record.publicId);
    const queued = await jobsOf(database, QUEUES.webhookDeliver);
    expect(queued.map((job) => job.data?.deliveryId)).toContain(delivery?.id);
  });

  it('refuses to run alone when an endpoint was switched on after the team was read: the job still commits with the case', async () => {
    const endpoint = await createEndpoint(
      database.db,
      live,
      { url: 'https://receiver.example.com/late', events: ['case.created'] },
      { clock, allowPrivateNetworks: false },
    );
    // Off when the creation reads the team, on by the time its statement starts: the statement
    // waits (before its snapshot) for a table it writes, while the endpoint is switched on.
    await database.db
      .update(webhookEndpoints)
      .set({ isActive: false })
      .where(eq(webhookEndpoints.id, endpoint.id));
    const { record, chargedInStatement } = await whileBlocked(
      sql`lock table ${mailOutbox} in access exclusive mode`,
      () => create(live, 'switched@once.test'),
      async () => {
        await database.db
          .update(webhookEndpoints)
          .set({ isActive: true })
          .where(eq(webhookEndpoints.id, endpoint.id));
      },
    );
    const deliveries = await database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpoint.id));
    expect(deliveries.map((delivery) => delivery.body.includes(record.publicId))).toEqual([true]);
    const queued = await jobsOf(database, QUEUES.webhookDeliver);
    expect(queued.map((job) => job.data?.deliveryId)).toContain(deliveries[0]?.id);
    expect(await casesOf('switched@once.test')).toHaveLength(1);
    expect(chargedInStatement).toBe(false);
  });

  it("refuses when a second endpoint was switched on after the team was read: the deliveries' jobs it queued first roll back, and the long way queues one for each", async () => {
    const endpoint = (path: string) =>
      createEndpoint(
        database.db,
        live,
        { url: `https://receiver.example.com/${path}`, events: ['case.created'] },
        { clock, allowPrivateNetworks: false },
      );
    const first = await endpoint('first');
    const second = await endpoint('second');
    await database.db
      .update(webhookEndpoints)
      .set({ isActive: false })
      .where(eq(webhookEndpoints.id, second.id));
    const { record, chargedInStatement } = await whileBlocked(
      sql`lock table ${mailOutbox} in access exclusive mode`,
      () => create(live, 'second@once.test'),
      async () => {
        await database.db
          .update(webhookEndpoints)
          .set({ isActive: true })
          .where(eq(webhookEndpoints.id, second.id));
      },
    );
    expect(chargedInStatement).toBe(false);
    const deliveries = await database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.teamId, live.teamId));
    expect(deliveries.map((delivery) => delivery.endpointId).sort()).toEqual([first.id, second.id].sort());
    expect(deliveries.every((delivery) => delivery.body.includes(record.publicId))).toBe(true);
    // Exactly one job per delivery, and none for the refused statement's planned ids.
    const delivered = new Set(deliveries.map((delivery) => delivery.id));
    const queued = (await jobsOf(database, QUEUES.webhookDeliver)).map(
      (job) => job.data?.deliveryId as string,
    );
    expect(queued.filter((id) => delivered.has(id)).sort()).toEqual([...delivered].sort());
  });

  it('an endpoint switched off after the team was read gets no delivery; the job queued first for it finds none and does nothing', async () => {
    const endpoint = await createEndpoint(
      database.db,
      live,
      { url: 'https://receiver.example.com/gone', events: ['case.created'] },
      { clock, allowPrivateNetworks: false },
    );
    await create(live, 'remembered@once.test'); // the team is remembered with its endpoint
    const jobsBefore = new Set((await jobsOf(database, QUEUES.webhookDeliver)).map((job) => job.id));
    await database.db
      .update(webhookEndpoints)
      .set({ isActive: false })
      .where(eq(webhookEndpoints.id, endpoint.id));
    const { chargedInStatement } = await create(live, 'switched-off@once.test');
    expect(chargedInStatement).toBe(true);
    const deliveries = await database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpoint.id));
    expect(deliveries).toHaveLength(1); // the first case's only
    const planned = (await jobsOf(database, QUEUES.webhookDeliver)).filter((job) => !jobsBefore.has(job.id));
    expect(planned).toHaveLength(1);
    const plannedId = planned[0]?.data?.deliveryId as string;
    expect(deliveries.map((delivery) => delivery.id)).not.toContain(plannedId);
    const unwritten = await attemptDeliveries(
      {
        db: database.db,
        clock,
        jobs: inProcess.jobs,
        retrySchedule: [1],
        timeoutMs: 1000,
        allowPrivateNetworks: false,
      },
      [plannedId],
    );
    expect(unwritten.size).toBe(0);
  });

  it('an endpoint the service disabled after the team was read holds its delivery, with no job for it', async () => {
    const endpoint = await createEndpoint(
      database.db,
      live,
      { url: 'https://receiver.example.com/disabled', events: ['case.created'] },
      { clock, allowPrivateNetworks: false },
    );
    await create(live, 'before-disabled@once.test'); // the team is remembered with its endpoint
    await database.db
      .update(webhookEndpoints)
      .set({ isActive: false, disabledAt: now })
      .where(eq(webhookEndpoints.id, endpoint.id));
    const { record, chargedInStatement } = await create(live, 'after-disabled@once.test');
    expect(chargedInStatement).toBe(true);
    const held = (
      await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id))
    ).find((delivery) => delivery.body.includes(record.publicId));
    expect(held?.status).toBe('pending');
    const queued = (await jobsOf(database, QUEUES.webhookDeliver)).map((job) => job.data?.deliveryId);
    expect(queued).not.toContain(held?.id);
  });

  it('compares the billing anchor to the millisecond a date holds (one set in SQL has microseconds)', async () => {
    await database.db.execute(
      sql`update ${teams} set billing_anchor = '2026-11-01 08:00:00.123456+00' where ${teams.id} = ${live.teamId}`,
    );
    const { chargedInStatement } = await create(live, 'micro@once.test');
    expect(chargedInStatement).toBe(true);
    expect(await emailUsage(live.teamId)).toEqual([
      { periodStart: new Date('2026-11-01T08:00:00.123Z'), included: 1, topup: 0 },
    ]);
  });

  it('remembers the team a few seconds, and the statement refuses a brand changed since: the mails carry the new one', async () => {
    // An allowance that lasts: only the brand can refuse these.
    await database.db.update(teams).set({ planCode: 'enterprise' }).where(eq(teams.id, live.teamId));
    expect((await create(live, 'before@once.test')).chargedInStatement).toBe(true);
    expect((await create(live, 'remembered@once.test')).chargedInStatement).toBe(true);
    await database.db.update(teams).set({ displayName: 'Renamed Co' }).where(eq(teams.id, live.teamId));
    const { chargedInStatement } = await create(live, 'after@once.test');
    expect(chargedInStatement).toBe(false);
    const [mail] = await database.db.select().from(mailOutbox).where(eq(mailOutbox.to, 'after@once.test'));
    expect(mail?.text).toContain('Renamed Co');
    expect(await casesOf('after@once.test')).toHaveLength(1);
    // Read again after the refusal: the next one goes in one statement, with the new brand.
    expect((await create(live, 'next@once.test')).chargedInStatement).toBe(true);
  });

  it('in test mode charges nothing and takes no lock', async () => {
    const test = { teamId: live.teamId, livemode: false };
    let created: Awaited<ReturnType<typeof create>> | undefined;
    await database.db.transaction(async (tx) => {
      await tx.execute(teamLock(live.teamId));
      created = await create(test, 'test-mode@once.test');
    });
    expect(created?.record.livemode).toBe(false);
    expect(created?.chargedInStatement).toBe(true);
    expect(await emailUsage(live.teamId)).toEqual([]);
  });
});

describe('a batch in one statement', () => {
  it('writes a batch the allowance covers in one statement, in order; one it no longer covers, nowhere', async () => {
    const batch = await Promise.all(['b1@once.test', 'b2@once.test'].map((email) => prepared(live, email)));
    const records = await createCasesAtOnce(database.db, live, batch, deps());
    expect(records?.map((record) => record.subjectEmail)).toEqual(['b1@once.test', 'b2@once.test']);
    expect(await emailUsage(live.teamId)).toEqual([
      { periodStart: billingPeriodAt(now, now).start, included: ALLOWANCE, topup: 0 },
    ]);
    // The team as remembered still shows the allowance unspent: the statement refuses under the
    // lock, and nothing of the batch is written (the long way then prices it item by item).
    const late = await Promise.all(['b3@once.test', 'b4@once.test'].map((email) => prepared(live, email)));
    expect(await createCasesAtOnce(database.db, live, late, deps())).toBeNull();
    expect(await casesOf('b3@once.test')).toEqual([]);
    expect((await emailUsage(live.teamId))[0]?.included).toBe(ALLOWANCE);
  });
});
