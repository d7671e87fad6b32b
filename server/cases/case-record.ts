import { and, eq, inArray } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { caseSteps, cases } from '@/db/schema';

export type CaseStatus = 'open' | 'closed' | 'failed' | 'expired';

export type CaseRow = typeof cases.$inferSelect;
export type CaseStepRow = typeof caseSteps.$inferSelect;

/** A case with its verification steps: what every reader of a case works with. */
export interface CaseRecord extends Omit<CaseRow, 'status'> {
  status: CaseStatus;
  steps: CaseStepRow[];
}

export async function attachSteps(db: Queryable, rows: CaseRow[]): Promise<CaseRecord[]> {
  if (rows.length === 0) return [];
  const steps = await db
    .select()
    .from(caseSteps)
    .where(
      inArray(
        caseSteps.caseId,
        rows.map((r) => r.id),
      ),
    );
  return rows.map((row) => ({
    ...row,
    status: row.status as CaseStatus,
    steps: steps.filter((s) => s.caseId === row.id),
  }));
}

/** One case of one team; another team's case is indistinguishable from a missing one. */
export async function findTeamCase(
  db: Queryable,
  teamId: string,
  caseId: string,
): Promise<CaseRecord | null> {
  const rows = await db
    .select()
    .from(cases)
    .where(and(eq(cases.teamId, teamId), eq(cases.id, caseId)))
    .limit(1);
  const [record] = await attachSteps(db, rows);
  return record ?? null;
}
