/**
 * The case use cases as every surface runs them, called in-process against a real PostgreSQL:
 * creation (charges, usage, the event, its deliveries and their jobs in one commit), cancel,
 * simulate, redact, the expiry sweep, the list, and a delivery's retry and recovery. The HTTP
 * suites test the same behaviour across the wire; this file is what runs on every supported
 * PostgreSQL (CI's PostgreSQL 15 pass included) without starting the app.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, cases, events, redactedEvidence, webhookDeliveries } from '@/db/schema';
import { cancelCase } from '@/server/application/cases/cancel-case';
import { createCase, prepareCase, teamCaseSources } from '@/server/application/cases/create-case';
import { listCases } from '@/server/application/cases/list-cases';
import { openAuditedCase, openIdempotentCase } from '@/server/application/cases/open-case';
import { redactCase } from '@/server/application/cases/redact-case';
import { simulateCase } from '@/server/application/cases/simulate-case';
import {
  type CreateCaseInput,
  createCaseInput,
  listCasesInput,
  toCaseWire,
} from '@/server/application/cases/wire';
import { OPERATOR_ACTOR } from '@/server/audit/record-audit';
import { readUsage } from '@/server/billing/read-account';
import { effectiveStatus } from '@/server/cases/case-record';
import { expireDueCases } from '@/server/cases/expire-cases';
import { stepEvidence } from '@/server/evidence/evidence-record';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { QUEUES } from '@/server/platform/jobs/catalog';
import { createTeam } from '@/server/teams/manage-teams';
import { insertTemplate } from '@/server/templates/templates';
import { hashingAnswers } from '@/server/verification/methods/custom-question/answer';
import { recoverDeliveries, retryDelivery } from '@/server/webhooks/deliveries';
import { createEndpoint } from '@/server/webhooks/manage-endpoints';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, openCase, startInProcess } from '@/test/support/in-process';
import { jobsOf } from '@/test/support/jobs';

let inProcess: InProcess;
let database: TestDatabase;
let live: DataScope;
let test: DataScope;
let endpointId: string;
let now = new Date('2026-11-20T10:00:00Z');
const clock: Clock = () => new Date(now);

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  const { team } = await createTeam(
    database.db,
    { name: 'Domain Co', adminEmail: 'owner@domain.test', planCode: 'starter' },
    clock,
  );
  live = { teamId: team.id, livemode: true };
  test = { teamId: team.id, livemode: false };
  const endpoint = await createEndpoint(
    database.db,
    live,
    { url: 'https://receiver.example.com/hook', events: ['case.created', 'case.expired'] },
    { clock, allowPrivateNetworks: false },
  );
  endpointId = endpoint.id;
});

afterAll(async () => {
  await inProcess?.close();
});

function newCase(scope: DataScope, body: Partial<CreateCaseInput> = {}) {
  return openCase(
    inProcess,
    scope,
    {
      subject_email: 'subject@domain.test',
      subject_name: 'Sam Subject',
      verification_methods: { email: true, custom_question: true },
      custom_question_text: 'Your first team lead?',
      custom_question_answer: 'Alex',
      ...body,
    },
    clock,
  );
}

async function eventTypes(caseId: string) {
  const rows = await database.db
    .select({ type: events.type, data: events.data })
    .from(events)
    .where(eq(events.caseId, caseId))
    .orderBy(events.createdAt);
  return rows;
}

describe('creating a case', () => {
  it('charges live usage, records case.created with its delivery and job, all in one commit', async () => {
    const before = await readUsage(database.db, live, clock());
    const record = await newCase(live);
    expect(record.status).toBe('open');
    expect(record.steps.map((s) => s.method).sort()).toEqual(['custom_question', 'email']);

    const after = await readUsage(database.db, live, clock());
    expect(after.usage.email.totalUsed).toBe(before.usage.email.totalUsed + 1);
    expect(after.usage.custom_question.totalUsed).toBe(before.usage.custom_question.totalUsed + 1);

    expect((await eventTypes(record.id)).map((e) => e.type)).toEqual(['case.created']);
    const deliveries = await database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpointId));
    const delivery = deliveries.find((d) => d.body.includes(record.publicId));
    expect(delivery?.status).toBe('pending');
    const queued = await jobsOf(database, QUEUES.webhookDeliver);
    expect(queued.map((job) => job.data?.deliveryId)).toContain(delivery?.id);
  });

  it('in test mode charges nothing and fans out to no live endpoint', async () => {
    const before = await readUsage(database.db, live, clock());
    const deliveriesBefore = await database.db.select().from(webhookDeliveries);
    const record = await newCase(test);
    expect(record.livemode).toBe(false);
    expect(await readUsage(database.db, live, clock())).toEqual(before);
    expect(await database.db.select().from(webhookDeliveries)).toHaveLength(deliveriesBefore.length);
  });

  it("an API key's creation is audited with the case, once, and its replay audits nothing", async () => {
    const actor = {
      userId: null,
      email: 'API key vouch_live_…abcd',
      ipAddress: '203.0.113.9',
      userAgent: 'hr-sync',
    };
    const ctx = {
      db: database.db,
      teamId: live.teamId,
      actor,
      clock,
      jobs: inProcess.jobs,
      rateLimiters: inProcess.rateLimiters,
      scope: live,
      caseTtlSeconds: 3600,
      pageBase: 'https://vouch.test',
      defaultLocale: 'en' as const,
      idempotencyKey: 'audit-once-1',
    };
    const input = createCaseInput.parse({
      subject_email: 'audited@domain.test',
      verification_methods: { email: true },
    });
    const first = await openIdempotentCase(ctx, input);
    const entries = async () => database.db.select().from(auditLog).where(eq(auditLog.target, first.body.id));
    expect(
      (await entries()).map((entry) => [entry.action, entry.actorEmail, entry.ipAddress, entry.details]),
    ).toEqual([['case.created', actor.email, actor.ipAddress, { livemode: true }]]);
    const replay = await openIdempotentCase(ctx, input);
    expect(replay.replayed).toBe(true);
    expect(await entries()).toHaveLength(1);
  });

  it('rolls back everything when the commit fails: no case, no charge, no event', async () => {
    const before = await readUsage(database.db, live, clock());
    const prepared = await prepareCase(
      createCaseInput.parse({ subject_email: 'rolled@domain.test', verification_methods: { email: true } }),
      teamCaseSources(database.db, live),
      hashingAnswers((task) => task()),
    );
    await expect(
      database.db.transaction(async (tx) => {
        await createCase(tx, live, prepared, {
          clock,
          jobs: inProcess.jobs,
          caseTtlSeconds: 3600,
          pageBase: 'https://vouch.test',
          defaultLocale: 'en',
        });
        throw new Error('the caller failed after creating');
      }),
    ).rejects.toThrow('the caller failed');
    expect(
      await database.db.select().from(cases).where(eq(cases.subjectEmail, 'rolled@domain.test')),
    ).toEqual([]);
    expect(await readUsage(database.db, live, clock())).toEqual(before);
  });
});

describe("a case's life", () => {
  it('cancel ends an open case once, as expired with reason canceled', async () => {
    const record = await newCase(live);
    const canceled = await cancelCase(database.db, live, record.id, { clock, jobs: inProcess.jobs });
    expect(canceled.status).toBe('expired');
    expect(canceled.canceledAt).toEqual(clock());
    const expired = (await eventTypes(record.id)).filter((e) => e.type === 'case.expired');
    expect(expired).toHaveLength(1);
    expect(expired[0]?.data).toMatchObject({ reason: 'canceled' });
    await expect(
      cancelCase(database.db, live, record.id, { clock, jobs: inProcess.jobs }),
    ).rejects.toMatchObject({
      appCode: 'CASE_NOT_OPEN',
    });
  });

  it('simulate drives a test case to closed, step by step, and refuses a live case', async () => {
    const record = await newCase(test);
    const simulate = (method: 'email' | 'custom_question') =>
      simulateCase(
        database.db,
        test,
        { id: record.id, action: 'complete_step', method },
        {
          clock,
          jobs: inProcess.jobs,
        },
      );
    expect((await simulate('email')).status).toBe('open');
    expect((await simulate('custom_question')).status).toBe('closed');
    expect((await eventTypes(record.id)).map((e) => e.type)).toEqual([
      'case.created',
      'verification.step_completed',
      'verification.step_completed',
      'case.closed',
    ]);
    const liveCase = await newCase(live);
    await expect(
      simulateCase(database.db, live, { id: liveCase.id, action: 'expire' }, { clock, jobs: inProcess.jobs }),
    ).rejects.toMatchObject({ appCode: 'TEST_MODE_ONLY' });
  });

  it('redact erases personal values, keeps results, and is safe to repeat', async () => {
    const record = await newCase(live, { subject_email: 'private@domain.test', notes: 'badge 4411' });
    const redacted = await redactCase(database.db, live, record.id, { clock, jobs: inProcess.jobs });
    expect(redacted.redactedAt).toEqual(clock());
    expect(redacted.subjectEmail).not.toContain('private@domain.test');
    expect(redacted.subjectName).toBeNull();
    expect(redacted.notes).toBe('');
    const again = await redactCase(database.db, live, record.id, { clock, jobs: inProcess.jobs });
    expect(again.redactedAt).toEqual(redacted.redactedAt);
    const stored = JSON.stringify(await eventTypes(record.id));
    expect(stored).not.toContain('private@domain.test');
    expect((await eventTypes(record.id)).filter((e) => e.type === 'case.redacted')).toHaveLength(1);
  });

  it('redact erases the external_ref an identity provider gave: from the case, and from every stored body that quotes it', async () => {
    // Opened as an identity provider's flow opens it (authorizeFlow): its login_hint is the
    // case's external_ref, a personal value (who the person is in the provider's system).
    const record = await openAuditedCase(
      {
        db: database.db,
        teamId: live.teamId,
        actor: OPERATOR_ACTOR,
        clock,
        jobs: inProcess.jobs,
        rateLimiters: inProcess.rateLimiters,
        scope: live,
        caseTtlSeconds: 1800,
        pageBase: 'https://vouch.test',
        defaultLocale: 'en',
      },
      createCaseInput.parse({ subject_email: 'hinted@domain.test', verification_methods: { email: true } }),
      { externalRef: '00uHINTED' },
    );
    expect(record.externalRef).toBe('00uHINTED');
    const caseEvents = database.db.select({ id: events.id }).from(events).where(eq(events.caseId, record.id));
    // No event's data carries external_ref today (an event names the case's ids, subject and
    // status); but redaction promises that no stored body keeps any personal value of the case,
    // so a body quoting it (as the API's case object does) is planted in the event and in its
    // delivery, and must lose it with the rest.
    await database.db
      .update(events)
      .set({ data: sql`(${events.data}::jsonb || '{"external_ref": "00uHINTED"}')::json` })
      .where(eq(events.caseId, record.id));
    await database.db
      .update(webhookDeliveries)
      .set({
        body: sql`replace(${webhookDeliveries.body}, '"status":', '"external_ref":"00uHINTED","status":')`,
      })
      .where(inArray(webhookDeliveries.eventId, caseEvents));
    const bodies = async () =>
      JSON.stringify([
        await database.db.select().from(events).where(eq(events.caseId, record.id)),
        await database.db
          .select()
          .from(webhookDeliveries)
          .where(inArray(webhookDeliveries.eventId, caseEvents)),
      ]);
    expect(await bodies()).toContain('00uHINTED');
    expect(
      await database.db
        .select()
        .from(webhookDeliveries)
        .where(inArray(webhookDeliveries.eventId, caseEvents)),
    ).not.toEqual([]);

    const redacted = await redactCase(database.db, live, record.id, { clock, jobs: inProcess.jobs });
    expect(redacted.externalRef).toBeNull();
    // The row itself, not only the answer: the case as every later read sees it.
    const [row] = await database.db.select().from(cases).where(eq(cases.id, record.id));
    expect(row?.externalRef).toBeNull();
    expect(row?.redactedAt).toEqual(clock());
    expect(await bodies()).not.toContain('00uHINTED');
  });

  it("compares the team's name with the document's, keeps both, and redaction erases the document's", async () => {
    // name_match belongs to the ID check: refused without it, for a case and for a template.
    expect(
      createCaseInput.safeParse({
        subject_email: 'a@domain.test',
        verification_methods: { email: true },
        name_match: 'record',
      }).error?.issues,
    ).toEqual([expect.objectContaining({ path: ['name_match'] })]);
    await insertTemplate(
      database.db,
      test,
      {
        name: 'lenient-id',
        methods: { government_id: true },
        settings: {},
        locale: null,
        nameMatch: 'record',
        offerPasskey: false,
      },
      clock(),
    );
    await expect(
      prepareCase(
        createCaseInput.parse({ subject_email: 'a@domain.test', template: 'lenient-id', notes: '' }),
        teamCaseSources(database.db, test),
        hashingAnswers((task) => task()),
      ).then((prepared) => prepared.input.name_match),
    ).resolves.toBe('record');

    const pass = (id: string, given: string, family: string) =>
      simulateCase(
        database.db,
        test,
        {
          id,
          action: 'complete_step',
          method: 'government_id',
          document: { given_name: given, family_name: family },
        },
        { clock, jobs: inProcess.jobs },
      );
    const enforced = await newCase(test, {
      subject_name: 'Yuki Tanaka',
      verification_methods: { government_id: true },
      custom_question_text: undefined,
      custom_question_answer: undefined,
    });
    expect(await pass(enforced.id, 'Sam', 'Sample')).toMatchObject({
      status: 'failed',
      failureReason: 'name_mismatch',
      subjectName: 'Yuki Tanaka',
      documentName: 'Sam Sample',
    });

    const lenient = await openCase(
      inProcess,
      test,
      { subject_email: 'yuki@domain.test', subject_name: 'Yuki Tanaka', template: 'lenient-id', notes: '' },
      clock,
    );
    const closed = await pass(lenient.id, 'Sam', 'Sample');
    const wire = toCaseWire(closed, { now: clock(), pageBase: 'https://vouch.example.com' });
    expect(wire).toMatchObject({
      status: 'closed',
      subject_name: 'Yuki Tanaka',
      document_name: 'Sam Sample',
      name_match: 'record',
      verification_methods: { government_id: { requested: true, verified: true, name_matched: false } },
    });
    expect(stepEvidence(closed).government_id).toMatchObject({
      document_name: 'Sam Sample',
      name_check: 'mismatched',
      name_match: 'record',
    });

    const redacted = await redactCase(database.db, test, lenient.id, { clock, jobs: inProcess.jobs });
    expect(redacted).toMatchObject({ subjectName: null, documentName: null });
    const [row] = await database.db.select().from(cases).where(eq(cases.id, lenient.id));
    expect(row).toMatchObject({ subjectName: null, documentName: null });
    const [kept] = await database.db
      .select()
      .from(redactedEvidence)
      .where(eq(redactedEvidence.caseId, lenient.id));
    const keptSteps = (kept?.evidence as { steps: Record<string, Record<string, string | null>> } | undefined)
      ?.steps;
    // Kept as its HMAC under the team's evidence key, never as the name.
    expect(keptSteps?.government_id?.document_name).toMatch(/^hmac:[\w-]{43}$/);
    expect(JSON.stringify(kept?.evidence)).not.toContain('Sam Sample');
  });

  it('the sweep expires open cases past their deadline once, and the list reads them as expired', async () => {
    const record = await newCase(live, { subject_email: 'late@domain.test' });
    const listed = () =>
      listCases(database.db, live, listCasesInput.parse({ subject_email: 'late@domain.test' }), clock()).then(
        (page) => page.results.map((c) => effectiveStatus(c, clock())),
      );
    expect(await listed()).toEqual(['open']);
    now = new Date(now.getTime() + 2 * 3600_000);
    // Past its deadline the case reads as expired, before any sweep ran.
    expect(await listed()).toEqual(['expired']);
    const sweeps = await Promise.all([
      expireDueCases({ db: database.db, clock, jobs: inProcess.jobs }, 2),
      expireDueCases({ db: database.db, clock, jobs: inProcess.jobs }, 2),
    ]);
    expect(sweeps.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    const [row] = await database.db.select().from(cases).where(eq(cases.id, record.id));
    expect(row?.status).toBe('expired');
    expect((await eventTypes(record.id)).filter((e) => e.type === 'case.expired')).toHaveLength(1);
  });

  it('lists newest first by keyset, one mode at a time', async () => {
    const page = await listCases(database.db, live, listCasesInput.parse({}), clock());
    const created = page.results.map((c) => c.createdAt.getTime());
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(page.results.every((c) => c.livemode)).toBe(true);
    const testPage = await listCases(database.db, test, listCasesInput.parse({}), clock());
    expect(testPage.results.every((c) => !c.livemode)).toBe(true);
  });
});

describe("a delivery's retry and recovery", () => {
  it('retries only a failed or dead-lettered delivery, and recovers those of the last seven days', async () => {
    const [delivery] = await database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpointId))
      .limit(1);
    if (!delivery) throw new Error('no delivery to retry');
    await expect(
      retryDelivery(database.db, live, delivery.id, { clock, jobs: inProcess.jobs }),
    ).rejects.toMatchObject({ appCode: 'VALIDATION_ERROR' });

    await database.db
      .update(webhookDeliveries)
      .set({ status: 'dead_letter', nextAttemptAt: null })
      .where(eq(webhookDeliveries.endpointId, endpointId));
    const retried = await retryDelivery(database.db, live, delivery.id, { clock, jobs: inProcess.jobs });
    expect(retried.status).toBe('pending');
    expect(
      (await jobsOf(database, QUEUES.webhookDeliver)).filter((j) => j.data?.deliveryId === delivery.id),
    ).toHaveLength(2);

    const stillDead = await database.db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'dead_letter')));
    const since = new Date(now.getTime() - 86_400_000);
    const recovered = await recoverDeliveries(database.db, live, endpointId, since, {
      clock,
      jobs: inProcess.jobs,
    });
    expect(recovered.queued).toBe(stillDead.length);
    await expect(
      recoverDeliveries(database.db, live, endpointId, new Date(now.getTime() - 8 * 86_400_000), {
        clock,
        jobs: inProcess.jobs,
      }),
    ).rejects.toMatchObject({ appCode: 'VALIDATION_ERROR' });
  });
});
