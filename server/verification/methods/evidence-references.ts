import type { VerificationMethod } from '@/db/schema';
import { emailEvidence } from './email/evidence';
import { type MethodEvidence, OUTCOME_ONLY } from './evidence-reference';
import { governmentIdEvidence } from './government-id/evidence';
import { managerEvidence } from './manager/evidence';
import { smsEvidence } from './sms/evidence';

/**
 * Each method's evidence reference (its folder's `evidence.ts`). The custom question cites its
 * outcome only, never the answer; the selfie is decided with the government ID, whose reference
 * covers both.
 */
export const METHOD_EVIDENCE = {
  email: emailEvidence,
  sms: smsEvidence,
  government_id: governmentIdEvidence,
  selfie: OUTCOME_ONLY,
  custom_question: OUTCOME_ONLY,
  manager: managerEvidence,
} satisfies Record<VerificationMethod, MethodEvidence>;
