import { and, eq, inArray, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
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

/** A case row as PostgreSQL returns it to `readCaseRecords` (timestamps arrive as text). */
interface CaseRowWithSteps {
  id: string;
  team_id: string;
  public_id: string;
  status: string;
  subject_email: string;
  subject_name: string | null;
  notes: string;
  failure_reason: string | null;
  created_at: string;
  expires_at: string;
  updated_at: string;
  steps: Array<{
    case_id: string;
    method: string;
    state: string;
    failed_attempts: number;
    settings: Record<string, unknown>;
    verified_at: string | null;
    updated_at: string;
  }>;
}

function toCaseRecord(row: CaseRowWithSteps): CaseRecord {
  return {
    id: row.id,
    teamId: row.team_id,
    publicId: row.public_id,
    status: row.status as CaseStatus,
    subjectEmail: row.subject_email,
    subjectName: row.subject_name,
    notes: row.notes,
    failureReason: row.failure_reason,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
    updatedAt: new Date(row.updated_at),
    steps: row.steps.map((step) => ({
      caseId: step.case_id,
      method: step.method,
      state: step.state,
      failedAttempts: step.failed_attempts,
      settings: step.settings,
      verifiedAt: step.verified_at === null ? null : new Date(step.verified_at),
      updatedAt: new Date(step.updated_at),
    })),
  };
}

/**
 * Cases with their steps, one row per case: each case's steps come as one JSON array, and rows are
 * mapped here. This serves the API's hottest reads (get and list): mapping a joined page (one row
 * per step) through drizzle's generic row mapper cost more CPU than PostgreSQL spent on the query.
 * `source` selects whole `cases` rows (any filter and limit, values as placeholders); `order`
 * orders the result. The statement is built once per process: pass it to `readCaseRecords`.
 */
export function caseRecordsStatement(name: string, source: (db: Queryable) => SQLWrapper, order?: SQL) {
  return reusableQuery((db) =>
    prepareSql<CaseRowWithSteps>(
      db,
      sql`
        select c.*,
               coalesce((select json_agg(s order by s.method) from ${caseSteps} s where s.case_id = c.id), '[]') as steps
        from (${source(db)}) c
        ${order ? sql`order by ${order}` : sql``}
      `,
      name,
    ),
  );
}

export type CaseRecordsStatement = ReturnType<typeof caseRecordsStatement>;

export async function readCaseRecords(
  db: Queryable,
  statement: CaseRecordsStatement,
  values: Record<string, unknown>,
): Promise<CaseRecord[]> {
  const rows = await statement(db).execute(values);
  return rows.map(toCaseRecord);
}

const teamCase = caseRecordsStatement('team_case', (db) =>
  db
    .select()
    .from(cases)
    .where(and(eq(cases.teamId, sql.placeholder('teamId')), eq(cases.id, sql.placeholder('caseId')))),
);

/**
 * One case of one team; another team's case is indistinguishable from a missing one. The case and
 * its steps come in one query: this is the hottest read of the API, and each round trip to
 * PostgreSQL costs more than the subquery.
 */
export async function findTeamCase(
  db: Queryable,
  teamId: string,
  caseId: string,
): Promise<CaseRecord | null> {
  const [record] = await readCaseRecords(db, teamCase, { teamId, caseId });
  return record ?? null;
}
