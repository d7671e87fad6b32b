import { and, eq, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Queryable } from '@/db/client';
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
import { name, names, tableAs } from '@/db/sql-names';
import { allowanceColumns } from '@/server/billing/queries';
import type { DataScope } from '@/server/platform/data-scope';
import { endpointsAwaiting } from '@/server/platform/outbox/delivery-state';
import {
  brandSeen,
  presentationOf,
  TEAM_BRAND_COLUMNS,
  type TeamPresentation,
} from '@/server/teams/presentation';
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
  offer_passkey: boolean;
  passkey_offer_declined_at: string | null;
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
    offerPasskey: row.offer_passkey,
    passkeyOfferDeclinedAt: optionalDate(row.passkey_offer_declined_at),
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

/**
 * What a single creation charged in its own statement (createCaseAtOnce) reads first: how the
 * team appears (its mails carry it), the anchor of its billing periods (the charge's period), what
 * foresees whether its allowance covers the case (its plan's units and recent usage), and
 * the active endpoints `case.created` in this mode is delivered to (then the creation needs a
 * transaction, for the deliveries' jobs). Read without a lock: the statement checks under the
 * lock what it relies on.
 */
const teamForCreation = reusableQuery((db) =>
  db
    .select({
      ...TEAM_BRAND_COLUMNS,
      billingAnchor: teams.billingAnchor,
      ...allowanceColumns(sql`${sql.placeholder('usageSince')}::timestamptz`),
      endpointsAwaiting: sql<string[]>`${endpointsAwaiting({
        teamId: sql`${teams.id}`,
        livemode: sql`${sql.placeholder('livemode')}::boolean`,
        type: sql`'case.created'`,
      })}`,
    })
    .from(teams)
    .where(eq(teams.id, sql.placeholder('teamId')))
    .prepare('team_for_creation'),
);

export interface TeamForCreation {
  presentation: TeamPresentation;
  /** The brand the presentation was drawn from, as a statement compares it (`brandSeen`). */
  brandSeen: string;
  billingAnchor: Date;
  /** What foresees whether the allowance covers a case (`allowanceCovers`). */
  includedUnits: number | null;
  recentUsage: Array<{ method: string; period_start: string; included_used: number }>;
  /** The active endpoints `case.created` would be delivered to (each delivery's job commits with it). */
  endpointsAwaiting: string[];
}

export async function readTeamForCreation(
  db: Queryable,
  scope: DataScope,
  usageSince: string,
): Promise<TeamForCreation> {
  const [team] = await teamForCreation(db).execute({
    teamId: scope.teamId,
    livemode: scope.livemode,
    usageSince,
  });
  if (!team) throw new Error(`team ${scope.teamId} not found`);
  return {
    presentation: presentationOf(team),
    brandSeen: brandSeen(team),
    billingAnchor: team.billingAnchor,
    includedUnits: team.includedUnits,
    recentUsage: team.recentUsage,
    endpointsAwaiting: team.endpointsAwaiting,
  };
}

/** A new case's row as `insertCasesFrom` reads it (JSON: dates as ISO strings). */
export interface NewCaseRow {
  id: string;
  team_id: string;
  livemode: boolean;
  public_id: string;
  subject_email: string;
  subject_name: string | null;
  name_match: NameMatchMode;
  offer_passkey: boolean;
  locale: Locale | null;
  notes: string;
  external_ref: string | null;
  created_at: string;
  expires_at: string;
}

/**
 * New cases, open, as one CTE body of a creation's writes (server/application/cases/
 * write-cases-statement.ts): `rows` is a JSON array of `NewCaseRow`. Returns the whole rows.
 */
export function insertCasesFrom(rows: SQL): SQL {
  return sql`
    insert into ${cases} (${names(
      cases.id,
      cases.teamId,
      cases.livemode,
      cases.publicId,
      cases.status,
      cases.subjectEmail,
      cases.subjectName,
      cases.nameMatch,
      cases.offerPasskey,
      cases.locale,
      cases.notes,
      cases.externalRef,
      cases.createdAt,
      cases.updatedAt,
      cases.expiresAt,
    )})
    select r.id, r.team_id, r.livemode, r.public_id, 'open', r.subject_email, r.subject_name, r.name_match,
           r.offer_passkey, r.locale, r.notes, r.external_ref, r.created_at, r.created_at, r.expires_at
    from jsonb_to_recordset(${rows}) as r(id uuid, team_id uuid, livemode boolean, public_id text, subject_email text,
      subject_name text, name_match text, offer_passkey boolean, locale text, notes text, external_ref text,
      created_at timestamptz, expires_at timestamptz)
    returning *
  `;
}

/** A new case's step as `insertStepsFrom` reads it. */
export interface NewStepRow {
  case_id: string;
  method: VerificationMethod;
  settings: Record<string, unknown>;
  updated_at: string;
}

/** New cases' steps, pending, as one CTE body of a creation's writes. Returns the whole rows. */
export function insertStepsFrom(rows: SQL): SQL {
  return sql`
    insert into ${caseSteps} (${names(caseSteps.caseId, caseSteps.method, caseSteps.settings, caseSteps.updatedAt)})
    select r.case_id, r.method, r.settings, r.updated_at
    from jsonb_to_recordset(${rows}) as r(case_id uuid, method text, settings jsonb, updated_at timestamptz)
    returning *
  `;
}

/**
 * New cases with their steps as `CaseRowWithSteps` (one JSON array), from the CTEs `cases` and
 * `steps` that insertCasesFrom and insertStepsFrom wrote, in no particular order: what a creation
 * returns, without another statement. Each maps through `toCaseRecord` (JSON's timestamps carry an
 * offset as the text ones do).
 */
export function newCaseRecordsFrom(newCases: SQL, newSteps: SQL): SQL {
  return sql`
    coalesce((select json_agg(c) from (
      select n.*, coalesce((select json_agg(s order by s.${name(caseSteps.method)}) from ${newSteps} s
                            where s.${name(caseSteps.caseId)} = n.${name(cases.id)}), '[]') as steps
      from ${newCases} n) c), '[]')
  `;
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
