import { and, eq, exists, gt, lt, sql } from 'drizzle-orm';
import type { Queryable, Tx } from '@/db/client';
import type { VerificationMethod } from '@/db/schema';
import { caseSteps, cases } from '@/db/schema';
import { caseEventData, caseExpiredData, type ExpiryReason } from '@/server/cases/case-event-data';
import { type CaseRecord, type CaseStatus, caseScope, effectiveStatus } from '@/server/cases/case-record';
import { lockCaseForUpdate } from '@/server/cases/case-repository';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { recordEvent } from '@/server/platform/outbox/record-events';
import { ATTEMPT_LIMITS, type FailureReason, type GuessedMethod } from './methods/registry';

/**
 * The case state machine: the one place where a case's steps and status change after creation.
 *
 *   open ──(every requested step verified)──▶ closed   + case.closed
 *   open ──(a step fails)───────────────────▶ failed   + case.failed (with failure_reason)
 *   open ──(canceled, or expired early)──────▶ expired + case.expired (with reason)
 *   each step that passes                    ─▶         verification.step_completed (+ method)
 *
 * closed, failed and expired cases (an open case past `expires_at` included) never change here.
 * Every transition locks the case row (SELECT … FOR UPDATE) and records its events in the same
 * transaction, so two steps completing at once serialise: neither is lost and the case closes once.
 */

export type TransitionResult =
  | { changed: true; record: CaseRecord }
  | { changed: false; record: CaseRecord | null; why: 'no_case' | 'not_open' | 'step_not_pending' };

/** An open case whose deadline has not passed: the only kind any step may still change. */
export function isActionable(record: { status: CaseStatus; expiresAt: Date }, now: Date): boolean {
  return effectiveStatus(record, now) === 'open';
}

/**
 * The name an ID check read on the document, kept beside the subject's name (never replacing a
 * name the team gave), whatever the check then decides; erased by redaction. Under the case's
 * lock (lockCaseForUpdate), as every change of a case.
 */
export async function recordDocumentName(tx: Tx, caseId: string, name: string, now: Date): Promise<void> {
  await tx.update(cases).set({ documentName: name, updatedAt: now }).where(eq(cases.id, caseId));
}

/**
 * Marks `methods` verified (government_id and selfie pass together, hence a list). Steps already
 * verified are left as they are, so a repeated completion (a double click, a webhook retried by
 * the provider) changes nothing and emits nothing. `subjectName` is set on a case given none (the
 * name the ID check read).
 */
export async function completeSteps(
  tx: Tx,
  jobs: JobProducer,
  caseId: string,
  methods: VerificationMethod[],
  now: Date,
  extra: { subjectName?: string } = {},
): Promise<TransitionResult> {
  const record = await lockCaseForUpdate(tx, caseId);
  if (!record) return { changed: false, record: null, why: 'no_case' };
  if (!isActionable(record, now)) return { changed: false, record, why: 'not_open' };
  const pending = methods.filter((m) => record.steps.find((s) => s.method === m)?.state === 'pending');
  if (pending.length === 0) return { changed: false, record, why: 'step_not_pending' };

  if (extra.subjectName) {
    await tx
      .update(cases)
      .set({ subjectName: extra.subjectName, updatedAt: now })
      .where(eq(cases.id, caseId));
    record.subjectName = extra.subjectName;
  }
  for (const method of pending) {
    await tx
      .update(caseSteps)
      .set({ state: 'verified', verifiedAt: now, updatedAt: now })
      .where(and(eq(caseSteps.caseId, caseId), eq(caseSteps.method, method)));
    const step = record.steps.find((s) => s.method === method);
    if (step) Object.assign(step, { state: 'verified', verifiedAt: now, updatedAt: now });
    await recordEvent(tx, jobs, {
      scope: caseScope(record),
      type: 'verification.step_completed',
      data: { ...caseEventData(record), method },
      caseId,
      now,
    });
  }

  if (record.steps.every((s) => s.state === 'verified')) {
    await tx.update(cases).set({ status: 'closed', updatedAt: now }).where(eq(cases.id, caseId));
    record.status = 'closed';
    await recordEvent(tx, jobs, {
      scope: caseScope(record),
      type: 'case.closed',
      data: caseEventData(record),
      caseId,
      now,
    });
  }
  return { changed: true, record };
}

/** Ends the case as `failed` because `method` failed; `case.failed` carries the reason. */
export async function failCase(
  tx: Tx,
  jobs: JobProducer,
  caseId: string,
  method: VerificationMethod,
  reason: FailureReason,
  now: Date,
): Promise<TransitionResult> {
  const record = await lockCaseForUpdate(tx, caseId);
  if (!record) return { changed: false, record: null, why: 'no_case' };
  if (!isActionable(record, now)) return { changed: false, record, why: 'not_open' };
  const step = record.steps.find((s) => s.method === method);
  if (step?.state !== 'pending') return { changed: false, record, why: 'step_not_pending' };

  await tx
    .update(caseSteps)
    .set({ state: 'failed', failedAt: now, updatedAt: now })
    .where(and(eq(caseSteps.caseId, caseId), eq(caseSteps.method, method)));
  Object.assign(step, { state: 'failed', failedAt: now, updatedAt: now });
  await tx
    .update(cases)
    .set({ status: 'failed', failureReason: reason, updatedAt: now })
    .where(eq(cases.id, caseId));
  record.status = 'failed';
  record.failureReason = reason;
  await recordEvent(tx, jobs, {
    scope: caseScope(record),
    type: 'case.failed',
    data: caseEventData(record),
    caseId,
    now,
  });
  return { changed: true, record };
}

/**
 * Ends an open case as `expired` now and records `case.expired` with the reason: `timeout` reads
 * like a case whose time ran out (its deadline moves to now; the expiry sweep does the same for
 * cases whose deadline passed, in batches), `canceled` is the team calling it off (the case keeps
 * its deadline and gains `canceled_at`). Either way every link of the case stops working: each
 * step checks that its case is still open.
 */
export async function expireCase(
  tx: Tx,
  jobs: JobProducer,
  caseId: string,
  now: Date,
  reason: ExpiryReason,
): Promise<TransitionResult> {
  const record = await lockCaseForUpdate(tx, caseId);
  if (!record) return { changed: false, record: null, why: 'no_case' };
  if (!isActionable(record, now)) return { changed: false, record, why: 'not_open' };
  const change =
    reason === 'canceled'
      ? { status: 'expired' as const, canceledAt: now, updatedAt: now }
      : { status: 'expired' as const, expiresAt: now, updatedAt: now };
  await tx.update(cases).set(change).where(eq(cases.id, caseId));
  Object.assign(record, change);
  await recordEvent(tx, jobs, {
    scope: caseScope(record),
    type: 'case.expired',
    data: caseExpiredData(record, reason),
    caseId,
    now,
  });
  return { changed: true, record };
}

/**
 * Spends one attempt of a guessable step (custom answer, SMS code) BEFORE the guess is checked.
 * One atomic UPDATE … RETURNING that refuses once the limit is reached, so however many guesses
 * arrive at once, at most `limit` of them are ever compared. Returns the attempt's number (1-based)
 * or null when no attempt is left, the step is not pending, or the case no longer takes input.
 * A correct guess keeps its attempt counted: the counter is "attempts used", and only a wrong
 * guess that uses the last one fails the case.
 */
export async function spendAttempt(
  db: Queryable,
  caseId: string,
  method: GuessedMethod,
  now: Date,
): Promise<number | null> {
  const limit = ATTEMPT_LIMITS[method];
  const rows = await db
    .update(caseSteps)
    .set({ failedAttempts: sql`${caseSteps.failedAttempts} + 1`, updatedAt: now })
    .where(
      and(
        eq(caseSteps.caseId, caseId),
        eq(caseSteps.method, method),
        eq(caseSteps.state, 'pending'),
        lt(caseSteps.failedAttempts, limit),
        exists(
          db
            .select({ one: sql`1` })
            .from(cases)
            .where(and(eq(cases.id, caseId), eq(cases.status, 'open'), gt(cases.expiresAt, now))),
        ),
      ),
    )
    .returning({ attempts: caseSteps.failedAttempts });
  return rows[0]?.attempts ?? null;
}

/** Gives back an attempt that was spent on a correct guess, so the counter shows only wrong ones. */
export async function refundAttempt(
  db: Queryable,
  caseId: string,
  method: VerificationMethod,
): Promise<void> {
  await db
    .update(caseSteps)
    .set({ failedAttempts: sql`greatest(${caseSteps.failedAttempts} - 1, 0)` })
    .where(and(eq(caseSteps.caseId, caseId), eq(caseSteps.method, method)));
}
