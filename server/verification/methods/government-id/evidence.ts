import type { MethodEvidence } from '@/server/verification/methods/evidence-reference';
import { stringSetting } from '@/server/verification/methods/output';

/**
 * The ID vendor's own ids for the check: its session (the redirect flow's) and the report that
 * decided it, by which the vendor's records can be found (until the vendor erases them); the name
 * the document shows (personal: an HMAC once the case is redacted), and how it compared with the
 * name the case expected (`matched`, `mismatched`, or null when the case expected none) under
 * which rule (`name_match`: `enforce` fails a mismatch, `record` lets the case close).
 */
export const governmentIdEvidence: MethodEvidence = {
  read: (record, step) => ({
    vendor_session_id: stringSetting(step.settings, 'provider_session_id'),
    vendor_report_id: stringSetting(step.settings, 'provider_report_id'),
    document_name: record.documentName,
    name_check:
      typeof step.settings?.name_matched === 'boolean'
        ? step.settings.name_matched
          ? 'matched'
          : 'mismatched'
        : null,
    name_match: record.nameMatch,
  }),
  personal: ['document_name'],
};
