/**
 * Retention (decisions: "Case lifecycle and data protection"): the daily job redacts ended cases
 * older than their team's retention period and deletes events, mails and audit entries past the
 * operator's periods. Driven with a moved clock, never by waiting; several runs at once share the
 * work and redact each case once.
 */
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, caseImportRows, caseImports, passkeyChallenges } from '@/db/schema';
import { redactCasesPastRetention } from '@/server/application/cases/redact-past-retention';
import { sealAuditChains, verifyAuditChain } from '@/server/audit/audit-chain';
import { type Clock, systemClock } from '@/server/platform/clock';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { publishedKeys } from '@/server/signing/signing-keys';
import { createTeam, updateTeam } from '@/server/teams/manage-teams';
import { applyRetention } from '@/server/workers/data-retention';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { runCli } from '@/test/support/console-client';
import type { TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';
import { type InProcess, startInProcess } from '@/test/support/in-process';
import { jobsOf } from '@/test/support/jobs';

type Api = ReturnType<typeof apiClient>;
type CaseWire = { id: string; status: string; subject_email: string; redacted_at: string | null };

const DAY_MS = 24 * 60 * 60 * 1000;
const POLICY = { EVENT_RETENTION_DAYS: 30, MAIL_RETENTION_DAYS: 7, AUDIT_RETENTION_DAYS: 365 };

let inProcess: InProcess;
let database: TestDatabase;
let app: RunningApp;
let keeping: Api;
let forgetting: Api;
let forgettingTeamId: string;
let keepingTeamId: string;

/** A clock `days` ahead of now. */
const daysAhead =
  (days: number): Clock =>
  () =>
    new Date(Date.now() + days * DAY_MS);

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  // Cases live 100 days here, so an open case can be older than a retention period.
  app = await startApp({
    databaseUrl: database.url,
    env: {
      CASE_TTL_SECONDS: String(100 * 86400),
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
      // An endpoint on this machine that refuses connections: deliveries and failed attempts.
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // The app's own worker runs the scheduled job with this (the other tests pass POLICY).
      EVENT_RETENTION_DAYS: '3',
    },
  });
  const a = await createTeam(database.db, { name: 'Forgets', adminEmail: 'admin@forgets.test' }, systemClock);
  const b = await createTeam(database.db, { name: 'Keeps', adminEmail: 'admin@keeps.test' }, systemClock);
  forgettingTeamId = a.team.id;
  keepingTeamId = b.team.id;
  forgetting = apiClient(app.baseUrl, a.testKey.token);
  keeping = apiClient(app.baseUrl, b.testKey.token);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await inProcess?.close();
});

let counter = 0;
async function closedCase(client: Api): Promise<CaseWire> {
  counter += 1;
  const created = await client.post<CaseWire>('/v1/cases/', {
    subject_email: `kept${counter}@retention.test`,
    verification_methods: { email: true },
  });
  expect(created.status, created.text).toBe(201);
  const closed = await client.post<CaseWire>(`/v1/cases/${created.body.id}/simulate/`, {
    action: 'complete_step',
    method: 'email',
  });
  expect(closed.body.status).toBe('closed');
  return created.body;
}

async function read(client: Api, id: string): Promise<CaseWire> {
  return (await client.get<CaseWire>(`/v1/cases/${id}/`)).body;
}

describe('case retention', () => {
  it('is set with the CLI, in days or none', async () => {
    const set = await runCli(['teams', 'update', '--team', forgettingTeamId, '--retention-days', '30'], {
      DATABASE_URL: database.url,
      BASE_URL: app.baseUrl,
    });
    expect(set.retention_days).toBe(30);
    await expect(
      runCli(['teams', 'update', '--team', forgettingTeamId, '--retention-days', '0'], {
        DATABASE_URL: database.url,
      }),
    ).rejects.toThrow(/at least 1/);
    const cleared = await runCli(
      ['teams', 'update', '--team', forgettingTeamId, '--retention-days', 'none'],
      {
        DATABASE_URL: database.url,
      },
    );
    expect(cleared.retention_days).toBeNull();
  });

  it('redacts ended cases past the team’s period, and leaves open cases, younger cases and other teams alone', async () => {
    await updateTeam(database.db, forgettingTeamId, { retentionDays: 30 });
    const ended = await closedCase(forgetting);
    const open = (
      await forgetting.post<CaseWire>('/v1/cases/', {
        subject_email: 'still-open@retention.test',
        verification_methods: { email: true },
      })
    ).body;
    const elsewhere = await closedCase(keeping);

    // 20 days on: younger than the period, nothing happens.
    expect(
      (await applyRetention({ db: database.db, clock: daysAhead(20), jobs: inProcess.jobs }, POLICY))
        .redactedCases,
    ).toBe(0);
    expect((await read(forgetting, ended.id)).redacted_at).toBeNull();

    // 31 days on: the ended case goes; the open one (not ended) and the other team's stay.
    const done = await applyRetention(
      { db: database.db, clock: daysAhead(31), jobs: inProcess.jobs },
      POLICY,
    );
    expect(done.redactedCases).toBe(1);
    const redacted = await read(forgetting, ended.id);
    expect(redacted.redacted_at).not.toBeNull();
    expect(redacted.subject_email).toMatch(/^redacted\+.+@redacted\.invalid$/);
    expect(redacted.status).toBe('closed');
    expect((await read(forgetting, open.id)).redacted_at).toBeNull();
    expect((await read(keeping, elsewhere.id)).subject_email).toBe(elsewhere.subject_email);
    const events = await forgetting.get<{ results: Array<{ type: string }> }>(
      `/v1/events/?case_id=${ended.id}&type=case.redacted`,
    );
    expect(events.body.results).toHaveLength(1);

    // Run again: nothing more to do.
    expect(
      (await applyRetention({ db: database.db, clock: daysAhead(31), jobs: inProcess.jobs }, POLICY))
        .redactedCases,
    ).toBe(0);
  });

  it('runs in batches that several workers share: every due case redacted exactly once', async () => {
    await updateTeam(database.db, forgettingTeamId, { retentionDays: 1 });
    const due = await Promise.all(Array.from({ length: 7 }, () => closedCase(forgetting)));
    const clock = daysAhead(2);
    // Each redaction records its case.redacted event; a trigger holds that insert on a lock this
    // test keeps, so the first worker's batch stays claimed (its transaction open) until the second
    // has claimed a batch of its own and reached the same point. A lock that serialized the workers
    // (an advisory lock, or FOR UPDATE without SKIP LOCKED) would keep the second from getting
    // there: only one would ever wait below.
    const HOLD = 424242;
    const holder = await database.sql.reserve();
    await holder`select pg_advisory_lock(${HOLD})`;
    await database.sql.unsafe(`
      create function hold_redaction() returns trigger language plpgsql as $$
      begin
        perform pg_advisory_lock_shared(${HOLD});
        perform pg_advisory_unlock_shared(${HOLD});
        return new;
      end $$;
      create trigger hold_redaction before insert on events
        for each row when (new.type = 'case.redacted') execute function hold_redaction();`);
    let workers: Promise<[number, number]> | undefined;
    try {
      workers = Promise.all([
        redactCasesPastRetention({ db: database.db, clock: clock, jobs: inProcess.jobs }, 2),
        redactCasesPastRetention({ db: database.db, clock: clock, jobs: inProcess.jobs }, 2),
      ]);
      await eventually(async () => {
        const [row] = await database.sql<{ n: number }[]>`
          select count(distinct pid)::int as n from pg_locks
           where locktype = 'advisory' and objid = ${HOLD} and not granted`;
        return row?.n === 2 ? true : undefined;
      });
    } finally {
      await holder`select pg_advisory_unlock(${HOLD})`;
      holder.release();
    }
    const [first, second] = await workers;
    await database.sql.unsafe('drop trigger hold_redaction on events; drop function hold_redaction()');
    // Both worked at once, each on batches of its own, and together they redacted each due case once.
    expect(first).toBeGreaterThanOrEqual(2);
    expect(second).toBeGreaterThanOrEqual(2);
    expect(first + second).toBe(7);
    for (const c of due) expect((await read(forgetting, c.id)).redacted_at).not.toBeNull();
    const ids = due.map((c) => c.id);
    const [row] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from events where type = 'case.redacted' and case_id = any(${`{${ids.join(',')}}`}::uuid[])`;
    expect(row?.n).toBe(7);
  });
});

describe('operational data', () => {
  it('deletes events (with deliveries and attempts), mails, audit entries and console imports past their periods', async () => {
    await updateTeam(database.db, forgettingTeamId, { retentionDays: null });
    const endpoint = await keeping.post('/v1/webhooks/endpoints/', {
      url: 'https://127.0.0.1:9/nobody-listens',
      events: ['case.created', 'case.closed'],
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const c = await closedCase(keeping);
    await eventually(async () => {
      const [attempts] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
         where d.team_id = ${keepingTeamId}`;
      return (attempts?.n ?? 0) > 0 ? true : undefined;
    });
    await eventually(async () => {
      const [mail] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from dev_mailbox where case_id = ${c.id}`;
      return (mail?.n ?? 0) > 0 ? true : undefined;
    });
    // A team whose whole audit chain is past AUDIT_RETENTION_DAYS: one entry, 400 days old, sealed
    // (as the worker does within seconds). Retention deletes the chain's start and keeps its place.
    const { team: ancient } = await createTeam(
      database.db,
      { name: 'Ancient', adminEmail: 'admin@ancient.test' },
      systemClock,
    );
    await database.db.insert(auditLog).values({
      teamId: ancient.id,
      actorEmail: 'admin@ancient.test',
      action: 'key.created',
      createdAt: new Date(Date.now() - 400 * DAY_MS),
    });
    await sealAuditChains(database.db);
    // Console imports: a draft never confirmed (kept a day), and one that finished today (30 days).
    const importOf = (status: 'draft' | 'succeeded') => ({
      teamId: forgettingTeamId,
      status,
      fileName: `${status}.csv`,
      actor: { userId: null, email: 'admin@forgets.test', ipAddress: null, userAgent: null },
      totalRows: 1,
      validRows: 1,
      finishedAt: status === 'succeeded' ? new Date() : null,
    });
    const [, finished] = await database.db
      .insert(caseImports)
      .values([importOf('draft'), importOf('succeeded')])
      .returning();
    await database.db.insert(caseImportRows).values({
      importId: finished?.id ?? '',
      line: 2,
      subjectEmail: 'refused@forgets.test',
      errorCode: 'X',
    });
    // A passkey ceremony the subject's browser began and never finished: its challenge, good for
    // five minutes, goes with the next run.
    await database.db.insert(passkeyChallenges).values({
      challenge: 'never-answered',
      caseId: c.id,
      ceremony: 'authentication',
      expiresAt: new Date(Date.now() + 300_000),
    });
    const count = async (table: string, where = database.sql`true`) => {
      const [row] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from ${database.sql(table)} where ${where}`;
      return row?.n ?? 0;
    };
    // case.created, verification.step_completed, case.closed
    expect(await count('events', database.sql`case_id = ${c.id}`)).toBe(3);
    const audits = await count('audit_log');
    // Every mail has been handed over (a queued one is never purged); what is there now is all of
    // it, every row young today and past its week eight days on.
    await eventually(async () =>
      (await count('mail_outbox', database.sql`status = 'queued'`)) === 0 ? true : undefined,
    );
    const mails = await count('mail_outbox');
    const devMails = await count('dev_mailbox');
    expect(devMails).toBeGreaterThan(0);

    // A week on: mails go, events stay; a month on: events go too. No team here keeps cases for a
    // limited time any more, so nothing is redacted.
    const week = await applyRetention({ db: database.db, clock: daysAhead(8), jobs: inProcess.jobs }, POLICY);
    expect(week).toEqual({
      redactedCases: 0,
      events: 0,
      mails,
      devMailbox: devMails,
      auditEntries: 1,
      caseImports: 1,
      oidcFlowsDeleted: 0,
      oidcFlowRequestsForgotten: 0,
      passkeyChallenges: 1,
    });
    expect(await count('case_import_rows')).toBe(1);
    expect(await count('dev_mailbox')).toBe(0);
    expect(await count('mail_outbox')).toBe(0);
    expect(await count('events', database.sql`case_id = ${c.id}`)).toBe(3);
    expect(await count('audit_log')).toBe(audits - 1);
    const keys = await publishedKeys(database.db, new Date(), POLICY.AUDIT_RETENTION_DAYS);
    expect((await verifyAuditChain(database.db, ancient.id, keys)).broken).toBeNull();

    // Past their 30 days a month on: every event made today (earlier tests here also wrote events
    // dated ahead, which stay).
    const pastMonth = database.sql`created_at < now() + interval '1 day'`;
    const events = await count('events', pastMonth);
    const month = await applyRetention(
      { db: database.db, clock: daysAhead(31), jobs: inProcess.jobs },
      POLICY,
    );
    expect(month).toEqual({
      redactedCases: 0,
      events,
      mails: 0,
      devMailbox: 0,
      auditEntries: 0,
      caseImports: 1,
      oidcFlowsDeleted: 0,
      oidcFlowRequestsForgotten: 0,
      passkeyChallenges: 0,
    });
    expect(await count('case_import_rows')).toBe(0);
    expect(await count('events', pastMonth)).toBe(0);
    expect(await count('webhook_deliveries', database.sql`team_id = ${keepingTeamId}`)).toBe(0);
    expect(await count('webhook_attempts')).toBe(0);
  });
});

describe('the scheduled job', () => {
  it('runs through the app’s own worker, with the operator’s periods', async () => {
    const { team, testKey } = await createTeam(
      database.db,
      { name: 'Scheduled', adminEmail: 'admin@scheduled.test' },
      systemClock,
    );
    await updateTeam(database.db, team.id, { retentionDays: 1 });
    const client = apiClient(app.baseUrl, testKey.token);
    const due = await closedCase(client);
    const young = await closedCase(client);
    const withOldEvents = await closedCase(client);
    // Two days old: past the team's one day. The events of one case are four days old: past the
    // app's EVENT_RETENTION_DAYS of 3; the others' two days are not.
    await database.sql`update cases set created_at = now() - interval '2 days' where id = ${due.id}`;
    await database.sql`
      update events set created_at = now() - interval '4 days' where case_id = ${withOldEvents.id}`;
    await database.sql`
      update events set created_at = now() - interval '2 days' where case_id = ${young.id}`;

    // What pg-boss's cron sends at 03:47, sent now.
    const boss = new PgBoss({ connectionString: database.url, schema: 'pgboss', supervise: false });
    await boss.start();
    let jobId: string | null;
    try {
      jobId = await boss.send(QUEUES.dataRetention, {});
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
    expect(jobId).toEqual(expect.any(String));
    await expect
      .poll(async () => (await jobsOf(database, QUEUES.dataRetention)).find((j) => j.id === jobId)?.state, {
        timeout: 20_000,
      })
      .toBe('completed');

    expect((await read(client, due.id)).redacted_at).not.toBeNull();
    expect((await read(client, young.id)).redacted_at).toBeNull();
    const eventsOf = async (caseId: string) => {
      const [row] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from events where case_id = ${caseId}`;
      return row?.n ?? 0;
    };
    expect(await eventsOf(withOldEvents.id)).toBe(0);
    // case.created, verification.step_completed, case.closed
    expect(await eventsOf(young.id)).toBe(3);
  });
});
