import type { MethodEvidence } from '@/server/verification/methods/evidence-reference';
import { stringSetting } from '@/server/verification/methods/output';

/**
 * The ID vendor's own ids for the check: its session (the redirect flow's) and the report that
 * decided it, by which the vendor's records can be found (until the vendor erases them).
 */
export const governmentIdEvidence: MethodEvidence = {
  read: (_record, step) => ({
    vendor_session_id: stringSetting(step.settings, 'provider_session_id'),
    vendor_report_id: stringSetting(step.settings, 'provider_report_id'),
  }),
  personal: [],
};
