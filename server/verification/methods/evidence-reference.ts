import type { CaseRecord, CaseStepRow } from '@/server/cases/case-record';

/**
 * A method's evidence reference: what a case's evidence record cites as the ground for its step's
 * outcome (server/evidence). Strings or null only, read from the case and the step as they stand;
 * `personal` names the fields holding a personal value, which a redacted case's record shows only
 * as HMACs under the team's evidence key.
 */
export interface MethodEvidence {
  read: (record: CaseRecord, step: CaseStepRow) => Record<string, string | null>;
  personal: readonly string[];
}

/** The evidence of a step whose outcome is all there is to cite. */
export const OUTCOME_ONLY: MethodEvidence = { read: () => ({}), personal: [] };
