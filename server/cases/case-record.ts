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

/**
 * Case rows left-joined with their steps (one row per step), regrouped into records in the order
 * the cases first appear.
 */
export function groupJoinedSteps(rows: Array<{ c: CaseRow; s: CaseStepRow | null }>): CaseRecord[] {
  const records = new Map<string, CaseRecord>();
  for (const { c, s } of rows) {
    let record = records.get(c.id);
    if (!record) {
      record = { ...c, status: c.status as CaseStatus, steps: [] };
      records.set(c.id, record);
    }
    if (s) record.steps.push(s);
  }
  return [...records.values()];
}

/**
 * One case of one team; another team's case is indistinguishable from a missing one. The case and
 * its steps come in one query: this is the hottest read of the API, and each round trip to
 * PostgreSQL costs more than the join.
 */
export async function findTeamCase(
  db: Queryable,
  teamId: string,
  caseId: string,
): Promise<CaseRecord | null> {
  const rows = await db
    .select({ c: cases, s: caseSteps })
    .from(cases)
    .leftJoin(caseSteps, eq(caseSteps.caseId, cases.id))
    .where(and(eq(cases.teamId, teamId), eq(cases.id, caseId)));
  return groupJoinedSteps(rows)[0] ?? null;
}
