import { and, eq, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Queryable, Tx } from '@/db/client';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import {
  type CaseStatus,
  caseSteps,
  cases,
  type Locale,
  type NameMatchMode,
  type StepState,
  teams,
  type VerificationMethod,
} from '@/db/schema';
import { name, tableAs } from '@/db/sql-names';
import { presentationOf, TEAM_BRAND_COLUMNS, type TeamPresentation } from '@/server/teams/presentation';
import type { CaseRecord } from './case-record';

/**
 * The cases domain's hot statements, each built once per process (`reusableQuery`): on these paths
 * drizzle spent more CPU building a statement than PostgreSQL spent running it. Rows read with raw
 * SQL have one type and one mapper (`toCaseRecord`); table and column names come from the schema.
 */

/** A case row as PostgreSQL returns it to `readCaseRecords` (timestamps arrive as text). */
export interface CaseRowWithSteps {
  id: string;
  team_id: string;
  livemode: boolean;
  public_id: string;
  status: CaseStatus;
  subject_email: string;
  subject_name: string | null;
  document_name: string | null;
  name_match: NameMatchMode;
  locale: Locale | null;
  notes: string;
  external_ref: string | null;
  failure_reason: string | null;
  created_at: string;
  expires_at: string;
  updated_at: string;
  canceled_at: string | null;
  redacted_at: string | null;
  resend_count: number;
  last_resent_at: string | null;
  steps: Array<{
    case_id: string;
    method: VerificationMethod;
    state: StepState;
    failed_attempts: number;
    settings: Record<string, unknown>;
    verified_at: string | null;
    failed_at: string | null;
    updated_at: string;
  }>;
}

function optionalDate(text: string | null): Date | null {
  return text === null ? null : new Date(text);
}

export function toCaseRecord(row: CaseRowWithSteps): CaseRecord {
  return {
    id: row.id,
    teamId: row.team_id,
    livemode: row.livemode,
    publicId: row.public_id,
    status: row.status,
    subjectEmail: row.subject_email,
    subjectName: row.subject_name,
    documentName: row.document_name,
    nameMatch: row.name_match,
    locale: row.locale,
    notes: row.notes,
    externalRef: row.external_ref,
    failureReason: row.failure_reason,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
    updatedAt: new Date(row.updated_at),
    canceledAt: optionalDate(row.canceled_at),
    redactedAt: optionalDate(row.redacted_at),
    resendCount: row.resend_count,
    lastResentAt: optionalDate(row.last_resent_at),
    steps: row.steps.map((step) => ({
      caseId: step.case_id,
      method: step.method,
      state: step.state,
      failedAttempts: step.failed_attempts,
      settings: step.settings,
      verifiedAt: optionalDate(step.verified_at),
      failedAt: optionalDate(step.failed_at),
      updatedAt: new Date(step.updated_at),
    })),
  };
}

/** The case rows `caseRecordsStatement` reads (`c`), for the order its callers pass. */
export const caseRow = alias(cases, 'c');
/** Steps, read per case in a correlated subquery. */
const stepRow = alias(caseSteps, 's');
const teamRow = alias(teams, 't');

/** Each case's steps as one JSON array, in method order (`[]` for none). */
const stepsOfCaseRow = sql`coalesce((select json_agg(s order by ${stepRow.method}) from ${tableAs(caseSteps, stepRow)} where ${stepRow.caseId} = ${caseRow.id}), '[]')`;

/**
 * Cases with their steps, one row per case: each case's steps come as one JSON array, and rows are
 * mapped here. This serves the API's hottest reads (get and list): mapping a joined page (one row
 * per step) through drizzle's generic row mapper cost more CPU than PostgreSQL spent on the query.
 * `source` selects whole `cases` rows (any filter and limit, values as placeholders), read as
 * `caseRow`; `order` orders the result. The statement is built once per process: pass it to
 * `readCaseRecords`.
 */
export function caseRecordsStatement(name: string, source: (db: Queryable) => SQLWrapper, order?: SQL) {
  return reusableQuery((db) =>
    prepareSql<CaseRowWithSteps>(
      db,
      sql`
        select c.*, ${stepsOfCaseRow} as steps
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

export const teamCase = caseRecordsStatement('team_case', (db) =>
  db
    .select()
    .from(cases)
    .where(
      and(
        eq(cases.teamId, sql.placeholder('teamId')),
        eq(cases.livemode, sql.placeholder('livemode')),
        eq(cases.id, sql.placeholder('caseId')),
      ),
    ),
);

export const caseById = caseRecordsStatement('case_by_id', (db) =>
  db
    .select()
    .from(cases)
    .where(eq(cases.id, sql.placeholder('caseId'))),
);

/** The columns of the team's row that say how it appears to subjects (server/teams/presentation.ts). */
export interface TeamBrandRow {
  team_name: string;
  team_display_name: string | null;
  team_default_locale: Locale | null;
  team_brand_color: string | null;
  team_support_line: string | null;
  team_logo_digest: string | null;
}

/**
 * The case behind a verification link, with how the team that asks appears (its name and brand)
 * and its retention period (the page says how long the ID partner keeps the pictures): one round
 * trip.
 */
export const caseByPublicId = reusableQuery((db) =>
  prepareSql<CaseRowWithSteps & TeamBrandRow & { team_retention_days: number | null }>(
    db,
    sql`
      select c.*, ${teamRow.name} as team_name, ${teamRow.retentionDays} as team_retention_days,
             ${teamRow.displayName} as team_display_name, ${teamRow.defaultLocale} as team_default_locale,
             ${teamRow.brandColor} as team_brand_color, ${teamRow.supportLine} as team_support_line,
             ${teamRow.logoDigest} as team_logo_digest,
             ${stepsOfCaseRow} as steps
      from ${tableAs(cases, caseRow)} join ${tableAs(teams, teamRow)} on ${teamRow.id} = ${caseRow.teamId}
      where ${caseRow.publicId} = ${sql.placeholder('publicId')}
    `,
    'case_by_public_id',
  ),
);

/** Locks one case row until the transaction ends (its steps are read by the next statement). */
export const lockCaseRow = reusableQuery((db) =>
  db
    .select({ id: cases.id })
    .from(cases)
    .where(eq(cases.id, sql.placeholder('caseId')))
    .for('update')
    .prepare('lock_case'),
);

/** How the team that asks appears, for a test-mode case's mails (a live case reads it with its charge). */
const teamBrandById = reusableQuery((db) =>
  db
    .select(TEAM_BRAND_COLUMNS)
    .from(teams)
    .where(eq(teams.id, sql.placeholder('teamId')))
    .prepare('team_brand'),
);

export async function readTeamPresentation(db: Queryable, teamId: string): Promise<TeamPresentation> {
  const [team] = await teamBrandById(db).execute({ teamId });
  if (!team) throw new Error(`team ${teamId} not found`);
  return presentationOf(team);
}

export const insertCase = reusableQuery((db) =>
  db
    .insert(cases)
    .values({
      id: sql.placeholder('id'),
      teamId: sql.placeholder('teamId'),
      livemode: sql.placeholder('livemode'),
      publicId: sql.placeholder('publicId'),
      status: 'open',
      subjectEmail: sql.placeholder('subjectEmail'),
      subjectName: sql.placeholder('subjectName'),
      nameMatch: sql.placeholder('nameMatch'),
      locale: sql.placeholder('locale'),
      notes: sql.placeholder('notes'),
      externalRef: sql.placeholder('externalRef'),
      createdAt: sql.placeholder('now'),
      updatedAt: sql.placeholder('now'),
      expiresAt: sql.placeholder('expiresAt'),
    })
    .returning()
    .prepare('insert_case'),
);

/** One insert per number of steps (a case has one to six). */
const stepInserts = new Map<number, ReturnType<typeof buildStepsInsert>>();

function buildStepsInsert(count: number) {
  return reusableQuery((db) =>
    db
      .insert(caseSteps)
      .values(
        Array.from({ length: count }, (_, index) => ({
          caseId: sql.placeholder('caseId'),
          method: sql.placeholder(`method${index}`),
          settings: sql.placeholder(`settings${index}`),
          updatedAt: sql.placeholder('now'),
        })),
      )
      .returning()
      .prepare(`insert_${count}_steps`),
  );
}

export function insertSteps(count: number) {
  let insert = stepInserts.get(count);
  if (!insert) {
    insert = buildStepsInsert(count);
    stepInserts.set(count, insert);
  }
  return insert;
}

/** A new case's row, as insertCases takes it. */
export type NewCaseRow = {
  id: string;
  teamId: string;
  livemode: boolean;
  publicId: string;
  subjectEmail: string;
  subjectName: string | null;
  nameMatch: NameMatchMode;
  locale: Locale | null;
  notes: string;
  externalRef: string | null;
  now: Date;
  expiresAt: Date;
};

/**
 * New cases, open: one through its prepared insert (a single create, the hot path), several in
 * one statement (a batch). Their rows come back in the order given.
 */
export async function insertCases(tx: Tx, rows: readonly NewCaseRow[]) {
  const [only] = rows;
  if (rows.length === 0) return [];
  if (rows.length === 1 && only) return insertCase(tx).execute({ ...only });
  const inserted = await tx
    .insert(cases)
    .values(
      rows.map(({ now, ...row }) => ({ ...row, status: 'open' as const, createdAt: now, updatedAt: now })),
    )
    .returning();
  const byId = new Map(inserted.map((row) => [row.id, row]));
  return rows.map((row) => {
    const found = byId.get(row.id);
    if (!found) throw new Error(`case ${row.id} was not inserted`);
    return found;
  });
}

/** A new case's steps, as insertCaseSteps takes them. */
export interface NewStepRows {
  caseId: string;
  now: Date;
  steps: ReadonlyArray<{ method: VerificationMethod; settings: Record<string, unknown> }>;
}

/**
 * The steps of new cases: one case's through the prepared insert for its number of steps,
 * several cases' in one statement. The steps come back per case, in the order given.
 */
export async function insertCaseSteps(tx: Tx, cases: readonly NewStepRows[]) {
  const [only] = cases;
  if (cases.length === 1 && only) {
    const steps = await insertSteps(only.steps.length)(tx).execute({
      caseId: only.caseId,
      now: only.now,
      ...Object.fromEntries(
        only.steps.flatMap((step, index) => [
          [`method${index}`, step.method],
          [`settings${index}`, step.settings],
        ]),
      ),
    });
    return [steps];
  }
  const rows = cases.flatMap(({ caseId, now, steps }) =>
    steps.map((step) => ({ caseId, method: step.method, settings: step.settings, updatedAt: now })),
  );
  const inserted = rows.length === 0 ? [] : await tx.insert(caseSteps).values(rows).returning();
  const byCase = Map.groupBy(inserted, (step) => step.caseId);
  return cases.map(({ caseId }) => byCase.get(caseId) ?? []);
}

/**
 * Open cases past their deadline, at most `limit`, marked expired in one statement. SKIP LOCKED:
 * a case a sweeper or a verification step holds is left for the next batch, never waited on.
 */
export const expireDueBatch = reusableQuery((db) =>
  prepareSql<{
    id: string;
    team_id: string;
    livemode: boolean;
    public_id: string;
    subject_email: string;
    created_at: string;
  }>(
    db,
    sql`
      with due as (
        select ${cases.id} from ${cases}
         where ${cases.status} = 'open' and ${cases.expiresAt} <= ${sql.placeholder('at')}::timestamptz
         order by ${cases.expiresAt}
         limit ${sql.placeholder('limit')}
         for update skip locked
      )
      update ${tableAs(cases, caseRow)}
         set ${name(cases.status)} = 'expired', ${name(cases.updatedAt)} = ${sql.placeholder('at')}::timestamptz
        from due where ${caseRow.id} = due.${name(cases.id)}
      returning ${caseRow.id}, ${caseRow.teamId}, ${caseRow.livemode}, ${caseRow.publicId}, ${caseRow.subjectEmail},
                ${caseRow.createdAt}
    `,
    'expire_due_cases',
  ),
);
