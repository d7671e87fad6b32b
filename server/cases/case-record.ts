import type { caseSteps, cases } from '@/db/schema';
import type { DataScope } from '@/server/platform/data-scope';

export type { CaseStatus } from '@/db/schema';

export type CaseRow = typeof cases.$inferSelect;
export type CaseStepRow = typeof caseSteps.$inferSelect;

/** A case with its verification steps: what every reader of a case works with. */
export interface CaseRecord extends CaseRow {
  steps: CaseStepRow[];
}

/** The team and mode a case belongs to: its events go to that mode's endpoints. */
export function caseScope(record: { teamId: string; livemode: boolean }): DataScope {
  return { teamId: record.teamId, livemode: record.livemode };
}
