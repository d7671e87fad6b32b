import { and, arrayContains, eq, type SQL, sql } from 'drizzle-orm';
import type { Queryable, Tx } from '@/db/client';
import {
  auditLog,
  caseSteps,
  cases,
  devMailbox,
  events,
  idempotencyKeys,
  mailOutbox,
  oidcFlows,
} from '@/db/schema';
import { caseEventData } from '@/server/cases/case-event-data';
import { type CaseRecord, caseScope } from '@/server/cases/case-record';
import { findTeamCaseOrFail, lockCaseForUpdate } from '@/server/cases/case-repository';
import { queueVendorErasure } from '@/server/cases/vendor-copies';
import { keepRedactedEvidence } from '@/server/evidence/redacted-evidence';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { eraseCaseDeliveries } from '@/server/platform/outbox/delivery-state';
import { recordEvent } from '@/server/platform/outbox/record-events';
import { ERASED, redactedEmail } from '@/server/platform/redaction-placeholders';
import { expireCase, isActionable } from '@/server/verification/case-state';
import { MODULES } from '@/server/verification/methods/modules';
import { METHOD_BY_KEY } from '@/server/verification/methods/registry';
import { settingString } from '@/server/verification/step-settings';

/** A personal value of the case and what it becomes where it is quoted. */
interface Erasure {
  value: string;
  replacement: string;
}

/** Every personal value the case holds: the subject's, and those its methods declare in their steps' settings. */
function personalValues(record: CaseRecord): Erasure[] {
  const values: Erasure[] = [{ value: record.subjectEmail, replacement: redactedEmail(record.publicId) }];
  const others = [
    record.subjectName,
    record.documentName,
    record.externalRef,
    ...record.steps.flatMap((step) =>
      METHOD_BY_KEY[step.method].personalSettings.map((key) => settingString(record, step.method, key)),
    ),
  ];
  for (const value of others) if (value) values.push({ value, replacement: ERASED });
  return values;
}

/**
 * `text` (JSON) with every string that is exactly one of the personal values replaced: whole JSON
 * strings only, so a short name never clobbers a longer word, and everything else keeps its bytes
 * (an event's `data` and its deliveries' bodies stay identical to each other).
 */
function withoutPersonalValues(text: SQL, erasures: Erasure[]): SQL {
  return erasures.reduce(
    (current, { value, replacement }) =>
      sql`replace(${current}, ${JSON.stringify(value)}, ${JSON.stringify(replacement)})`,
    text,
  );
}

/**
 * Erases the subject's personal data for good, in one transaction: the case's subject e-mail (to a
 * placeholder), name, notes and external reference; the steps' settings (manager's name and e-mail, phone number, the
 * question, the hashes), every stored event body and delivery body about the case, what receivers
 * answered to those deliveries and the errors they caused, its mails and dev-mailbox entries, the
 * stored idempotent request and answer, audit details that quote a personal value, and the
 * passkeys the case enrolled. The
 * vendors' copies (Stripe's identity session, Twilio's messages) cannot be erased within a
 * transaction: their erasure is queued in it (server/cases/erase-vendor-copies.ts). The case keeps
 * its ids, status and results and gains `redacted_at`; `case.redacted` follows. What its evidence
 * record cites is kept first, personal values as evidence-key HMACs (server/evidence). An open case is
 * canceled first (its `case.expired` is redacted with the rest). A redacted case answers as it is
 * and nothing changes, so redaction is safe to repeat; two at once serialise on the case's row lock.
 */
export async function redactCase(
  db: Queryable,
  scope: DataScope,
  caseId: string,
  deps: { clock: Clock; jobs: JobProducer },
): Promise<CaseRecord> {
  const found = await findTeamCaseOrFail(db, scope, caseId);
  return db.transaction(async (tx) => {
    const record = await lockCaseForUpdate(tx, found.id);
    if (!record) throw new AppError('NOT_FOUND', 'No case with this id.');
    return redactLockedCase(tx, deps.jobs, record, deps.clock());
  });
}

/**
 * The redaction itself, for a case the caller has locked in `tx` (read with lockCaseForUpdate):
 * the API's redaction and the retention job's share it.
 */
export async function redactLockedCase(
  tx: Tx,
  jobs: JobProducer,
  locked: CaseRecord,
  now: Date,
): Promise<CaseRecord> {
  let record = locked;
  if (record.redactedAt) return record;
  if (isActionable(record, now)) {
    const canceled = await expireCase(tx, jobs, record.id, now, 'canceled');
    if (canceled.record) record = canceled.record;
  }
  await keepRedactedEvidence(tx, record);
  await eraseCaseData(tx, record, now);
  const redacted: CaseRecord = {
    ...record,
    subjectEmail: redactedEmail(record.publicId),
    subjectName: null,
    documentName: null,
    notes: '',
    externalRef: null,
    redactedAt: now,
    updatedAt: now,
    steps: record.steps.map((step) => ({ ...step, settings: {} })),
  };
  await queueVendorErasure(tx, jobs, record.id);
  await recordEvent(tx, jobs, {
    scope: caseScope(redacted),
    type: 'case.redacted',
    data: caseEventData(redacted),
    caseId: record.id,
    now,
  });
  return redacted;
}

async function eraseCaseData(tx: Tx, record: CaseRecord, now: Date): Promise<void> {
  const erasures = personalValues(record);
  await tx
    .update(cases)
    .set({
      subjectEmail: redactedEmail(record.publicId),
      subjectName: null,
      documentName: null,
      notes: '',
      externalRef: null,
      redactedAt: now,
      updatedAt: now,
    })
    .where(eq(cases.id, record.id));
  await tx.update(caseSteps).set({ settings: {}, updatedAt: now }).where(eq(caseSteps.caseId, record.id));
  await tx
    .update(events)
    .set({ data: sql`${withoutPersonalValues(sql`${events.data}::text`, erasures)}::json` })
    .where(eq(events.caseId, record.id));
  await eraseCaseDeliveries(tx, record.id, (body) => withoutPersonalValues(body, erasures), ERASED);
  // The request (its HMAC) and the answer of the idempotent creation: a repeat of it within the
  // replay window then answers the case as it now is.
  await tx
    .update(idempotencyKeys)
    .set({ requestHash: null, responseBody: null })
    .where(eq(idempotencyKeys.caseId, record.id));
  // A batch's answer holds other people's cases too: only this person's values leave it, as they
  // leave the events, and its request (the HMAC of every item) is erased.
  await tx
    .update(idempotencyKeys)
    .set({
      requestHash: null,
      responseBody: sql`${withoutPersonalValues(sql`${idempotencyKeys.responseBody}::text`, erasures)}::jsonb`,
    })
    .where(arrayContains(idempotencyKeys.caseIds, [record.id]));
  // What the methods keep of the person beyond the case's rows (the passkeys the case saved: no
  // later case can verify the person by them).
  for (const module of MODULES) await module.redact?.(tx, record);
  // An identity provider's flow forgets what its request said (names, address, login_hint), and a
  // code handed out before is void: the person is no longer there to vouch for.
  await tx
    .update(oidcFlows)
    .set({ request: {}, codeHash: null, codeExpiresAt: null })
    .where(eq(oidcFlows.caseId, record.id));
  await tx.delete(mailOutbox).where(eq(mailOutbox.caseId, record.id));
  await tx.delete(devMailbox).where(eq(devMailbox.caseId, record.id));
  await tx
    .update(auditLog)
    .set({ details: sql`${withoutPersonalValues(sql`${auditLog.details}::text`, erasures)}::jsonb` })
    .where(and(eq(auditLog.teamId, record.teamId), eq(auditLog.target, record.id)));
}
