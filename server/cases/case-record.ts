import type { caseSteps, cases } from '@/db/schema';

export type { CaseStatus } from '@/db/schema';

export type CaseRow = typeof cases.$inferSelect;
export type CaseStepRow = typeof caseSteps.$inferSelect;

/** A case with its verification steps: what every reader of a case works with. */
export interface CaseRecord extends CaseRow {
  steps: CaseStepRow[];
}
