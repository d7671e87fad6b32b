import { and, eq, gt, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { cases } from '@/db/schema';
import type { CaseRecord } from '@/server/cases/case-record';
import {
  type CaseRecordsStatement,
  caseRecordsStatement,
  caseRow,
  readCaseRecords,
} from '@/server/cases/queries';
import type { DataScope } from '@/server/platform/data-scope';
import {
  type Cursor,
  decodeCursor,
  type KeysetPage,
  keysetAfter,
  keysetOrder,
  keysetPage,
  PAGE_SIZE,
} from '@/server/platform/pagination';
import type { ListCasesInput } from './wire';

export { PAGE_SIZE };

export type CasePage = KeysetPage<CaseRecord>;

/** Status as clients see it: an open case past `expires_at` counts as expired at once. */
function statusCondition(status: NonNullable<ListCasesInput['status']>): SQL | undefined {
  const now = sql.placeholder('now');
  switch (status) {
    case 'open':
      return and(eq(cases.status, 'open'), gt(cases.expiresAt, now));
    case 'expired':
      return or(eq(cases.status, 'expired'), and(eq(cases.status, 'open'), lte(cases.expiresAt, now)));
    default:
      return eq(cases.status, status);
  }
}

/** What decides a list statement's text: which filters are set, and which way the cursor walks. */
export interface ListShape {
  status: ListCasesInput['status'];
  subjectEmail: boolean;
  createdAfter: boolean;
  createdBefore: boolean;
  cursor: Cursor['direction'] | null;
}

export function listShape(filters: ListCasesInput, cursor: Cursor | null): ListShape {
  return {
    status: filters.status,
    subjectEmail: filters.subject_email !== undefined,
    createdAfter: filters.created_after !== undefined,
    createdBefore: filters.created_before !== undefined,
    cursor: cursor?.direction ?? null,
  };
}

/**
 * The keyset query behind one page, with its values as placeholders (`listCasesValues` gives
 * them): newest first by (created_at, id), starting after the cursor (server/platform/pagination.ts).
 * Exported so that a test can EXPLAIN exactly what runs.
 */
export function listCasesQuery(db: Queryable, shape: ListShape) {
  const conditions: Array<SQL | undefined> = [
    eq(cases.teamId, sql.placeholder('teamId')),
    eq(cases.livemode, sql.placeholder('livemode')),
  ];
  if (shape.status) conditions.push(statusCondition(shape.status));
  if (shape.subjectEmail) conditions.push(eq(cases.subjectEmail, sql.placeholder('subjectEmail')));
  if (shape.createdAfter) conditions.push(gt(cases.createdAt, sql.placeholder('createdAfter')));
  if (shape.createdBefore) conditions.push(lt(cases.createdAt, sql.placeholder('createdBefore')));

  if (shape.cursor) {
    const position = sql`(${sql.placeholder('cursorCreatedAt')}, ${sql.placeholder('cursorId')})`;
    conditions.push(keysetAfter(cases, shape.cursor, position));
  }
  const order = keysetOrder(cases, shape.cursor);
  return db
    .select()
    .from(cases)
    .where(and(...conditions))
    .orderBy(...order)
    .limit(PAGE_SIZE + 1);
}

/** The values of `listCasesQuery`'s placeholders (dates as ISO strings: they are compared with columns). */
export function listCasesValues(
  scope: DataScope,
  filters: ListCasesInput,
  cursor: Cursor | null,
  now: Date,
): Record<string, unknown> {
  return {
    teamId: scope.teamId,
    livemode: scope.livemode,
    now: now.toISOString(),
    subjectEmail: filters.subject_email,
    createdAfter: filters.created_after && new Date(filters.created_after).toISOString(),
    createdBefore: filters.created_before && new Date(filters.created_before).toISOString(),
    cursorCreatedAt: cursor?.createdAt.toISOString(),
    cursorId: cursor?.id,
  };
}

/** One statement per shape, built when first used (there are at most 120). */
const listStatements = new Map<string, CaseRecordsStatement>();

function listStatement(shape: ListShape): CaseRecordsStatement {
  const key = JSON.stringify(shape);
  let statement = listStatements.get(key);
  if (!statement) {
    // The page and its cases' steps in one query (one round trip): the keyset query is a
    // subquery, and each of its at most 51 cases gets its steps through the steps' primary key.
    statement = caseRecordsStatement(
      `list_cases_${listStatements.size}`,
      (db) => listCasesQuery(db, shape),
      sql.join(keysetOrder(caseRow, shape.cursor), sql`, `),
    );
    listStatements.set(key, statement);
  }
  return statement;
}

/**
 * One page of a team's cases in one mode, newest first, by keyset on (created_at, id): each page is an index
 * range scan whatever the table's size, and rows inserted meanwhile never shift a page.
 */
export async function listCases(
  db: Queryable,
  scope: DataScope,
  filters: ListCasesInput,
  now: Date,
): Promise<CasePage> {
  const cursor = filters.cursor ? decodeCursor(filters.cursor) : null;
  const records = await readCaseRecords(
    db,
    listStatement(listShape(filters, cursor)),
    listCasesValues(scope, filters, cursor, now),
  );
  return keysetPage(records, cursor);
}
