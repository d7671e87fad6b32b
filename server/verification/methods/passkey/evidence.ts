import type { MethodEvidence } from '@/server/verification/methods/evidence-reference';
import { stringSetting } from '@/server/verification/methods/output';

/**
 * The passkey proved, the case that saved it, and the ID check that case stands on (its own, or,
 * when it was itself a re-verification, the one its passkey led back to): its case and the ID
 * vendor's session and report ids, so that a re-verification's record leads back to a document.
 */
export const passkeyEvidence: MethodEvidence = {
  read: (_record, step) => ({
    passkey_id: stringSetting(step.settings, 'passkey_id'),
    enrolling_case_id: stringSetting(step.settings, 'enrolling_case_id'),
    id_check_case_id: stringSetting(step.settings, 'id_check_case_id'),
    id_check_vendor_session_id: stringSetting(step.settings, 'id_check_vendor_session_id'),
    id_check_vendor_report_id: stringSetting(step.settings, 'id_check_vendor_report_id'),
    id_checked_at: stringSetting(step.settings, 'id_checked_at'),
  }),
  personal: [],
};
