import { VERIFICATION_METHODS, type VerificationMethod } from '@/db/schema';

export { VERIFICATION_METHODS, type VerificationMethod };

/**
 * The methods a case actually runs: what the client asked for, plus `selfie` whenever
 * `government_id` is asked (the face is matched against the document's photo).
 */
export function expandRequestedMethods(
  requested: Partial<Record<VerificationMethod, boolean>>,
): VerificationMethod[] {
  const chosen = new Set(VERIFICATION_METHODS.filter((m) => requested[m] === true));
  if (chosen.has('government_id')) chosen.add('selfie');
  return VERIFICATION_METHODS.filter((m) => chosen.has(m));
}
