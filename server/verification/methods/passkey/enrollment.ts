import type {
  PublicKeyCredentialCreationOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import type { Db, Queryable } from '@/db/client';
import { cases, passkeys } from '@/db/schema';
import { type AuditActor, recordAudit } from '@/server/audit/record-audit';
import { type CaseRecord, caseScope } from '@/server/cases/case-record';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { recordEvent } from '@/server/platform/outbox/record-events';
import {
  type CeremonyResult,
  MAX_PASSKEYS_PER_SUBJECT,
  type PasskeyRow,
  type RelyingParty,
  registrationOptions,
  savePasskey,
} from './ceremonies';
import { ceremonyCase } from './step';

/**
 * What a closed case that offered a passkey (`offer_passkey`) shows its subject: the offer; that a
 * passkey is saved (this case saved one); nothing more once they declined, or when the case did not
 * offer one, did not close, was redacted, or its subject already holds as many as they may.
 */
export type PasskeyOffer = 'offer' | 'saved' | null;

/** Who saves a passkey: the subject, on the case's page (no address kept: it is theirs). */
export const SUBJECT_ACTOR: AuditActor = {
  userId: null,
  email: 'The subject (verification page)',
  ipAddress: null,
  userAgent: null,
};

export async function passkeyOffer(db: Queryable, record: CaseRecord): Promise<PasskeyOffer> {
  if (!record.offerPasskey || record.status !== 'closed' || record.redactedAt) return null;
  const subject = ceremonyCase(record);
  const [held] = await db
    .select({
      all: count(),
      here: sql<number>`count(*) filter (where ${passkeys.enrollingCaseId} = ${record.id})`.mapWith(Number),
    })
    .from(passkeys)
    .where(
      and(
        eq(passkeys.teamId, subject.teamId),
        eq(passkeys.livemode, subject.livemode),
        eq(passkeys.subjectEmail, subject.subjectEmail),
      ),
    );
  if ((held?.here ?? 0) > 0) return 'saved';
  if (record.passkeyOfferDeclinedAt || (held?.all ?? 0) >= MAX_PASSKEYS_PER_SUBJECT) return null;
  return 'offer';
}

/** Options for the browser's prompt to save a passkey, while the case offers one. */
export async function enrollmentOptions(
  db: Queryable,
  record: CaseRecord,
  party: RelyingParty,
  now: Date,
): Promise<CeremonyResult<PublicKeyCredentialCreationOptionsJSON> | { ok: false; why: 'not_offered' }> {
  if ((await passkeyOffer(db, record)) !== 'offer') return { ok: false, why: 'not_offered' };
  return registrationOptions(db, ceremonyCase(record), party, () => now);
}

/**
 * Saves the passkey the subject's browser made, with `passkey.enrolled` and its audit entry, in one
 * transaction. The subject's passkeys are counted under a lock of their own (one subject in one
 * team and mode), so two saves at once cannot take a subject past the limit; a case saves one.
 */
export async function enrollPasskeyOnCase(
  db: Db,
  jobs: JobProducer,
  record: CaseRecord,
  response: RegistrationResponseJSON,
  party: RelyingParty,
  now: Date,
): Promise<CeremonyResult<PasskeyRow> | { ok: false; why: 'not_offered' }> {
  const subject = ceremonyCase(record);
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtextextended(${JSON.stringify(['passkeys', subject.teamId, subject.livemode, subject.subjectEmail])}, 0))`,
    );
    if ((await passkeyOffer(tx, record)) !== 'offer') return { ok: false, why: 'not_offered' as const };
    const saved = await savePasskey(tx, subject, response, party, () => now);
    if (!saved.ok) return saved;
    await recordEvent(tx, jobs, {
      scope: caseScope(record),
      type: 'passkey.enrolled',
      data: { passkey_id: saved.value.id, case_id: record.id, subject_email: record.subjectEmail },
      caseId: record.id,
      now,
    });
    await recordAudit(tx, {
      teamId: record.teamId,
      actor: SUBJECT_ACTOR,
      at: now,
      action: 'passkey.enrolled',
      target: saved.value.id,
      details: { livemode: record.livemode, enrolling_case_id: record.id },
    });
    return saved;
  });
}

/** The subject says no: the case never offers again. False when there was no offer to decline. */
export async function declinePasskeyOffer(db: Queryable, record: CaseRecord, now: Date): Promise<boolean> {
  const declined = await db
    .update(cases)
    .set({ passkeyOfferDeclinedAt: now, updatedAt: now })
    .where(and(eq(cases.id, record.id), eq(cases.offerPasskey, true), isNull(cases.passkeyOfferDeclinedAt)))
    .returning({ id: cases.id });
  return declined.length === 1;
}
