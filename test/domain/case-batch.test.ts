/**
 * Batch creation (decisions: "Batch creation and imports") in-process against a real PostgreSQL:
 * items succeed or fail alone in one transaction, each created case is charged, evented, mailed
 * and audited as a single create's, the allowance's last unit goes to exactly one item, a failure
 * that is not an item's rolls the whole batch back, and an Idempotency-Key covers the batch, its
 * stored answer losing only a redacted person's values.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditLog,
  caseSteps,
  cases,
  events,
  idempotencyKeys,
  mailOutbox,
  teams,
  webhookDeliveries,
} from '@/db/schema';
import { clientWireError } from '@/server/api/error-table';
import { type CaseBatchContext, openCaseBatch } from '@/server/application/cases/open-case-batch';
import { redactCase } from '@/server/application/cases/redact-case';
import type { CaseBatchResult } from '@/server/application/cases/wire';
import { readUsage } from '@/server/billing/read-account';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { createTeam, updateTeam } from '@/server/teams/manage-teams';
import { createEndpoint } from '@/server/webhooks/manage-endpoints';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, startInProcess } from '@/test/support/in-process';

let inProcess: InProcess;
let database: TestDatabase;
const now = new Date('2026-11-20T10:00:00Z');
const clock: Clock = () => new Date(now);

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
});

afterAll(async () => {
  await inProcess?.close();
});

async function newTeam(name: string, planCode?: string): Promise<DataScope> {
  const { team } = await createTeam(
    database.db,
    { name, adminEmail: `owner@${name.toLowerCase()}.test`, ...(planCode ? { planCode } : {}) },
    clock,
  );
  return { teamId: team.id, livemode: true };
}

function context(scope: DataScope, overrides: Partial<CaseBatchContext> = {}): CaseBatchContext {
  return {
    db: database.db,
    teamId: scope.teamId,
    scope,
    actor: { userId: null, email: 'api-key:batch', ipAddress: '127.0.0.1', userAgent: null },
    clock,
    jobs: inProcess.jobs,
    rateLimiters: inProcess.rateLimiters,
    caseTtlSeconds: 3600,
    pageBase: 'https://vouch.test',
    defaultLocale: 'en',
    idempotencyKey: null,
    itemError: (error) => {
      const wired = clientWireError(error);
      return wired && { error: wired.body, status: wired.status };
    },
    ...overrides,
  };
}

const person = (n: number) => ({
  subject_email: `hire-${n}@wave.test`,
  subject_name: `Hire ${n}`,
  verification_methods: { email: true },
});

function createdIds(results: CaseBatchResult[]): string[] {
  return results.flatMap((item) => ('case' in item ? [item.case.id] : []));
}

describe('a batch of cases', () => {
  it('answers each item in order; a bad item is its own 422 and its neighbours are created in full', async () => {
    const scope = await newTeam('Wave');
    await createEndpoint(
      database.db,
      scope,
      { url: 'https://receiver.example.com/hook', events: ['case.created'] },
      { clock, allowPrivateNetworks: false },
    );
    const { body, replayed } = await openCaseBatch(context(scope), {
      cases: [
        person(1),
        { subject_email: 'not-an-address', verification_methods: { email: true } },
        { ...person(3), verification_methods: { email: true, manager: true } },
        person(4),
        {
          ...person(5),
          verification_methods: { email: true, manager: true },
          manager_name: 'Morgan Lead',
          manager_email: 'lead@wave.test',
        },
      ],
    });
    expect(replayed).toBe(false);
    expect(body.results).toHaveLength(5);
    const [first, second, third, fourth, fifth] = body.results;
    expect(first && 'case' in first && first.case.subject_email).toBe('hire-1@wave.test');
    // The same answers a single create gives for these bodies.
    expect(second).toEqual({
      status: 422,
      error: {
        error: 'validation_error',
        code: 'VALIDATION_ERROR',
        detail: expect.stringContaining('subject_email'),
      },
    });
    expect(third).toEqual({
      status: 422,
      error: expect.objectContaining({
        code: 'VALIDATION_ERROR',
        detail: expect.stringContaining('manager_email'),
      }),
    });
    expect(fourth && 'case' in fourth && fourth.case.subject_email).toBe('hire-4@wave.test');
    expect(fifth && 'case' in fifth && fifth.case.verification_methods.manager.manager_email).toBe(
      'lead@wave.test',
    );

    const ids = createdIds(body.results);
    expect(ids).toHaveLength(3);
    const stored = await database.db.select().from(cases).where(eq(cases.teamId, scope.teamId));
    expect(stored.map((row) => row.id).sort()).toEqual([...ids].sort());
    // Each case as if created alone: its event with its delivery, its mail, its audit entry.
    for (const id of ids) {
      const [event] = await database.db.select().from(events).where(eq(events.caseId, id));
      expect(event?.type).toBe('case.created');
      const deliveries = await database.db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.eventId, event?.id ?? ''));
      expect(deliveries).toHaveLength(1);
      // The subject's link mail, and the manager's where the case asks a manager.
      const mails = await database.db.select().from(mailOutbox).where(eq(mailOutbox.caseId, id));
      expect(mails.map((mail) => mail.to).sort()).toEqual(
        id === ids[2]
          ? ['hire-5@wave.test', 'lead@wave.test']
          : [expect.stringMatching(/^hire-[14]@wave\.test$/)],
      );
      const steps = await database.db.select().from(caseSteps).where(eq(caseSteps.caseId, id));
      expect(steps.map((step) => step.method).sort()).toEqual(
        id === ids[2] ? ['email', 'manager'] : ['email'],
      );
      const audit = await database.db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.teamId, scope.teamId), eq(auditLog.target, id)));
      expect(audit.map((entry) => entry.action)).toEqual(['case.created']);
    }
    const usage = await readUsage(database.db, scope, clock());
    expect(usage.usage.email.includedUsed).toBe(3);
    expect(usage.usage.manager.includedUsed).toBe(1);
  });

  it('spends the allowance exactly: the items past the last unit are refused, the others charged once', async () => {
    // The trial plan allows 50 e-mail checks, and the team has no balance to top up from.
    const scope = await newTeam('Trialco');
    const { body } = await openCaseBatch(context(scope), {
      cases: Array.from({ length: 53 }, (_, n) => person(n)),
    });
    expect(createdIds(body.results)).toHaveLength(50);
    expect(body.results.slice(50)).toEqual(
      Array.from({ length: 3 }, () => ({
        status: 422,
        error: expect.objectContaining({ code: 'INSUFFICIENT_ALLOWANCE' }),
      })),
    );
    const usage = await readUsage(database.db, scope, clock());
    expect(usage.usage.email.includedUsed).toBe(50);
    expect(await database.db.select().from(cases).where(eq(cases.teamId, scope.teamId))).toHaveLength(50);
  });

  it('pays past the allowance from the top-up balance in order, each item seeing what the ones before it spent', async () => {
    // 50 e-mail checks in the trial, then 10 cents each from a balance of 25: two more, then none.
    const scope = await newTeam('Topup');
    await updateTeam(database.db, scope.teamId, { topupBalanceCents: 25 });
    const { body } = await openCaseBatch(context(scope), {
      cases: Array.from({ length: 54 }, (_, n) => person(n)),
    });
    expect(createdIds(body.results)).toHaveLength(52);
    expect(body.results.slice(52).map((item) => 'error' in item && item.error.code)).toEqual([
      'INSUFFICIENT_ALLOWANCE',
      'INSUFFICIENT_ALLOWANCE',
    ]);
    const usage = await readUsage(database.db, scope, clock());
    expect(usage.usage.email).toMatchObject({ includedUsed: 50, topupUsed: 2, topupCostCents: 20 });
    const [team] = await database.db.select().from(teams).where(eq(teams.id, scope.teamId));
    expect(team?.topupBalanceCents).toBe(5);
  });

  it('carries each item’s offer_passkey whichever way it is written: at once, the long way, under a key', async () => {
    // true, false, or left out (false) by turns; the results echo it and the rows hold it.
    const offerOf = (n: number) => [true, false, undefined][n % 3];
    const offering = (count: number) =>
      Array.from({ length: count }, (_, n) => ({ ...person(n), offer_passkey: offerOf(n) }));
    const ways: Array<[string, number, Partial<CaseBatchContext>]> = [
      // Within the trial's 50 e-mail checks: one statement.
      ['Offers', 4, {}],
      // Past them: priced item by item, the last item refused.
      ['Longway', 51, {}],
      ['Keyed', 4, { idempotencyKey: 'offers-1' }],
    ];
    for (const [name, count, overrides] of ways) {
      const scope = await newTeam(name);
      const { body } = await openCaseBatch(context(scope, overrides), { cases: offering(count) });
      const created = body.results.flatMap((item) => ('case' in item ? [item.case] : []));
      expect(created, name).toHaveLength(Math.min(count, 50));
      expect(
        created.map((item) => item.offer_passkey),
        name,
      ).toEqual(created.map((_, n) => offerOf(n) === true));
      const stored = await database.db
        .select({ id: cases.id, offerPasskey: cases.offerPasskey })
        .from(cases)
        .where(eq(cases.teamId, scope.teamId));
      const storedOffer = new Map(stored.map((row) => [row.id, row.offerPasskey]));
      expect(
        created.map((item) => storedOffer.get(item.id)),
        name,
      ).toEqual(created.map((item) => item.offer_passkey));
    }
  });

  it('refuses every item of a team whose trial is over, as a single create would', async () => {
    const scope = await newTeam('Expired');
    await updateTeam(database.db, scope.teamId, { trialEndsAt: new Date('2026-11-01T00:00:00Z') });
    const { body } = await openCaseBatch(context(scope), { cases: [person(1), person(2)] });
    expect(body.results.map((item) => 'error' in item && item.error.code)).toEqual([
      'TRIAL_EXPIRED',
      'TRIAL_EXPIRED',
    ]);
    expect(await database.db.select().from(cases).where(eq(cases.teamId, scope.teamId))).toEqual([]);
  });

  it('rolls the whole batch back on a failure that is not an item’s', async () => {
    const scope = await newTeam('Rollback');
    await expect(
      openCaseBatch(
        // Every failure taken as the service's own: the bad third item's fails the request, and
        // the two created before it do not stay.
        context(scope, { itemError: () => null }),
        { cases: [person(1), person(2), { subject_email: 'nobody', verification_methods: { email: true } }] },
      ),
    ).rejects.toThrow(/subject_email|e-mail/);
    expect(await database.db.select().from(cases).where(eq(cases.teamId, scope.teamId))).toEqual([]);
    const usage = await readUsage(database.db, scope, clock());
    expect(Object.values(usage.usage).every((entry) => entry.includedUsed === 0)).toBe(true);
  });

  it('replays under its Idempotency-Key; another body under it is refused', async () => {
    const scope = await newTeam('Replays');
    const input = { cases: [person(1), person(2)] };
    const first = await openCaseBatch(context(scope, { idempotencyKey: 'wave-1' }), input);
    const again = await openCaseBatch(context(scope, { idempotencyKey: 'wave-1' }), input);
    expect(again.replayed).toBe(true);
    // The stored JSON (its keys in jsonb's order: the API's output schema puts them back in the
    // document's order on the wire).
    expect(again.body).toEqual(JSON.parse(JSON.stringify(first.body)));
    expect(await database.db.select().from(cases).where(eq(cases.teamId, scope.teamId))).toHaveLength(2);
    await expect(
      openCaseBatch(context(scope, { idempotencyKey: 'wave-1' }), { cases: [person(3)] }),
    ).rejects.toMatchObject({ appCode: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('a redaction scrubs that person from the stored answer; the other items replay unchanged', async () => {
    const scope = await newTeam('Forgets');
    const input = { cases: [person(1), person(2)] };
    const first = await openCaseBatch(context(scope, { idempotencyKey: 'wave-2' }), input);
    const [redactedId, keptId] = createdIds(first.body.results);
    await redactCase(database.db, scope, redactedId ?? '', { clock, jobs: inProcess.jobs });

    const [record] = await database.db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.teamId, scope.teamId), eq(idempotencyKeys.key, 'wave-2')));
    expect(JSON.stringify(record?.responseBody)).not.toContain('hire-1@wave.test');
    expect(JSON.stringify(record?.responseBody)).not.toContain('Hire 1');
    expect(record?.requestHash).toBeNull();

    const again = await openCaseBatch(context(scope, { idempotencyKey: 'wave-2' }), input);
    expect(again.replayed).toBe(true);
    expect(again.body.results[1]).toEqual(first.body.results[1]);
    expect(createdIds(again.body.results)).toEqual([redactedId, keptId]);
    expect(
      await database.db
        .select()
        .from(cases)
        .where(inArray(cases.id, [redactedId ?? '', keptId ?? ''])),
    ).toHaveLength(2);
  });
});
