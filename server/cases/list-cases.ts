import { and, eq, gt, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Queryable } from '@/db/client';
import { cases } from '@/db/schema';
import { type CaseRecord, readCaseRecords } from './case-record';
import { type Cursor, decodeCursor, encodeCursor } from './cursor';
import type { ListCasesInput } from './wire';

export const PAGE_SIZE = 50;

export interface CasePage {
  results: CaseRecord[];
  nextCursor: string | null;
  previousCursor: string | null;
}

/** Status as clients see it: an open case past `expires_at` counts as expired at once. */
function statusCondition(status: NonNullable<ListCasesInput['status']>, now: Date): SQL | undefined {
  switch (status) {
    case 'open':
      return and(eq(cases.status, 'open'), gt(cases.expiresAt, now));
    case 'expired':
      return or(eq(cases.status, 'expired'), and(eq(cases.status, 'open'), lte(cases.expiresAt, now)));
    default:
      return eq(cases.status, status);
  }
}

/**
 * The keyset query behind one page: newest first by (created_at, id), starting after the cursor.
 * The cursor condition is a row comparison so that PostgreSQL uses it as an index bound (an
 * `a < x OR (a = x AND b < y)` form is only a filter, and deep pages would scan every row before
 * them). Exported so that a test can EXPLAIN exactly what runs.
 */
export function listCasesQuery(
  db: Queryable,
  teamId: string,
  filters: ListCasesInput,
  cursor: Cursor | null,
  now: Date,
) {
  const conditions: Array<SQL | undefined> = [eq(cases.teamId, teamId)];
  if (filters.status) conditions.push(statusCondition(filters.status, now));
  if (filters.subject_email !== undefined) conditions.push(eq(cases.subjectEmail, filters.subject_email));
  if (filters.created_after) conditions.push(gt(cases.createdAt, new Date(filters.created_after)));
  if (filters.created_before) conditions.push(lt(cases.createdAt, new Date(filters.created_before)));

  const walkingBack = cursor?.direction === 'previous';
  if (cursor) {
    const position = sql`(${sql.param(cursor.createdAt, cases.createdAt)}, ${sql.param(cursor.id, cases.id)})`;
    conditions.push(
      walkingBack
        ? sql`(${cases.createdAt}, ${cases.id}) > ${position}`
        : sql`(${cases.createdAt}, ${cases.id}) < ${position}`,
    );
  }
  // The indexes are `DESC NULLS LAST` (drizzle-kit's default) while a plain `DESC` means NULLS
  // FIRST in PostgreSQL; the order must match the index exactly (backwards for the previous page),
  // or the planner sorts every row of the team instead of reading 51 from the index.
  const order = walkingBack
    ? [sql`${cases.createdAt} asc nulls first`, sql`${cases.id} asc nulls first`]
    : [sql`${cases.createdAt} desc nulls last`, sql`${cases.id} desc nulls last`];
  return db
    .select()
    .from(cases)
    .where(and(...conditions))
    .orderBy(...order)
    .limit(PAGE_SIZE + 1);
}

/**
 * One page of a team's cases, newest first, by keyset on (created_at, id): each page is an index
 * range scan whatever the table's size, and rows inserted meanwhile never shift a page.
 */
export async function listCases(
  db: Queryable,
  teamId: string,
  filters: ListCasesInput,
  now: Date,
): Promise<CasePage> {
  const cursor = filters.cursor ? decodeCursor(filters.cursor) : null;
  const walkingBack = cursor?.direction === 'previous';
  // The page and its cases' steps in one query (one round trip): the keyset query is a subquery,
  // and each of its at most 51 cases gets its steps through the steps' primary key.
  const direction = walkingBack ? sql`asc nulls first` : sql`desc nulls last`;
  const records = await readCaseRecords(
    db,
    listCasesQuery(db, teamId, filters, cursor, now),
    sql`c.created_at ${direction}, c.id ${direction}`,
  );

  const hasMore = records.length > PAGE_SIZE;
  const page = records.slice(0, PAGE_SIZE);
  if (walkingBack) page.reverse();

  const first = page[0];
  const last = page[page.length - 1];
  const at = (row: typeof first, direction: Cursor['direction']) =>
    row ? encodeCursor({ createdAt: row.createdAt, id: row.id, direction }) : null;

  // Walking forward, there is a previous page exactly when we came through a cursor; walking
  // back, there is a next page (the one we came from) and a previous one if rows remained.
  const nextCursor = walkingBack ? at(last, 'next') : hasMore ? at(last, 'next') : null;
  const previousCursor = walkingBack
    ? hasMore
      ? at(first, 'previous')
      : null
    : cursor
      ? at(first, 'previous')
      : null;

  return { results: page, nextCursor, previousCursor };
}
