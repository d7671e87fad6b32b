import type { Db, Tx } from '@/db/client';
import type { CaseRecord } from '@/server/cases/case-record';
import { lockCaseForUpdate } from '@/server/cases/case-repository';
import { keepVendorCopy } from '@/server/cases/vendor-copies';
import type { JobProducer } from '@/server/platform/jobs/producers';
import type {
  IdentityResult,
  RedirectIdentityProvider,
  UploadedImage,
  UploadIdentityProvider,
} from '@/server/platform/providers/identity/identity-provider';
import { storableText } from '@/server/platform/storable-text';
import {
  completeSteps,
  failCase,
  isActionable,
  recordDocumentName,
  type TransitionResult,
} from '@/server/verification/case-state';
import { selfieMethod } from '@/server/verification/methods/selfie/definition';
import { mergeStepSettings, settingString, stepOf } from '@/server/verification/step-settings';
import { governmentIdMethod } from './definition';
import { documentShowsName, expectedNamesOf, namesMatch, type PersonNames } from './names';

/** The case's failure when the document's names are not the ones the case expected. */
const NAME_MISMATCH = governmentIdMethod.otherFailureReasons[0];

/** Largest picture accepted from a phone camera. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

function identityPending(record: CaseRecord, now: Date): boolean {
  return isActionable(record, now) && stepOf(record, 'government_id')?.state === 'pending';
}

/** Which step a rejected part of the check fails, with that step's reason. */
const REJECTED_PART = { document: governmentIdMethod, face: selfieMethod } as const;

/**
 * Applies an ID check's result: a pass verifies the document and the selfie together and takes
 * the name on the document as the subject's name; a rejection fails the case naming which failed.
 * The name is the provider's reading, which the API's check never saw: it is stored as
 * `storableText` makes it (a NUL would fail the step's transaction on every try). The provider's
 * report id is kept on the step (`provider_report_id`) beside its session's.
 */
export async function applyIdentityResult(
  db: Db,
  jobs: JobProducer,
  caseId: string,
  result: IdentityResult,
  now: Date,
): Promise<TransitionResult | null> {
  if (result.outcome === 'pending') return null;
  return db.transaction(async (tx) => {
    const transition =
      result.outcome === 'verified'
        ? await passIdentity(tx, jobs, caseId, result, now)
        : await failCase(
            tx,
            jobs,
            caseId,
            REJECTED_PART[result.part].key,
            REJECTED_PART[result.part].failureReason,
            now,
          );
    // The report that decided the step, for its evidence record (only the deciding one: a later
    // sync of the same session changes nothing).
    if (transition.changed && result.reportId) {
      await mergeStepSettings(
        tx,
        caseId,
        governmentIdMethod.key,
        { provider_report_id: result.reportId },
        now,
      );
    }
    return transition;
  });
}

/**
 * A document the check passed: it verifies the document and the selfie, unless the document does
 * not show the name the case expects, which fails the case with `name_mismatch` (a case whose
 * name_match is `record` closes all the same, the mismatch kept on the step as `name_matched`).
 * Expected are the names an identity provider sent, else the case's subject_name as the team gave
 * it; a case with neither takes the document's name as its subject_name. The document's name is
 * kept as the case's document_name either way (erased by redaction), and the names it shows on
 * the step for an identity provider's case. The simulation of a test case passes through here too.
 */
export async function passIdentity(
  tx: Tx,
  jobs: JobProducer,
  caseId: string,
  read: { name: string | null; names: PersonNames | null },
  now: Date,
): Promise<TransitionResult> {
  const record = await lockCaseForUpdate(tx, caseId);
  const step = record ? stepOf(record, governmentIdMethod.key) : undefined;
  const documentName = read.name ? storableText(read.name) : null;
  if (record && step?.state === 'pending' && isActionable(record, now)) {
    if (documentName) await recordDocumentName(tx, caseId, documentName, now);
    const expected = expectedNamesOf(step.settings);
    const matched = expected
      ? read.names !== null && namesMatch(expected, read.names)
      : record.subjectName !== null
        ? documentShowsName(record.subjectName, read)
        : null;
    // What the step keeps of the comparison, in one write: the names read for an identity
    // provider's case, and how they compared.
    const kept = {
      ...(expected && read.names
        ? {
            document_given_name: storableText(read.names.given),
            document_family_name: storableText(read.names.family),
          }
        : {}),
      ...(matched !== null ? { name_matched: matched } : {}),
    };
    if (Object.keys(kept).length > 0) {
      await mergeStepSettings(tx, caseId, governmentIdMethod.key, kept, now);
    }
    if (matched === false && record.nameMatch === 'enforce') {
      return failCase(tx, jobs, caseId, governmentIdMethod.key, NAME_MISMATCH, now);
    }
  }
  return completeSteps(tx, jobs, caseId, [governmentIdMethod.key, ...governmentIdMethod.passesWith], now, {
    subjectName: record?.subjectName === null && documentName ? documentName : undefined,
  });
}

/** Upload flow: both pictures go to the provider in memory and are dropped afterwards. */
export async function submitIdentityUploads(
  db: Db,
  jobs: JobProducer,
  input: {
    record: CaseRecord;
    document: UploadedImage;
    selfie: UploadedImage;
    provider: UploadIdentityProvider;
    now: Date;
  },
): Promise<IdentityResult | { outcome: 'unavailable' }> {
  if (!identityPending(input.record, input.now)) return { outcome: 'unavailable' };
  const expected = expectedNamesOf(stepOf(input.record, governmentIdMethod.key)?.settings);
  const result = await input.provider.check({
    document: input.document,
    selfie: input.selfie,
    expectedName: expected ? `${expected.given} ${expected.family}` : input.record.subjectName,
  });
  await applyIdentityResult(db, jobs, input.record.id, result, input.now);
  return result;
}

/** Redirect flow, outbound: where to send the subject (the provider's session is kept on the step). */
export async function startIdentitySession(
  db: Db,
  jobs: JobProducer,
  input: { record: CaseRecord; provider: RedirectIdentityProvider; returnUrl: string; now: Date },
): Promise<string | null> {
  const { record, now } = input;
  if (!identityPending(record, now)) return null;
  const session = await input.provider.startSession({
    caseId: record.id,
    publicId: record.publicId,
    returnUrl: input.returnUrl,
    existingSessionId: settingString(record, 'government_id', 'provider_session_id'),
  });
  // The provider keeps what the subject gives it there: kept by the session's id, for redaction.
  await keepVendorCopy(db, jobs, record.id, {
    kind: input.provider.copies.kind,
    vendorId: session.sessionId,
  });
  await mergeStepSettings(db, record.id, 'government_id', { provider_session_id: session.sessionId }, now);
  return session.url;
}

/**
 * Redirect flow, inbound (the subject's return or the provider's webhook): the result is always
 * fetched from the provider for the session stored on the case, never taken from the request.
 */
export async function syncIdentitySession(
  db: Db,
  jobs: JobProducer,
  input: { record: CaseRecord; provider: RedirectIdentityProvider; now: Date },
): Promise<IdentityResult | null> {
  const sessionId = settingString(input.record, 'government_id', 'provider_session_id');
  if (!sessionId || !identityPending(input.record, input.now)) return null;
  const result = await input.provider.fetchResult(sessionId);
  await applyIdentityResult(db, jobs, input.record.id, result, input.now);
  return result;
}
