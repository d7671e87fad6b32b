import type { Queryable } from '@/db/client';
import type { CaseRecord } from '@/server/cases/case-record';
import {
  documentNamesOf,
  documentShowsName,
  type ExpectedNames,
  expectedNamesOf,
  namesMatch,
} from '@/server/verification/methods/government-id/names';
import type { DocumentCheck } from '@/server/verification/methods/method-module';
import { METHOD_MODULES } from '@/server/verification/methods/modules';

/** The methods whose passed step stands on a document check (each module's `documentCheck`). */
export const DOCUMENT_CHECKING_METHODS = METHOD_MODULES.flatMap((module) =>
  'documentCheck' in module ? [module.definition.key] : [],
);

/**
 * The document check an ID token asserts (`verified_claims.verification`) for a closed case: its
 * own ID check, or the one the passkey that closed it leads back to, with how the person
 * authenticated just now (`amr`).
 */
export async function assertedCheck(
  db: Queryable,
  record: CaseRecord,
): Promise<(DocumentCheck & { checkedAt: Date }) | null> {
  for (const module of METHOD_MODULES) {
    const check = 'documentCheck' in module ? await module.documentCheck(db, record) : null;
    if (check?.idStep.verifiedAt) return { ...check, checkedAt: check.idStep.verifiedAt };
  }
  return null;
}

/**
 * Whether the checked document showed the names a request asks to assert: the check compared those
 * very names (an identity provider's case that passed), else the names it read compared now as the
 * check would (a passkey's check may have been asked for other names, or for none).
 */
export function checkShowsNames(check: DocumentCheck, asked: ExpectedNames): boolean {
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
