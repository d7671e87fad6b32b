import type { Queryable } from '@/db/client';
import type { CaseRecord, CaseStepRow } from '@/server/cases/case-record';
import { governmentIdMethod } from '@/server/verification/methods/government-id/definition';
import {
  documentNamesOf,
  documentShowsName,
  type ExpectedNames,
  expectedNamesOf,
  namesMatch,
} from '@/server/verification/methods/government-id/names';
import { idCheckBehindProof } from '@/server/verification/methods/passkey/step';
import { stepOf } from '@/server/verification/step-settings';

/**
 * The document check an ID token asserts (`verified_claims.verification`): the closed case's own
 * ID check, or, for a re-verification by passkey, the check its passkey leads back to, with
 * the authentication methods just used (RFC 8176 `amr`: the passkey is a hardware-bound key,
 * `hwk`, unlocked by the user's verification, `user`).
 */
export interface AssertedCheck {
  /** When the document was checked: the ID token's `verification.time`. */
  checkedAt: Date;
  amr: string[];
  idCase: CaseRecord;
  idStep: CaseStepRow;
}

/** RFC 8176's values for a passkey proven with user verification. */
export const PASSKEY_AMR = ['hwk', 'user'];

export async function assertedCheck(db: Queryable, record: CaseRecord): Promise<AssertedCheck | null> {
  const own = stepOf(record, governmentIdMethod.key);
  if (own?.state === 'verified' && own.verifiedAt) {
    return { checkedAt: own.verifiedAt, amr: [], idCase: record, idStep: own };
  }
  const behind = await idCheckBehindProof(db, record);
  if (!behind?.idStep.verifiedAt) return null;
  return { checkedAt: behind.idStep.verifiedAt, amr: PASSKEY_AMR, ...behind };
}

/**
 * Whether the checked document showed the names a request asks to assert: the check compared those
 * very names (an identity provider's case that passed), else the names it read compared now as the
 * check would (a passkey's check may have been asked for other names, or for none).
 */
export function checkShowsNames(check: AssertedCheck, asked: ExpectedNames): boolean {
  const { idStep, idCase } = check;
  const compared = expectedNamesOf(idStep.settings);
  if (compared && compared.given === asked.given && compared.family === asked.family) {
    return idStep.settings.name_matched === true;
  }
  const read = documentNamesOf(idStep.settings);
  if (read) return namesMatch(asked, read);
  if (!idCase.documentName) return false;
  return documentShowsName(`${asked.given} ${asked.family}`, { name: idCase.documentName, names: null });
}
