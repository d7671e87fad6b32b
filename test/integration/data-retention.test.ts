/**
 * Retention (decisions: "Case lifecycle and data protection"): the daily job redacts ended cases
 * older than their team's retention period and deletes events, mails and audit entries past the
 * operator's periods. Driven with a moved clock, never by waiting; several runs at once share the
 * work and redact each case once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog } from '@/db/schema';
import { redactCasesPastRetention } from '@/server/cases/redact-past-retention';
import { type Clock, systemClock } from '@/server/platform/clock';
import { createTeam, updateTeam } from '@/server/teams/manage-teams';
import { applyRetention } from '@/server/workers/data-retention';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { runCli } from '@/test/support/console-client';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { eventually } from '@/test/support/https-receiver';

type Api = ReturnType<typeof apiClient>;
type CaseWire = { id: string; status: string; subject_email: string; redacted_at: string | null };

const DAY_MS = 24 * 60 * 60 * 1000;
const POLICY = { EVENT_RETENTION_DAYS: 30, MAIL_RETENTION_DAYS: 7, AUDIT_RETENTION_DAYS: 365 };

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
  database = await createTestDatabase();
  // Cases live 100 days here, so an open case can be older than a retention period.
  app = await startApp({
    databaseUrl: database.url,
    env: {
      CASE_TTL_SECONDS: String(100 * 86400),
      RATE_LIMIT_WRITE_PER_MINUTE: '100000',
      // An endpoint on this machine that refuses connections: deliveries and failed attempts.
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
  });
  // The redaction runs in this process (driven by the test's clock) and builds cases' URLs.
  process.env.BASE_URL = app.baseUrl;
  const a = await createTeam(database.db, { name: 'Forgets', adminEmail: 'admin@forgets.test' }, systemClock);
  const b = await createTeam(database.db, { name: 'Keeps', adminEmail: 'admin@keeps.test' }, systemClock);
  forgettingTeamId = a.team.id;
  keepingTeamId = b.team.id;
  forgetting = apiClient(app.baseUrl, a.testKey.token);
  keeping = apiClient(app.baseUrl, b.testKey.token);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
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
    expect((await applyRetention(database.db, daysAhead(20), POLICY)).redactedCases).toBe(0);
    expect((await read(forgetting, ended.id)).redacted_at).toBeNull();

    // 31 days on: the ended case goes; the open one (not ended) and the other team's stay.
    const done = await applyRetention(database.db, daysAhead(31), POLICY);
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
    expect((await applyRetention(database.db, daysAhead(31), POLICY)).redactedCases).toBe(0);
  });

  it('runs in batches that several workers share: every due case redacted exactly once', async () => {
    await updateTeam(database.db, forgettingTeamId, { retentionDays: 1 });
    const due = await Promise.all(Array.from({ length: 7 }, () => closedCase(forgetting)));
    const clock = daysAhead(2);
    const [first, second] = await Promise.all([
      redactCasesPastRetention(database.db, clock, 2),
      redactCasesPastRetention(database.db, clock, 2),
    ]);
    // Together they redacted each due case once (SKIP LOCKED: never the same batch twice).
    expect(first + second).toBe(7);
    for (const c of due) expect((await read(forgetting, c.id)).redacted_at).not.toBeNull();
    const ids = due.map((c) => c.id);
    const [row] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from events where type = 'case.redacted' and case_id = any(${ids}::uuid[])`;
    expect(row?.n).toBe(7);
  });
});

describe('operational data', () => {
  it('deletes events (with deliveries and attempts), mails and audit entries past their periods', async () => {
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
    await database.db.insert(auditLog).values({
      teamId: forgettingTeamId,
      actorEmail: 'admin@forgets.test',
      action: 'key.created',
      createdAt: new Date(Date.now() - 400 * DAY_MS),
    });
    const count = async (table: string, where = database.sql`true`) => {
      const [row] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from ${database.sql(table)} where ${where}`;
      return row?.n ?? 0;
    };
    expect(await count('events', database.sql`case_id = ${c.id}`)).toBeGreaterThan(0);
    const audits = await count('audit_log');

    // A week on: mails go, events stay; a month on: events go too.
    const week = await applyRetention(database.db, daysAhead(8), POLICY);
    expect(week.mails).toBeGreaterThan(0);
    expect(await count('dev_mailbox', database.sql`case_id = ${c.id}`)).toBe(0);
    expect(await count('mail_outbox', database.sql`case_id = ${c.id}`)).toBe(0);
    expect(await count('events', database.sql`case_id = ${c.id}`)).toBeGreaterThan(0);
    expect(week.auditEntries).toBe(1);
    expect(await count('audit_log')).toBe(audits - 1);

    const month = await applyRetention(database.db, daysAhead(31), POLICY);
    expect(month.events).toBeGreaterThan(0);
    expect(await count('events', database.sql`team_id = ${keepingTeamId}`)).toBe(0);
    expect(await count('webhook_deliveries', database.sql`team_id = ${keepingTeamId}`)).toBe(0);
    expect(await count('webhook_attempts')).toBe(0);
  });
});
