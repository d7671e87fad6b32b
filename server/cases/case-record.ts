import type { CaseStatus, caseSteps, cases } from '@/db/schema';
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

/**
 * The status a client sees: an open case past its deadline is already expired (the expiry sweep
 * records it later). The one statement of that rule in code; SQL filters say it again where a
 * statement must (list-cases' status filter, the sweep, spendAttempt's guard).
 */
export function effectiveStatus(record: { status: CaseStatus; expiresAt: Date }, now: Date): CaseStatus {
  if (record.status === 'open' && record.expiresAt <= now) return 'expired';
  return record.status;
}

/** A case's page for its subject: under the pages' base (VERIFY_URL_BASE), `/v/<public id>`. */
export function verificationUrl(pageBase: string, publicId: string): string {
  return `${pageBase}/v/${publicId}`;
}
