import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import type { Db, Queryable, Tx } from '@/db/client';
import type { CaseRecord } from '@/server/cases/case-record';
import { findCaseById } from '@/server/cases/case-repository';
import { AppError } from '@/server/platform/errors';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { completeSteps, isActionable, type TransitionResult } from '@/server/verification/case-state';
import { checkGuess, type GuessResult } from '@/server/verification/check-guess';
import { governmentIdMethod } from '@/server/verification/methods/government-id/definition';
import { governmentIdEvidence } from '@/server/verification/methods/government-id/evidence';
import { mergeStepSettings, stepOf } from '@/server/verification/step-settings';
import {
  authenticationOptions,
  type CeremonyCase,
  type CeremonyRefusal,
  type CeremonyResult,
  type PasskeyRow,
  type PasskeySubject,
  provePasskey,
  type RelyingParty,
  subjectPasskeys,
} from './ceremonies';
import { passkeyMethod } from './definition';

/** The ceremony's view of a case: its subject, in its team and mode. */
export function ceremonyCase(record: CaseRecord): CeremonyCase {
  return {
    caseId: record.id,
    teamId: record.teamId,
    livemode: record.livemode,
    subjectEmail: record.subjectEmail,
  };
}

/**
 * A case asking for a passkey needs a subject who holds one in the key's team and mode: refused at
 * creation (PASSKEY_NOT_ENROLLED), so a helpdesk falls back to a full check at once.
 */
export async function refusePasskeyCreation(
  db: Queryable,
  subject: PasskeySubject,
): Promise<AppError | null> {
  const [held] = await subjectPasskeys(db, subject).limit(1);
  return held ? null : new AppError('PASSKEY_NOT_ENROLLED');
}

/**
 * The ID check a passkey leads back to: the enrolling case's own (its government ID step), or, when
 * that case was itself a re-verification, the one its passkey led back to; none when the enrolling
 * case checked no document.
 */
function idCheckBehind(enrolling: CaseRecord | null): Record<string, string | null> {
  const none = {
    id_check_case_id: null,
    id_check_vendor_session_id: null,
    id_check_vendor_report_id: null,
    id_checked_at: null,
  };
  if (!enrolling) return none;
  const idStep = stepOf(enrolling, governmentIdMethod.key);
  if (idStep?.state === 'verified') {
    const reference = governmentIdEvidence.read(enrolling, idStep);
    return {
      id_check_case_id: enrolling.id,
      id_check_vendor_session_id: reference.vendor_session_id ?? null,
      id_check_vendor_report_id: reference.vendor_report_id ?? null,
      id_checked_at: idStep.verifiedAt?.toISOString() ?? null,
    };
  }
  const earlier = stepOf(enrolling, passkeyMethod.key);
  if (earlier?.state !== 'verified') return none;
  const carried = (key: keyof typeof none) => {
    const value = earlier.settings[key];
    return typeof value === 'string' ? value : null;
  };
  return {
    id_check_case_id: carried('id_check_case_id'),
    id_check_vendor_session_id: carried('id_check_vendor_session_id'),
    id_check_vendor_report_id: carried('id_check_vendor_report_id'),
    id_checked_at: carried('id_checked_at'),
  };
}

/**
 * The case whose ID check a proven passkey step leads back to (its `id_check_case_id`), with that
 * check's step, while it is still there (not redacted); null for a step not proven, or a passkey
 * whose enrolling cases checked no document.
 */
export async function idCheckBehindProof(
  db: Queryable,
  record: CaseRecord,
): Promise<{ idCase: CaseRecord; idStep: CaseRecord['steps'][number] } | null> {
  const step = stepOf(record, passkeyMethod.key);
  const caseId = step?.state === 'verified' ? step.settings.id_check_case_id : null;
  if (typeof caseId !== 'string') return null;
  const idCase = await findCaseById(db, caseId);
  const idStep = idCase ? stepOf(idCase, governmentIdMethod.key) : undefined;
  if (!idCase || idCase.redactedAt || idStep?.state !== 'verified') return null;
  return { idCase, idStep };
}

/** What the step records of the passkey that passed it: the evidence record's reference. */
async function proofSettings(db: Queryable, passkey: PasskeyRow): Promise<Record<string, string | null>> {
  return {
    passkey_id: passkey.id,
    enrolling_case_id: passkey.enrollingCaseId,
    ...idCheckBehind(await findCaseById(db, passkey.enrollingCaseId)),
  };
}

/** Whether the case still asks for its passkey (open, the step pending). */
export function passkeyAsked(record: CaseRecord, now: Date): boolean {
  return isActionable(record, now) && stepOf(record, passkeyMethod.key)?.state === 'pending';
}

/** The page's challenge: options for the browser's prompt, while the case asks for the passkey. */
export async function passkeyChallenge(
  db: Queryable,
  record: CaseRecord,
  party: RelyingParty,
  now: Date,
): Promise<CeremonyResult<PublicKeyCredentialRequestOptionsJSON> | { ok: false; why: 'not_asked' }> {
  if (!passkeyAsked(record, now)) return { ok: false, why: 'not_asked' };
  return authenticationOptions(db, ceremonyCase(record), party, () => now);
}

/**
 * The subject's answer to the page's challenge. Every refused answer spends one of the step's
 * attempts (the fifth fails the case with `passkey_failed`) and says why it was refused; a proven
 * passkey completes the step, recording what the evidence record cites, in the completion's
 * transaction.
 */
export async function provePasskeyStep(
  db: Db,
  jobs: JobProducer,
  record: CaseRecord,
  response: AuthenticationResponseJSON,
  party: RelyingParty,
  now: Date,
): Promise<GuessResult & { refused?: CeremonyRefusal }> {
  let refused: CeremonyRefusal | undefined;
  let proof: Record<string, string | null> | null = null;
  const result = await checkGuess(db, jobs, {
    caseId: record.id,
    method: passkeyMethod.key,
    now,
    isCorrect: async () => {
      const proven = await provePasskey(db, ceremonyCase(record), response, party, () => now);
      if (!proven.ok) {
        refused = proven.why;
        return false;
      }
      proof = await proofSettings(db, proven.value);
      return true;
    },
    onCorrect: (tx) => mergeStepSettings(tx, record.id, passkeyMethod.key, proof ?? {}, now),
  });
  return refused ? { ...result, refused } : result;
}

/**
 * Test mode's completion of the step, as if the subject proved the passkey they used last (the
 * case could only be created for a subject holding one): the same record of it as a real proof.
 */
export async function simulatePasskeyProof(
  tx: Tx,
  jobs: JobProducer,
  record: CaseRecord,
  now: Date,
): Promise<TransitionResult> {
  const held = await subjectPasskeys(tx, ceremonyCase(record));
  const latest = held.toSorted(
    (a, b) => (b.lastUsedAt ?? b.createdAt).getTime() - (a.lastUsedAt ?? a.createdAt).getTime(),
  )[0];
  const proof = latest ? await proofSettings(tx, latest) : {};
  const transition = await completeSteps(tx, jobs, record.id, [passkeyMethod.key], now);
  if (transition.changed) {
    await mergeStepSettings(tx, record.id, passkeyMethod.key, proof, now);
    const step = stepOf(transition.record, passkeyMethod.key);
    if (step) Object.assign(step.settings, proof);
  }
  return transition;
}
