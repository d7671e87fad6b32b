import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { AppError } from './errors';

/**
 * Keyset pagination of a newest-first list by (created_at, id), the one way every list walks
 * (cases, webhook deliveries, events, the audit log): each page is an index range scan however
 * deep it is, and rows written meanwhile never shift a page.
 */

/** Rows per page of every list. */
export const PAGE_SIZE = 50;

/**
 * A position in a list: the (created_at, id) of the row a page starts after, and which way to
 * walk. Opaque to clients (base64url JSON); a tampered or foreign cursor is a 422, never a 500.
 */
export interface Cursor {
  createdAt: Date;
  id: string;
  direction: 'next' | 'previous';
}

const cursorJson = z.object({
  t: z.iso.datetime(),
  i: z.uuid(),
  d: z.enum(['n', 'p']),
});

export function encodeCursor(cursor: Cursor): string {
  const json = JSON.stringify({
    t: cursor.createdAt.toISOString(),
    i: cursor.id,
    d: cursor.direction === 'next' ? 'n' : 'p',
  });
  return Buffer.from(json).toString('base64url');
}

export function decodeCursor(raw: string): Cursor {
  try {
    const parsed = cursorJson.parse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    return {
      createdAt: new Date(parsed.t),
      id: parsed.i,
      direction: parsed.d === 'n' ? 'next' : 'previous',
    };
  } catch {
    throw new AppError(
      'VALIDATION_ERROR',
      'cursor: not a cursor this API issued; follow a page’s next or previous link as given',
    );
  }
}

/** The `cursor` parameter of every list, as the OpenAPI document shows it. */
export const cursorInput = z
  .string()
  .max(200)
  .meta({
    description:
      'Where the page starts: leave it out for the first page, then follow `next` or `previous` as given (they carry the cursor and the filters). Opaque: a cursor the API did not issue is refused.',
    examples: [
      'eyJ0IjoiMjAyNi0wMS0zMVQwOTowMDowMC4wMDBaIiwiaSI6IjBiOWU0YzVlLTNmMWEtNGQyYi05YzhlLTVhN2Y2ZDJlMWIzYyIsImQiOiJuIn0',
    ],
  })
  .optional();

/** The `next` and `previous` links of every list page, for `path` (`/v1/cases/`…). */
export function pageLinks(path: string) {
  const link = (cursor: string) => `https://vouch.example.com${path}?cursor=${cursor}`;
  return {
    next: z
      .string()
      .nullable()
      .meta({
        description:
          'The URL of the next page (older entries), with the same filters; null on the last page.',
        examples: [
          link(
            'eyJ0IjoiMjAyNi0wMS0zMVQwOTowMDowMC4wMDBaIiwiaSI6IjBiOWU0YzVlLTNmMWEtNGQyYi05YzhlLTVhN2Y2ZDJlMWIzYyIsImQiOiJuIn0',
          ),
        ],
      }),
    previous: z
      .string()
      .nullable()
      .meta({
        description:
          'The URL of the previous page (newer entries), with the same filters; null on the first page.',
        examples: [null],
      }),
  };
}

/** The two columns a list is ordered by (or their names in an enclosing query). */
export interface KeysetColumns {
  createdAt: PgColumn | SQL;
  id: PgColumn | SQL;
}

/**
 * Rows after `position` (a `(created_at, id)` pair: values, or placeholders for a statement built
 * once) in the walking direction. A row comparison, so that PostgreSQL uses it as an index bound:
 * the `a < x OR (a = x AND b < y)` form is only a filter, and deep pages would scan every row
 * before them.
 */
export function keysetAfter(columns: KeysetColumns, direction: Cursor['direction'], position: SQL): SQL {
  return direction === 'previous'
    ? sql`(${columns.createdAt}, ${columns.id}) > ${position}`
    : sql`(${columns.createdAt}, ${columns.id}) < ${position}`;
}

/** `(created_at, id)` of a cursor, as values. */
export function cursorPosition(cursor: Cursor): SQL {
  return sql`(${cursor.createdAt.toISOString()}::timestamptz, ${cursor.id}::uuid)`;
}

/**
 * The order a page is read in: newest first, or oldest first when walking back (the page is then
 * reversed). The indexes are `DESC NULLS LAST` (drizzle-kit's default) while a plain `DESC` means
 * NULLS FIRST in PostgreSQL: the order must match the index exactly, or the planner sorts every
 * row of the team instead of reading 51 from the index.
 */
export function keysetOrder(columns: KeysetColumns, direction: Cursor['direction'] | null): SQL[] {
  return direction === 'previous'
    ? [sql`${columns.createdAt} asc nulls first`, sql`${columns.id} asc nulls first`]
    : [sql`${columns.createdAt} desc nulls last`, sql`${columns.id} desc nulls last`];
}

export interface KeysetPage<Row> {
  results: Row[];
  nextCursor: string | null;
  previousCursor: string | null;
}

/**
 * A page from the rows read after `cursor` (up to PAGE_SIZE + 1, in walking order): newest first,
 * with the cursors of the pages around it. Walking forward, there is a previous page exactly when
 * the walk came through a cursor; walking back, there is a next page (the one it came from) and a
 * previous one if rows remained.
 */
export function keysetPage<Row extends { createdAt: Date; id: string }>(
  rows: Row[],
  cursor: Cursor | null,
): KeysetPage<Row> {
  const walkingBack = cursor?.direction === 'previous';
  const hasMore = rows.length > PAGE_SIZE;
  const results = rows.slice(0, PAGE_SIZE);
  if (walkingBack) results.reverse();
  const first = results[0];
  const last = results[results.length - 1];
  const at = (row: Row | undefined, direction: Cursor['direction']) =>
    row ? encodeCursor({ createdAt: row.createdAt, id: row.id, direction }) : null;
  return {
    results,
    nextCursor: walkingBack || hasMore ? at(last, 'next') : null,
    previousCursor: walkingBack
      ? hasMore
        ? at(first, 'previous')
        : null
      : cursor
        ? at(first, 'previous')
        : null,
  };
}

/**
 * The walk every list built with drizzle's query builder shares: the cursor decoded (a foreign one
 * is a 422), the rows after it in walking order (`read` adds `after` to its own conditions and
 * reads `limit` rows in `order`), then the page and its cursors. The cases list builds its
 * statement once instead (server/application/cases/list-cases.ts) and walks the same way.
 */
export async function readKeysetPage<Row extends { createdAt: Date; id: string }>(
  rawCursor: string | undefined,
  columns: KeysetColumns,
  read: (walk: { after: SQL | undefined; order: SQL[]; limit: number }) => Promise<Row[]>,
): Promise<KeysetPage<Row>> {
  const cursor = rawCursor ? decodeCursor(rawCursor) : null;
  const rows = await read({
    after: cursor ? keysetAfter(columns, cursor.direction, cursorPosition(cursor)) : undefined,
    order: keysetOrder(columns, cursor?.direction ?? null),
    limit: PAGE_SIZE + 1,
  });
  return keysetPage(rows, cursor);
}
